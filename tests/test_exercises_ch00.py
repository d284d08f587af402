"""The checkers of chapter 00 on answers as data: the reference answers (worked out here from
the exercises' statements) earn full points, blank ones none, and the answers a learner gets
by copying the formula or the cell next to the question get their own explanation."""

from __future__ import annotations

import math

import pytest

from labkit.exercises import answers_of, spec
from labkit.exercises.ch00 import HIGH_RELEASE, LOWER_BOB, RELEASE, swung_pendulum

L, R, M, G = 0.5, 0.05, 1.0, 9.81           # models/pendulum.xml: bob depth, radius, mass; gravity
AMPLITUDE = 1 + RELEASE**2 / 16 + 11 * RELEASE**4 / 3072


def period(inertia: float, torque_per_rad: float) -> float:
    return 2 * math.pi * math.sqrt(inertia / torque_per_rad) * AMPLITUDE


def agm(a: float, b: float) -> float:
    while abs(a - b) > 1e-15:
        a, b = (a + b) / 2, math.sqrt(a * b)
    return a


def exact(inertia: float, torque_per_rad: float, release: float) -> float:
    """A rigid pendulum's period at any amplitude: T0 · 2K(sin(θ0/2))/π = T0 / agm(1, cos(θ0/2))."""
    return 2 * math.pi * math.sqrt(inertia / torque_per_rad) / agm(1.0, math.cos(release / 2))


OWN = 0.4 * M * R**2
TWO_BOBS = (M * L**2 + OWN + M * LOWER_BOB**2 + OWN, M * G * (L + LOWER_BOB))   # I, m·g·L summed


def two_bobs() -> float:
    """Exercise 0.2 by hand, with the exact amplitude law the chapter does not print."""
    return exact(*TWO_BOBS, HIGH_RELEASE)


def grade(number: str, **answers):
    return spec(number).grade(answers_of(number, answers))


def test_0_1_the_state_now_earns_the_point():
    _, data = swung_pendulum()
    hinge = data.joint("swing").qpos[0]
    assert abs(hinge - RELEASE) > 0.1, "the pendulum has moved away from its keyframe"
    assert grade("0.1", tip_height=data.site("tip").xpos[2]).score == 1
    assert grade("0.1", tip_height=-L * math.cos(hinge)).score == 1      # by hand from the state: also right


@pytest.mark.parametrize(("answer", "message"), [
    (-L * math.cos(RELEASE), "where the bob was at the keyframe"),
    (-L, "in its body's frame"),
])
def test_0_1_the_keyframe_or_the_model_is_not_the_state(answer, message):
    graded = grade("0.1", tip_height=answer)
    assert graded.score == 0 and message in graded.text()


def test_0_2_the_timed_swing_earns_full_points():
    graded = grade("0.2", long_period=two_bobs())
    assert graded.passed and graded.score == 2, graded.text()


SMALL = 2 * math.pi * math.sqrt(TWO_BOBS[0] / TWO_BOBS[1])
SERIES = 1 + HIGH_RELEASE**2 / 16 + 11 * HIGH_RELEASE**4 / 3072


@pytest.mark.parametrize(("answer", "message"), [
    (SMALL * SERIES, "checked at 0.5 rad"),              # section 2's formula, plugged in
    (SMALL, "small-angle period"),
    (exact(*TWO_BOBS, RELEASE), "keyframe's 0.5 rad"),
    (exact(M * L**2 + OWN, M * G * L, HIGH_RELEASE), "one-bob pendulum"),
    (two_bobs() / 2, "half a swing"),
])
def test_0_2_the_printed_formula_is_not_the_measurement(answer, message):
    graded = grade("0.2", long_period=answer)
    assert graded.score == 0 and message in graded.text(), graded.text()
    assert f"{two_bobs():.4g}" not in graded.text(), "the answer is never revealed"


@pytest.mark.parametrize("number", ["0.1", "0.2"])
def test_blank_scores_zero(number):
    graded = grade(number)
    assert graded.score == 0 and "you have not defined" in graded.text()


# -- 0.3: the damping is simulated, so its range is declared and no guess earns a point --------

I_HINGE = M * L**2 + 0.4 * M * R**2                 # the bob's inertia about the hinge, kg·m²


def test_0_3_the_reference_damping_earns_full_points():
    graded = grade("0.3", damping=2 * I_HINGE * math.log(2) / 3.0)     # halves the amplitude in 3 s
    assert graded.passed and graded.score == 2, graded.text()


@pytest.mark.parametrize("damping", [0, 0.0, 1e-308, 0.5, 1, 2])
def test_0_3_no_guess_earns_a_point(damping):
    # "not negative" was a weighted requirement: damping = 0 earned 1 of 2 points
    graded = grade("0.3", damping=damping)
    assert graded.score == 0, graded.text()
    assert "amplitude after 3 s is 40–60 %" in graded.text()


@pytest.mark.parametrize(("damping", "advice"), [(0.02, "die out faster"), (0.5, "swing longer")])
def test_0_3_the_hint_points_to_the_experiment_not_to_the_answer(damping, advice):
    text = grade("0.3", damping=damping).text()
    assert advice in text and "record the angle" in text
    assert "b/(2I)" not in text and "I ≈" not in text, "the decay formula would give the answer away"


@pytest.mark.parametrize(("damping", "message"), [(-0.1, "negative damping feeds energy in"),
                                                  (1e308, "critical damping")])
def test_0_3_damping_outside_its_physical_range_is_refused_before_simulating(damping, message):
    graded = grade("0.3", damping=damping)
    assert graded.score == 0 and "`damping` should be at least 0" in graded.text()
    assert message in graded.text()
