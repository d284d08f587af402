"""Every checker under attack: answers that carry no work earn nothing.

A blank copy scores 0 on every exercise, so nothing a student submits without doing the
exercise may score more.  Three families of junk are fed to every registered checker:

- the values a notebook accepts without any work: 0, 1, -1, huge and tiny numbers, True,
  False, empty strings, lists and dicts, the same value in every answer variable, sent
  through ``answers_of`` exactly as a feedback cell sends them;
- what only a forged payload can carry (a notebook that patches the collector or writes
  the report itself): NaN, ±Infinity, wrong types, malformed data, sent to ``Spec.grade``
  directly, as the grader's scorer receives it;
- the unchanged starting values of an exercise (what the chapter hands the learner before
  the task, e.g. the capstone's failing parameters, or a robot that does nothing).

Hypothesis then draws arbitrary JSON for each answer.  Its runs are derandomized, so a
failure reproduces, and scoped (few examples per exercise; answers outside their kinds'
physical ranges are refused before anything is simulated, which keeps most examples cheap).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.exercises import answers_of, chapter_specs, spec
from labkit.exercises.ch09 import START

NUMBERS = [exercise.id for chapter in range(12) for exercise in chapter_specs(chapter)]

NAN, INF = float("nan"), float("inf")

# values a feedback cell accepts and turns into data, carrying no work
ACCEPTED = [0, 1, -1, 0.5, 2, 1e308, -1e308, 1e-308, True, False, "", "0", "<mujoco/>", [], [0], [0, 0],
            [1, 1], [0.0] * 5, [1.0] * 8, [[0, 0], [0, 0]], {}, {"a": 1}, {"a": [0, 0]}]
# values only a forged payload carries: the notebook's conversion refuses them
FORGED = [NAN, INF, -INF, [NAN, 1.0], [INF, INF], {"a": NAN}, {"friction": INF}, None, "NaN", [[1], [1, 2]],
          {"value": 1}, [True, False]]

IDLE = {**START, "finger_kp": 0, "finger_kv": 0, "lift_kp": 0, "lift_kv": 0}
# what the chapter hands the learner before the task, or the simplest way to dodge it
STARTING = {
    # 0.x-6.x: the model's own values, MuJoCo's defaults, what the chapter shows just before, or idling
    "0.2": [{"long_period": 1.4443}, {"long_period": 1.8618}],             # one bob, two bobs, from 0.5 rad
    "0.3": [{"damping": 0.0}],                                              # the pendulum as it is
    "1.3": [{"rho": 1000.0}],                                               # MuJoCo's default density
    "3.5": [{"kp_design": 50, "kv_design": 5}],                             # the arm's own servo class
    "4.1": [{"is_bug": False, "hip_attrs": ""}],                            # the guess, and the hip as it is
    "4.2": [{"actrange": (-30, 30)}, {"actrange": (0, 0)},                  # the degrees shown; no clamp;
            {"actrange": (-0.5235987755982988, 0.5235987755982988)}],       # the joint range, gear forgotten
    "4.3": [{"ctrl_index": lambda model, actuator, name: 0}],               # a constant index
    "4.4": [{"make_controller": lambda: ((lambda m, d: None), (lambda m, d: None))}],   # a controller idling
    "5.1": [{"block_solref": (0.02, 1), "block_solimp": (0.9, 0.95, 0.001, 0.5, 2)}],  # MuJoCo's defaults
    "5.2": [{"block_depth": 0.0003672}, {"block_depth": 0.0001078}],      # the sphere's and section 4's box
    "5.3": [{"solref_critical": (0.02, 1), "solref_bouncy": (0.02, 0.3)}],  # section 3's two contacts
    "5.4": [{"limit_solref": (0.02, 1)}, {"limit_solref": (0.05, 1)}],      # MuJoCo's default; section 7's
    "6.1": [{"masks": dict.fromkeys(("left", "right", "cube"), m)} for m in ((1, 1), (0, 0))],  # all; none
    # 6.3: the liner's values copied; nothing; the right friction at the liner's priority
    "6.3": [{"part_friction": 0.6, "part_priority": 1}, {"part_friction": 0.0, "part_priority": 0},
            {"part_friction": 0.38, "part_priority": 1}],
    # 7.1: the file's masks, and the frame switched off; 7.2: tuning_bounce's own solref, and the
    # damping ratio of e = 0.5 in the standard format, which the floor's solref averages away
    "7.1": [{"masks": {}}, {"masks": {"frame": (0, 0)}},
            {"masks": dict.fromkeys(("frame", "arm", "probe"), (1, 1))}],
    "7.2": [{"bounce_solref": (0.02, 1)}, {"bounce_solref": (1, 1)}, {"bounce_solref": (0.02, 0.2553)}],
    "7.3": [{"slot_walls": [((0, 0, 0.025), (0.0375, 0.015, 0.025))]},        # the hull again: one solid box
            {"slot_walls": [((0.4, 0.4, 0.01), (0.001,) * 3)]}],              # no walls at all
    "8.1": [{"glove": [0] * 7}, {"glove": [255] * 7}, {"glove": [127.5] * 7}],
    # 8.2: the chapter's 5 rad/s for all; the synchronized 0.9 s close of distance/rate alone
    "8.2": [{"gentle_slew": dict.fromkeys(("index_mcp", "index_pip", "middle_mcp", "middle_pip", "thumb_mcp"),
                                          5.0)},
            {"gentle_slew": {"index_mcp": 1.2 / 0.9, "index_pip": 1.2 / 0.9, "middle_mcp": 1.0 / 0.9,
                             "middle_pip": 1.4 / 0.9, "thumb_mcp": 0.8 / 0.9}}],
    "8.3": [{"tolerance": 5e-4, "iterations": 12}, {"tolerance": 0, "iterations": 0}],  # the driver's own
    # 9.2: the starting grip per pad; the largest one allowed; Coulomb's m(g + 6h/T²)/(2μ), §4's elliptic rig
    "9.2": [{"grip_min": 5.0}, {"grip_min": 100}, {"grip_min": 0.2 * (9.81 + 0.72) / (2 * 0.5)}],
    # 10.1: the model's own step, and the table's kv-only Euler limit 2(√(ζ²+1) - ζ)/ω with ζ = 0.5
    "10.1": [{"servo_timestep": 0.002}, {"servo_timestep": 1e-6}, {"servo_timestep": 0.0206011}],
    # 10.2: the finger as it is, the largest armature, and section 2's undamped kp·h²/4 - dof_M0
    "10.2": [{"finger_armature": 0}, {"finger_armature": 1e-3}, {"finger_armature": 2.2250667e-7}],
    "10.3": [{"cgs_gravity": 9.81, "cgs_density": 1000, "cgs_damping": 0.05, "cgs_width": 0.001},   # SI's
             {"cgs_gravity": 1, "cgs_density": 1, "cgs_damping": 1, "cgs_width": 1}],
    # 11.1: nothing excluded, and only the audit's pairs with the root itself; 11.2: the file's
    # timeconst; 11.3: the file's own step, and the feet's timeconst halved (the mix forgotten)
    "11.1": [{"exclude_pairs": []},
             {"exclude_pairs": [["root", "lfemur"], ["root", "rfemur"], ["root", "lowerback"]]}],
    "11.2": [{"hinge_timeconst": 0.02}],
    "11.3": [{"largest_timestep": 0.005}, {"largest_timestep": 0.0075}],
    "9.1": [{"lift_kp": START["lift_kp"], "lift_kv": START["lift_kv"]}, {"lift_kp": 0, "lift_kv": 0}],
    # 9.3: START's solref; 2·timestep at dampratio 1, the shallowest rest at dampratio 1 (§5)
    "9.3": [{"table_solref": list(START["solref"])}, {"table_solref": [0.004, 1]}],
    "9.4": [{"answer": dict(START)}, {"answer": IDLE}, {"answer": {**START, "friction": 1e300}},
            {"answer": {**START, "timestep": 2.0}}, {"answer": {**START, "friction": 0}},
            {"answer": {**IDLE, "friction": 5.0, "cone": "elliptic", "noslip_iterations": 50}},
            {"answer": {}},
            # the lift aimed at the top of its range to cover START's sag: above the shelf
            {"answer": {**START, "lift_target": 0.2}}, {"answer": {**IDLE, "lift_target": 0.2}}],
}


def _score(number: str, data: dict) -> float:
    graded = spec(number).grade(data, hidden=True)
    assert 0 <= graded.score <= spec(number).points
    return graded.score


def _everywhere(number: str, value: object) -> dict:
    return {name: value for name in spec(number).answers}


@pytest.mark.parametrize("number", NUMBERS)
def test_a_blank_copy_scores_zero(number):
    assert _score(number, {}) == 0


@pytest.mark.parametrize("number", NUMBERS)
def test_values_a_notebook_accepts_earn_nothing(number):
    earned = {}
    for value in ACCEPTED:
        score = _score(number, answers_of(number, _everywhere(number, value)))
        if score:
            earned[repr(value)[:40]] = score
    assert not earned, f"exercise {number} gives points for junk: {earned}"


@pytest.mark.parametrize("number", NUMBERS)
def test_forged_payloads_earn_nothing(number):
    earned = {}
    for value in FORGED + ACCEPTED:
        for data in ({"value": value}, {"missing": False, "value": value}, value, {"invalid": value}):
            score = _score(number, _everywhere(number, data))
            if score:
                earned[repr(data)[:40]] = score
    assert not earned, f"exercise {number} gives points for a forged payload: {earned}"


@pytest.mark.parametrize("number", sorted(STARTING))
def test_the_unchanged_start_earns_nothing(number):
    for answers in STARTING[number]:
        graded = spec(number).grade(answers_of(number, answers), hidden=True)
        assert graded.score == 0, (answers, graded.text())


def _extremes(number: str) -> list[dict[str, float]]:
    """A variant's numbers at the low and at the high end of every parameter's grid."""
    params = spec(number).params
    return [{name: p.values()[end] for name, p in params.items()} for end in (0, -1)] if params else []


@pytest.mark.parametrize("number", [n for n in NUMBERS if spec(n).params])
def test_junk_and_the_start_earn_nothing_on_the_extreme_variants(number):
    for values in _extremes(number):
        for answers in [*(_everywhere(number, v) for v in ACCEPTED), *STARTING.get(number, [])]:
            graded = spec(number).grade(answers_of(number, answers), hidden=True, values=values)
            assert graded.score == 0, (values, answers, graded.text())


def test_forged_numbers_never_reach_a_checker():
    """A NaN or an infinity in a forged payload is refused with the kind's own message."""
    graded = spec("0.3").grade({"damping": {"value": NAN}})
    assert graded.score == 0 and "`damping` should be a finite number" in graded.text()
    graded = spec("5.1").grade({"block_solref": {"value": [0.004, 1]},
                                "block_solimp": {"value": [0.95, 0.99, INF, 0.5, 2]}})
    assert graded.score == 0 and "finite" in graded.text()


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=6)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


@pytest.mark.parametrize("number", NUMBERS)
def test_arbitrary_json_earns_nothing(number):
    names = list(spec(number).answers)

    @settings(max_examples=12, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.fixed_dictionaries({name: st.one_of(_json, st.builds(lambda v: {"value": v}, _json))
                                  for name in names}))
    def attack(data):
        assert _score(number, data) == 0, data

    attack()

