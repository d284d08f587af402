"""Checkers of chapter 10: reference answers earn full marks, blank ones nothing, and typical
mistakes get their own explanation.

Every answer goes through ``labkit.exercises.answers_of`` (data, read back from JSON) and
``spec(number).grade`` — exactly the path of a notebook's feedback cell and of the grader.
The reference answers are derived here from the physics, never read from a notebook.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import pytest

import labkit
from labkit.exercises import answers_of, ch10, spec

H = 0.002                                          # s: the finger's timestep (Exercise 10.2)
OMEGA = math.sqrt(ch10.EX_KP / 1.0)                 # rad/s: Exercise 10.1's servo on the 1 kg ball
ZETA_KV = ch10.EX_KV / (2 * math.sqrt(ch10.EX_KP * 1.0))         # the servo's kv: explicit under Euler
ZETA_JOINT = ch10.EX_DAMPING / (2 * math.sqrt(ch10.EX_KP * 1.0))  # the joint's damping: implicit
ZETA_TENDON = ch10.EX_TENDON_DAMPING / (2 * math.sqrt(ch10.EX_KP * 1.0))  # the tendon's: explicit


def euler_limit(explicit, implicit):
    """One Euler step with explicit damping ratio ζe and implicit ζi: (1 + 2ζi·a)·u' = (1 - 2ζe·a)·u - a·x,
    x' = x + a·u'.  Its growth factor reaches -1 where a² + 4(ζe - ζi)·a - 4 = 0 (a = ωh)."""
    z = explicit - implicit
    return 2 * (math.sqrt(z**2 + 1) - z) / OMEGA


LIMIT_10_1 = euler_limit(ZETA_KV + ZETA_TENDON, ZETA_JOINT)


def grade(number, **namespace):
    return spec(number).grade(answers_of(number, namespace))


def messages(exercise):
    return " ".join(r.message for r in exercise.results if not r.passed)


def finger_inertia():
    """The finger segment's inertia about its hinge, by hand: a 2 × 0.8 × 0.8 cm box of water
    whose centre sits 1 cm from the hinge axis (z)."""
    mass = 1000 * 8 * 0.01 * 0.004 * 0.004
    return mass * ((0.01**2 + 0.004**2) / 3 + 0.01**2)


KP_FINGER = 0.4                                    # N·m/rad: the finger's servo
KV_FINGER = 4e-4                                   # N·m·s/rad: Exercise 10.2's velocity gain
# explicit damping: a² + 2b = 4 with a² = kp·h²/J and b = kv·h/J, so J = (kp·h² + 2·kv·h)/4 in all
LEAST_ARMATURE = (KP_FINGER * H**2 + 2 * KV_FINGER * H) / 4 - finger_inertia()

REFERENCE = {
    "10.1": {"servo_timestep": 0.99 * LIMIT_10_1},     # kv, tendon explicit, joint implicit (Euler)
    "10.2": {"finger_armature": 1.1 * LEAST_ARMATURE},
    "10.3": {"cgs_gravity": 9.81 * 100, "cgs_density": 1000 * 1000 / 100**3,
             "cgs_damping": 0.05 * 1000 * 100**2, "cgs_width": 0.001 * 100},
}


@pytest.mark.parametrize("number", sorted(REFERENCE))
def test_reference_answers_earn_full_marks(number):
    graded = grade(number, **REFERENCE[number])
    assert graded.passed, graded.text()
    assert graded.score == spec(number).points


@pytest.mark.parametrize("number", sorted(REFERENCE))
def test_blank_answers_earn_nothing(number):
    graded = grade(number)
    assert graded.score == 0
    assert "you have not defined" in messages(graded)


def test_chapter_registers_three_exercises_in_order():
    from labkit.exercises import chapter_specs

    assert [s.id for s in chapter_specs(10)] == ["10.1", "10.2", "10.3"]


# -- Exercise 10.1: the largest stable Euler timestep of a servo with two kinds of damping -----------

def test_the_exercise_servo_has_all_three_dampings():
    model, _ = ch10.exercise_servo()
    assert model.actuator_gainprm[0, 0] == ch10.EX_KP
    assert list(model.actuator_biasprm[0, 1:3]) == [-ch10.EX_KP, -ch10.EX_KV]
    assert model.dof_damping[0] == ch10.EX_DAMPING and model.body("ball").mass[0] == 1.0
    assert model.tendon_damping[0] == ch10.EX_TENDON_DAMPING and model.actuator_trntype[0] == 0


def test_the_exercise_text_hands_over_the_servo_numbers():
    import nbformat
    cells = nbformat.read(Path(__file__).parents[1] / "course/10_stability_scale.ipynb", 4).cells
    text = next(c.source for c in cells if c.source.startswith("### Exercise 10.1"))
    assert "exercise_servo" not in text and "stability_limit" not in text   # nothing to call blindly
    for name in spec("10.1").params:                 # each of the learner's numbers, by name
        assert f".{name}`" in text, name


def test_the_exercise_builders_take_the_variants_numbers():
    model, _ = ch10.exercise_servo(2000.0, 30.0, 12.0, 72.0)
    assert model.actuator_gainprm[0, 0] == 2000.0 and model.actuator_biasprm[0, 2] == -30.0
    assert model.dof_damping[0] == 12.0 and model.tendon_damping[0] == 72.0
    assert ch10.exercise_finger(1e-7, 8e-4)[0].actuator_biasprm[0, 2] == -8e-4
    # the grader measures each variant's servo: another servo, another limit
    assert ch10._servo_limit(2000.0, 30.0, 12.0, 72.0) != pytest.approx(LIMIT_10_1, rel=0.05)


def test_servo_builds_each_kind_of_damping_and_a_tendon_transmission():
    model, _ = ch10.servo(1e4, 0.0, actuator_damping=200.0)
    assert model.actuator_damping[0] == 200.0 and model.dof_damping[0] == 0.0
    assert model.actuator_trntype[0] == mujoco.mjtTrn.mjTRN_JOINT and model.ntendon == 0
    model, data = ch10.servo(1e4, 0.0, actuator_damping=200.0, tendon_transmission=True)
    assert model.actuator_trntype[0] == mujoco.mjtTrn.mjTRN_TENDON and model.tendon_damping[0] == 0.0
    mujoco.mj_forward(model, data)
    assert data.actuator_length[0] == pytest.approx(data.qpos[0])        # the tendon's length is x
    model, _ = ch10.servo(1e4, 50.0, tendon_damping=30.0)
    assert model.tendon_damping[0] == 30.0 and model.actuator_trntype[0] == mujoco.mjtTrn.mjTRN_JOINT
    assert model.actuator_biasprm[0, 2] == -50.0 and model.actuator_damping[0] == 0.0


def test_the_mixed_limit_is_what_the_grader_measures():
    assert ch10._servo_limit() == pytest.approx(LIMIT_10_1, rel=1e-3)


@pytest.mark.parametrize(("answer", "says"), [
    (2 / OMEGA, "undamped oscillator"),                                      # ignores the dampings
    (euler_limit(0, ZETA_KV + ZETA_TENDON + ZETA_JOINT), "all three as implicit"),
    (euler_limit(ZETA_KV, ZETA_TENDON + ZETA_JOINT), "tendon's damping as implicit"),
    (euler_limit(ZETA_KV, ZETA_JOINT), "leaves out the tendon"),
    (euler_limit(ZETA_KV, 0), "kv row alone"),                               # the table's row
    (euler_limit(ZETA_JOINT + ZETA_TENDON, ZETA_KV), "swaps them"),          # the wrong one implicit
])
def test_servo_timesteps_that_diverge_are_explained(answer, says):
    graded = grade("10.1", servo_timestep=answer)
    assert not graded.passed
    assert "diverges" in messages(graded) and says in messages(graded)


@pytest.mark.parametrize(("answer", "says"), [
    (euler_limit(ZETA_KV + ZETA_TENDON + ZETA_JOINT, 0), "joint damping as explicit"),  # all explicit
    (euler_limit(ZETA_KV + ZETA_TENDON, 0), "leaves out the joint damping"),
])
def test_servo_timesteps_that_are_too_cautious_are_explained(answer, says):
    graded = grade("10.1", servo_timestep=answer)
    assert not graded.passed
    assert "too cautious" in messages(graded) and says in messages(graded)


def test_servo_timestep_just_past_the_limit_fails():
    assert not grade("10.1", servo_timestep=1.02 * LIMIT_10_1).passed
    assert grade("10.1", servo_timestep=0.96 * LIMIT_10_1).passed


def test_servo_timestep_must_be_positive():
    graded = grade("10.1", servo_timestep=-0.01)
    assert graded.score == 0 and not graded.passed and "should be above 0 s" in graded.text()


@pytest.mark.parametrize(("answer", "says"), [
    (1e-308, "too cautious"),             # stable: it scored 1.33 of 2 ("positive", "stays bounded")
    (0.5, "diverges"),                    # positive: it scored 1 of 2
    (0.002, "too cautious"),              # the model's own step
    (1.0, "below 1 s"),
    (1e308, "below 1 s"),
])
def test_servo_timesteps_without_the_limit_earn_nothing(answer, says):
    graded = grade("10.1", servo_timestep=answer)
    assert graded.score == 0 and says in graded.text()


# -- Exercise 10.2: armature for the damped finger ----------------------------------------------

def test_least_armature_by_hand_matches_the_model():
    model, _ = ch10.exercise_finger()
    assert model.dof_M0[0] == pytest.approx(finger_inertia(), rel=1e-12)
    assert model.actuator_gainprm[0, 0] == KP_FINGER and model.actuator_biasprm[0, 2] == -KV_FINGER
    assert ch10.FINGER_KV == KV_FINGER
    armed, _ = ch10.exercise_finger(1e-7)
    assert armed.dof_M0[0] == pytest.approx(finger_inertia() + 1e-7, rel=1e-12)   # dof_M0 holds armature
    assert ch10.diverges(*ch10.exercise_finger(0.99 * LEAST_ARMATURE), H)
    assert not ch10.diverges(*ch10.exercise_finger(1.01 * LEAST_ARMATURE), H)


def test_armature_forgetting_the_fingers_own_inertia_is_too_much():
    graded = grade("10.2", finger_armature=(KP_FINGER * H**2 + 2 * KV_FINGER * H) / 4)
    assert not graded.passed
    assert "brings some of its own" in messages(graded)


def test_armature_of_an_undamped_servo_diverges():
    graded = grade("10.2", finger_armature=KP_FINGER * H**2 / 4 - finger_inertia())    # kv left out
    assert not graded.passed
    assert "still diverges" in messages(graded) and "integrated explicitly" in messages(graded)


def test_too_little_armature_still_diverges():
    graded = grade("10.2", finger_armature=0.9 * LEAST_ARMATURE)
    assert "still diverges" in messages(graded)


def test_negative_armature_is_refused():
    graded = grade("10.2", finger_armature=-1e-7)
    assert graded.score == 0 and "cannot remove" in graded.text()


@pytest.mark.parametrize(("answer", "says"), [
    (0, "still diverges"),                # "not negative" alone scored 1 of 2
    (1e-308, "still diverges"),
    (1e-4, "works, but so does"),         # stable: "not negative" and "stays bounded" scored 1.33 of 2
    (1e-3, "works, but so does"),
    (1.0, "at most 0.001 kg·m²"),
    (1e308, "at most 0.001 kg·m²"),
])
def test_armatures_without_the_least_earn_nothing(answer, says):
    graded = grade("10.2", finger_armature=answer)
    assert graded.score == 0 and says in graded.text()


# -- Exercise 10.3: the arm in centimetres and grams --------------------------------------------

@pytest.mark.parametrize(("name", "wrong", "says"), [
    ("cgs_gravity", 9.81, "m/s²"),
    ("cgs_gravity", 9810, "mm/s²"),
    ("cgs_density", 1000, "kg/m³"),
    ("cgs_density", 1e-3, "the mass unit is the gram"),
    ("cgs_damping", 0.05, "the SI number"),
    ("cgs_damping", 500, "not the mass"),
    ("cgs_damping", 50, "not the lengths"),
    ("cgs_width", 0.001, "solimp's width is a length"),
])
def test_cgs_mistakes_are_named(name, wrong, says):
    graded = grade("10.3", **{**REFERENCE["10.3"], name: wrong})
    assert not graded.passed
    assert says in messages(graded)


@pytest.mark.parametrize("guess", [1, 0.5, 2])
def test_a_guess_earns_nothing_even_where_it_is_right(guess):
    # 1 g/cm³ is the right density: with all four numbers 1, the masses scored 1.2 of 3
    graded = grade("10.3", **dict.fromkeys(REFERENCE["10.3"], guess))
    assert graded.score == 0
    if guess == 1:
        assert "the masses are right, but they count only once the cube falls as in SI" in messages(graded)


def test_cgs_numbers_out_of_range_are_refused():
    for name, wrong, says in (("cgs_gravity", -981, "magnitude is positive"), ("cgs_density", 0, "above 0"),
                              ("cgs_damping", 1e300, "barely moves"), ("cgs_width", 1e3, "whole scene")):
        graded = grade("10.3", **{**REFERENCE["10.3"], name: wrong})
        assert graded.score == 0 and says in graded.text(), name


def test_cgs_width_only_changes_the_landing():
    graded = grade("10.3", **{**REFERENCE["10.3"], "cgs_width": 0.001})
    failed = [r.requirement for r in graded.results if not r.passed]
    assert failed == ["the cube lands and rests as in SI"]


def test_the_lessons_unit_tables_are_consistent():
    """SI and MM describe the same physics: each conversion is the dimensional one (L = 1000, M = 1)."""
    assert ch10.MM["gravity"] == pytest.approx(ch10.SI["gravity"] * 1e3)
    assert ch10.MM["density"] == pytest.approx(ch10.SI["density"] / 1e9)
    assert ch10.MM["damping"] == pytest.approx(ch10.SI["damping"] * 1e6)
    assert ch10.MM["width"] == pytest.approx(ch10.SI["width"] * 1e3)


def test_the_si_table_is_what_scale_arm_uses():
    """with_units("scale_arm", **SI) is the file as written: the same masses and the same motion."""
    plain, plain_data = labkit.load("scale_arm")
    model, data = ch10.with_units("scale_arm", **ch10.SI)
    assert (model.body_mass == plain.body_mass).all()
    edited, written = ch10.arm_motion(model, data, 0.2), ch10.arm_motion(plain, plain_data, 0.2)
    assert (edited["pose"] == written["pose"]).all()


# -- the shared experiment ------------------------------------------------------------------------

def test_stability_limit_of_the_spring_is_two_over_omega():
    model, data = labkit.load("stability_spring", keyframe="pulled")
    omega = math.sqrt(model.jnt_stiffness[0] / model.body("ball").mass[0])
    assert omega * ch10.stability_limit(model, data) == pytest.approx(2.0, rel=1e-5)
    assert model.opt.timestep == 0.002, "diverges() puts the model's own timestep back"


def test_servo_builds_each_kind_of_damping():
    model, data = ch10.servo(kp=100.0, kv=0.0, joint_damping=3.0, tendon_damping=5.0)
    assert model.actuator_gainprm[0, 0] == 100.0 and model.actuator_biasprm[0, 2] == 0.0
    assert model.dof_damping[0] == 3.0 and list(model.tendon_damping) == [5.0]
    assert data.qpos[0] == 0.01                                     # at the keyframe
    data.qvel[0] = 1.0
    import mujoco

    mujoco.mj_forward(model, data)
    assert data.qfrc_passive[0] == pytest.approx(-8.0)              # joint and tendon damping, -c·ẋ


def test_finger_on_a_slide_and_with_kv():
    model, _ = ch10.finger(joint="slide", scale=10.0)
    assert model.jnt_type[0] == 2 and list(model.jnt_axis[0]) == [1, 0, 0]        # mjJNT_SLIDE along x
    assert model.dof_M0[0] == pytest.approx(1000 * 8 * 0.1 * 0.04 * 0.04, rel=1e-12)   # the mass, 1.28 kg
    assert ch10.finger(kv=0.5)[0].actuator_biasprm[0, 2] == -0.5
    with pytest.raises(ValueError, match="hinge"):
        ch10.finger(joint="ball")


def test_stability_limit_refuses_a_bracket_without_the_limit():
    model, data = labkit.load("stability_spring", keyframe="pulled")
    with pytest.raises(ValueError, match="bracket"):
        ch10.stability_limit(model, data, low=1e-6, high=1e-3)


def test_a_variants_mistakes_are_named_with_its_own_numbers():
    values = {"density": 2500.0, "damping": 0.03, "width": 0.004}
    right = {"cgs_gravity": 981.0, "cgs_density": 2.5, "cgs_damping": 0.03 * 1e7, "cgs_width": 0.4}
    assert spec("10.3").grade(answers_of("10.3", right), values=values).passed
    wrong = spec("10.3").grade(answers_of("10.3", {**right, "cgs_damping": 0.03 * 1e4}), values=values)
    assert "converts the lengths but not the mass" in messages(wrong)
    servo = {"kp": 4900.0, "kv": 40.0, "joint_damping": 20.0, "tendon_damping": 32.0}
    omega = math.sqrt(4900.0)
    as_undamped = spec("10.1").grade(answers_of("10.1", {"servo_timestep": 2 / omega}), values=servo)
    assert not as_undamped.passed and "undamped oscillator" in messages(as_undamped)
