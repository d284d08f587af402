"""The checkers of chapters 01–03 on answers as data: right answers earn full points, blank
ones none, typical mistakes get their own explanation, and answers that try to get round a
requirement do not pass.

The reference answers are worked out here from the exercises' statements, not read from
the notebooks.
"""

from __future__ import annotations

import math

import pytest

from labkit.exercises import answers_of, spec

# -- reference answers, from first principles ---------------------------------------------------

PUCK = """<body name="puck" pos="0 0 0.01">
  <joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/><joint type="hinge" axis="0 0 1"/>
  <geom type="cylinder" size="0.05 0.01"/>
</body>"""
BOX = '<body pos="0.3 0 0.05" euler="0 0 30"><freejoint/><geom type="box" size="0.2 0.1 0.05"/></body>'
# exercise 1.3: fromto="0 0 0  0.2 0 0" is the 0.2 m straight part, the caps of radius 0.02 lie beyond it;
# the housing says mass="0.05", so its density is ignored
TUBE_VOLUME = math.pi * 0.02**2 * 0.2 + 4 / 3 * math.pi * 0.02**3
HOUSING_VOLUME = 4 / 3 * math.pi * 0.025**3
SERVO_CLASS = '<default><default class="servo"><joint damping="1"/><position kp="25"/></default></default>'

ELBOW = """<mujoco><compiler angle="radian"/><worldbody><body>
  <joint name="elbow" range="{lo} {hi}"/><geom size="0.05"/></body></worldbody>
  <actuator><{kind} name="servo" joint="elbow" {gain} ctrlrange="{clo} {chi}"/></actuator></mujoco>"""
MOUNT = """<mujoco><compiler angle="radian" eulerseq="{seq}"/><worldbody>
  <body name="mount" euler="0.4 -0.2 1.1"><geom size="0.05"/></body></worldbody></mujoco>"""


def elbow_xml(lo: float = -math.pi / 6, hi: float = 2 * math.pi / 3, clo: float | None = None,
              chi: float | None = None, kind: str = "position", gain: str = 'kp="10"') -> str:
    return ELBOW.format(lo=lo, hi=hi, clo=lo if clo is None else clo, chi=hi if chi is None else chi,
                        kind=kind, gain=gain)


def brick_inertial(scale: float = 1.0) -> str:
    a, b, c = 0.05, 0.1, 0.2                    # half-sizes of the brick's box
    mass = 1000 * 8 * a * b * c
    inertia = [scale * mass / 3 * (y**2 + z**2) for y, z in ((b, c), (a, c), (a, b))]
    return f'<inertial pos="0 0 0.1" mass="{mass}" diaginertia="{inertia[0]} {inertia[1]} {inertia[2]}"/>'


def modern_xml(old: str) -> str:
    # the compiler switch becomes the L mesh's inertia mode; the geom's shell flag becomes the hull mesh's
    return (old.replace('<compiler exactmeshinertia="true"/>', "")
               .replace(' shellinertia="true"', "")
               .replace('<mesh name="lprism"', '<mesh name="lprism" inertia="exact"', 1)
               .replace('<mesh name="lprism_hull"', '<mesh name="lprism_hull" inertia="shell"', 1))


def old_xml() -> str:
    from labkit.exercises.ch02 import OLD_XML
    return OLD_XML


I_ARM = 1.0 * 0.5**2 + 0.4 * 1.0 * 0.04**2       # the arm: a 1 kg ball of radius 0.04 m, 0.5 m out

REFERENCE = {
    "1.1": {"puck_xml": PUCK},
    "1.2": {"box_xml": BOX},
    "1.3": {"rho": (0.3 - 0.05) / TUBE_VOLUME},
    "1.4": {"servo_defaults": SERVO_CLASS},
    "2.1": {"servo_xml": elbow_xml()},
    "2.2": {"mount_xml": MOUNT.format(seq="XYZ")},
    "2.3": {"brick_inertial": brick_inertial()},
    "2.4": {"modern_xml": None},     # filled in from the package's old model below
    # pid pos+vel with ki and slewmax: 2 controls, 2 states, 1 output; orientation with a
    # quaternion target: 4 controls, 3 outputs; position with timeconst: 1, 1 state, 1
    "3.1": {"counts": (3, 2 + 4 + 1, 2 + 0 + 1, 1 + 3 + 1)},
    "3.2": {"drive_block": [3.0, 0.5], "ff_index": 1 + 1},     # after the motor's one control
    # the servo pulls a cable on a 0.1 m pulley through gear 3: l = 3 · 0.1 · q, moment arm 0.3
    "3.3": {"ctrl_target": 3 * 0.1 * 0.2},
    "3.4": {"joint_stiffness": 1000 * (3 * 0.1)**2, "joint_damping": 100 * (3 * 0.1)**2},
    "3.5": {"kp_design": 1000.0, "kv_design": 2 * 0.9 * math.sqrt(1000.0 * I_ARM)},
}
POINTS = {"1.1": 3, "1.2": 3, "1.3": 2, "1.4": 3, "2.1": 3, "2.2": 3, "2.3": 3, "2.4": 2,
          "3.1": 2, "3.2": 2, "3.3": 1, "3.4": 2, "3.5": 3}


def grade(number: str, **answers):
    """Grade ``answers`` the way the notebook and the grader do: converted to JSON data first."""
    return spec(number).grade(answers_of(number, answers))


def reference(number: str) -> dict:
    answers = dict(REFERENCE[number])
    if number == "2.4":
        answers["modern_xml"] = modern_xml(old_xml())
    return answers


# -- (a) full points, (b) blank submissions ----------------------------------------------------

@pytest.mark.parametrize("number", list(REFERENCE))
def test_reference_answer_earns_full_points(number):
    graded = grade(number, **reference(number))
    assert graded.passed, graded.text()
    assert graded.score == graded.points == POINTS[number]


@pytest.mark.parametrize("number", list(REFERENCE))
def test_blank_submission_scores_zero(number):
    graded = grade(number)
    assert graded.score == 0 and not graded.passed
    assert "you have not defined" in graded.text()


def test_answer_kinds_are_declared_precisely():
    from labkit.exercises.answers import INTEGER, NUMBER, STRING

    assert spec("1.4").answers["servo_defaults"] is STRING
    assert spec("3.2").answers["ff_index"] is INTEGER
    assert spec("3.4").answers["joint_damping"] is NUMBER
    assert "invalid" in answers_of("3.1", {"counts": (3, 7, 3)})["counts"]
    assert "invalid" in answers_of("3.1", {"counts": (3, 7.5, 3, 5)})["counts"]
    assert "invalid" in answers_of("1.1", {"puck_xml": 42})["puck_xml"]


# -- (c) typical mistakes, one or more per exercise ---------------------------------------------

def feedback(number: str, **answers) -> str:
    graded = grade(number, **answers)
    assert graded.score < graded.points
    return graded.text()


def test_1_1_a_free_joint_is_too_much():
    text = feedback("1.1", puck_xml='<body><freejoint/><geom type="cylinder" size="0.05 0.01"/></body>')
    assert "nv = 6" in text and "a free joint has six" in text


def test_1_1_a_tilting_hinge_and_no_joints():
    tilting = PUCK.replace('type="hinge" axis="0 0 1"', 'type="hinge" axis="1 0 0"')
    assert "out of the table's plane" in feedback("1.1", puck_xml=tilting)
    still = grade("1.1", puck_xml='<body><geom type="cylinder" size="0.05 0.01"/></body>')
    assert "✘ it can neither rise nor tilt\n      it has no joints" in still.text()   # doing nothing: 0
    assert still.score == 0


def test_1_1_one_slide_or_a_lone_body_earns_nothing():
    # "it can neither rise nor tilt" alone was met by a single slide (1 point of 3)
    slide = grade("1.1", puck_xml='<body><joint type="slide" axis="1 0 0"/><geom size="0.05"/></body>')
    assert slide.score == 0 and "without all three motions above" in slide.text()
    # "one body besides the world" is the shape of the answer, a gate (it earned 0.75)
    empty = grade("1.1", puck_xml="<body/>")
    assert empty.score == 0
    assert "one body besides the world · required before any points count" in empty.text()
    two = grade("1.1", puck_xml=PUCK + '<body><geom size="0.1"/></body>')
    assert two.score == 0 and "found 2 bodies" in two.text()


def test_1_2_full_lengths_as_half_lengths():
    full = '<body pos="0 0 0.1"><freejoint/><geom type="box" size="0.4 0.2 0.1"/></body>'
    text = feedback("1.2", box_xml=full)
    assert "its edges are [0.2, 0.4, 0.8] m long" in text and "size holds half-lengths" in text


def test_1_2_box_dropped_from_its_edge_length():
    text = feedback("1.2", box_xml=BOX.replace('pos="0.3 0 0.05"', 'pos="0.3 0 0.1"'))
    assert "✘ it starts at rest on the floor" in text and "moved" in text


def test_1_2_a_resting_box_of_the_wrong_shape_or_no_box():
    sphere = grade("1.2", box_xml='<body pos="0 0 0.1"><freejoint/><geom size="0.1"/></body>')
    assert sphere.score == 0 and "one box geom in one free body" in sphere.text()
    cube = grade("1.2", box_xml='<body pos="0 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>')
    assert 0 < cube.score < 3 and "✘ its edges are" in cube.text()    # it rests, as a cube: partial


def test_1_2_box_on_its_side():
    text = feedback("1.2", box_xml=BOX.replace('size="0.2 0.1 0.05"', 'size="0.2 0.05 0.1"')
                    .replace('pos="0.3 0 0.05"', 'pos="0.3 0 0.1"'))
    assert "✘ it lies flat on its largest face" in text


@pytest.mark.parametrize(("rho", "message"), [
    (0.3 / (TUBE_VOLUME + HOUSING_VOLUME), "an explicit mass wins: its density is ignored"),
    (0.3 / TUBE_VOLUME, "the housing's 0.05 kg is part of the link's mass too"),
    (0.25 / (math.pi * 0.02**2 * 0.2), "the two half-sphere caps are part of the tube's volume"),
    (0.25 / (math.pi * 0.02**2 * 0.16 + 4 / 3 * math.pi * 0.02**3), "the caps stick out beyond them"),
    (0.25 / (math.pi * 0.02**2 * 0.4 + 4 / 3 * math.pi * 0.02**3), "span the whole straight part"),
])
def test_1_3_each_misreading_of_the_link_gets_its_explanation(rho, message):
    text = feedback("1.3", rho=rho)
    assert message in text, text
    assert f"{(0.3 - 0.05) / TUBE_VOLUME:.4g}" not in text, "the answer is never revealed"


def test_1_3_the_capsule_formula_beside_the_question_is_not_enough():
    # the capsule volume formula of section 4, fed the link's numbers without the lesson, misses:
    # a half-length of 0.1 read from fromto is right, but the housing's explicit mass must be subtracted
    assert grade("1.3", rho=0.3 / TUBE_VOLUME).score == 0
    assert grade("1.3", rho=1000.0).score == 0                      # MuJoCo's default density
    assert "a density must be positive" in feedback("1.3", rho=-5.0)


@pytest.mark.parametrize("rho", [0, -5.0, 1e6, 1e308])
def test_1_3_a_density_outside_its_range_is_refused_before_compiling(rho):
    graded = grade("1.3", rho=rho)
    assert graded.score == 0 and "`rho` should be above 0 kg/m³ and at most 100000 kg/m³" in graded.text()


def test_1_4_forgotten_actuator_default():
    text = feedback("1.4", servo_defaults=SERVO_CLASS.replace('<position kp="25"/>', ""))
    assert "kp = 1, the global default" in text and "✔ every joint of the arm has damping 1" in text


def test_1_4_a_joint_spring_does_not_pass_for_a_servo():
    # joint stiffness 24 + the default kp 1 gives the asked 0.1 rad give, but the servos are not 25 N·m/rad
    spring = '<default><default class="servo"><joint damping="1" stiffness="24"/></default></default>'
    text = feedback("1.4", servo_defaults=spring)
    assert "the servos themselves are [1, 1] N·m/rad stiff" in text


def test_2_1_ctrlrange_in_degrees():
    text = feedback("2.1", servo_xml=elbow_xml(clo=-30, chi=120))
    assert "✔ the elbow is limited" in text and "the compiled ctrlrange is [-30, 120]" in text
    assert "compiler/angle never converts ctrlrange" in text


def test_2_1_range_read_as_degrees():
    degrees = elbow_xml().replace('<compiler angle="radian"/>', "")
    assert "✘ the elbow is limited to -30°..120°" in feedback("2.1", servo_xml=degrees)


def test_2_1_wrong_joint_type_or_actuator():
    slide = elbow_xml().replace('name="elbow"', 'name="elbow" type="slide"')
    assert "not a hinge" in feedback("2.1", servo_xml=slide)
    motor = elbow_xml(kind="motor", gain="")
    assert "not a position servo" in feedback("2.1", servo_xml=motor)


def test_2_1_strings_that_are_not_mjcf_are_refused():
    for text in ("arm", "models/arm.xml", ""):
        graded = grade("2.1", servo_xml=text)
        assert graded.score == 0 and "should hold MJCF text" in graded.text()
    with_file = elbow_xml().replace("<worldbody>", '<include file="elbow.xml"/><worldbody>')
    assert "refers to a file" in feedback("2.1", servo_xml=with_file)
    assert "has no joint named 'elbow'" in feedback("2.1", servo_xml=elbow_xml().replace('"elbow"', '"knee"'))


def test_2_2_intrinsic_and_degree_readings():
    assert "the intrinsic reading" in feedback("2.2", mount_xml=MOUNT.format(seq="xyz"))
    degrees = MOUNT.format(seq="XYZ").replace('angle="radian" ', "")
    assert "read as degrees" in feedback("2.2", mount_xml=degrees)


def test_2_3_full_edge_lengths_give_four_times_the_inertia():
    text = feedback("2.3", brick_inertial=brick_inertial(scale=4))
    assert "4 times too large" in text and "✔ the mass is what the geom implies" in text


def test_2_3_only_one_inertial_element_is_accepted():
    # anything besides the one element could change the model around it
    injected = brick_inertial() + '</body></worldbody><compiler inertiafromgeom="auto"/><worldbody><body>'
    for text in (injected, brick_inertial() + '<geom size="0.1"/>', '<geom size="0.1"/>'):
        graded = grade("2.3", brick_inertial=text)
        assert graded.score == 0 and "one <inertial .../> element" in graded.text()


def test_2_4_old_model_and_default_inertia():
    graded = grade("2.4", modern_xml=old_xml())          # what the chapter hands the learner
    assert graded.score == 0 and "✘ the model compiles" in graded.text()
    assert "exactmeshinertia" in graded.text()
    # compiling is a gate: the section's own model, which compiles, earned 0.5 for it
    from labkit.models import model_path

    plain = grade("2.4", modern_xml=model_path("compiler_mesh_lprism").read_text())
    assert plain.score == 0 and "✔ the model compiles on MuJoCo 3.17.0 · required before" in plain.text()
    legacy = modern_xml(old_xml()).replace(' inertia="exact"', "")
    assert "the L weighs 0.2036 kg" in feedback("2.4", modern_xml=legacy)


def test_2_4_copying_only_the_compiler_fix():
    # the fix shown for exactmeshinertia alone leaves shellinertia on a mesh geom: refused
    copied = (old_xml().replace('<compiler exactmeshinertia="true"/>', "")
                       .replace('<mesh name="lprism"', '<mesh name="lprism" inertia="exact"', 1))
    text = feedback("2.4", modern_xml=copied)
    assert "✘ the model compiles" in text and "thin shell" in text
    # ...and deleting shellinertia instead of moving it makes the hull a solid
    solid = copied.replace(' shellinertia="true"', "")
    text = feedback("2.4", modern_xml=solid)
    assert "the hull weighs 0.272 kg, a solid's mass" in text
    assert "✔ the L gets its exact mass" in text


@pytest.mark.parametrize("counts", [(3, 3, 3, 3), (0, 0, 0, 0), (5, 5, 5, 5)])
def test_3_1_the_same_count_four_times_is_a_guess(counts):
    # (3, 3, 3, 3) hit nactuator and na: 1 point of 2
    graded = grade("3.1", counts=counts)
    assert graded.score == 0 and "that is a guess" in graded.text()


def test_3_1_quaternion_counted_as_three():
    text = feedback("3.1", counts=(3, 6, 3, 5))
    assert "nu = 6 is not right" in text and "a quaternion target is four numbers" in text
    assert "✔ nout is right" in text


def test_3_2_zero_for_the_absent_pos_input():
    graded = grade("3.2", drive_block=[0.0, 3.0, 0.5], ff_index=2)
    assert graded.score == 0 and "it has 3 values" in graded.text() and "no zero for 'pos'" in graded.text()


def test_3_2_the_index_counts_only_with_the_block():
    # two numbers and the index 2 (a small integer a guess hits) earned 1 point of 2
    graded = grade("3.2", drive_block=[0.0, 0.0], ff_index=2)
    assert graded.score == 0 and "the block above is not right yet" in graded.text()
    assert grade("3.2", drive_block=[3.0, 0.5], ff_index=0).score == 1          # the block alone
    assert grade("3.2", drive_block=[3.0, 1e4], ff_index=2).score == 0          # beyond ±1000: refused


def test_3_2_index_inside_the_block():
    text = feedback("3.2", drive_block=[3.0, 0.5], ff_index=1)
    assert "index 1 is not it" in text and "the motor's control comes first" in text


def test_3_3_joint_angle_gear_alone_pulley_alone_and_division():
    assert "that ctrl is a joint angle" in feedback("3.3", ctrl_target=0.2)
    assert "§5's rule for a geared joint" in feedback("3.3", ctrl_target=3 * 0.2)      # the formula copied
    assert "the gear multiplies it" in feedback("3.3", ctrl_target=0.1 * 0.2)
    assert "you divided by the gear" in feedback("3.3", ctrl_target=0.2 / 3)
    assert "✘ the arm settles at 0.2 rad" in feedback("3.3", ctrl_target=0.05)         # no known mistake
    for far in (5.0, -1e308):                           # beyond the ±1.2 rad shoulder: refused, not simulated
        graded = grade("3.3", ctrl_target=far)
        assert graded.score == 0 and "the shoulder stops at ±1.2 rad" in graded.text()


def test_3_4_gear_squared_copied_or_moment_arm_applied_once():
    text = feedback("3.4", joint_stiffness=1000 * 3**2, joint_damping=100.0)
    assert "here the moment arm is not the gear alone" in text and "that is kv in actuator space" in text
    text = feedback("3.4", joint_stiffness=1000 * 0.3, joint_damping=100 * 0.3)
    assert text.count("one factor of the moment arm is missing") == 2


def test_3_5_soft_and_underdamped_designs():
    soft = feedback("3.5", kp_design=50.0, kv_design=5.0)
    assert "✘ it is within 0.02 rad of the target by 0.3 s" in soft
    assert "✘ it overshoots by at most 2 %" in feedback("3.5", kp_design=1000.0, kv_design=1.0)


def test_3_5_an_unstable_design_fails_even_after_mujocos_reset():
    # at this stiffness (kp·h²/I = 16, beyond 4) MuJoCo detects the divergence, warns and resets the state
    graded = grade("3.5", kp_design=1e6, kv_design=0.0)
    assert graded.score == 0 and "✘ the servo is stable at h = 2 ms" in graded.text()
    negative = grade("3.5", kp_design=-10.0, kv_design=1.0)
    assert negative.score == 0 and "a position servo pulls towards its target (kp > 0)" in negative.text()
    assert "damping does not feed energy in" in grade("3.5", kp_design=1000.0, kv_design=-1.0).text()
    assert "`kp_design` should be above 0" in grade("3.5", kp_design=1e9, kv_design=0.0).text()


@pytest.mark.parametrize(("kp", "kv"), [(1, 1), (0.5, 0.5), (2, 2), (50, 5), (1e-308, 0)])
def test_3_5_a_servo_too_weak_to_arrive_earns_nothing(kp, kv):
    # "it overshoots by at most 2 %" was met by any servo that never gets there (1.5 points of 3 with
    # the stability gate); (50, 5) is the arm's own servo class
    graded = grade("3.5", kp_design=kp, kv_design=kv)
    assert graded.score == 0, graded.text()
    assert "it does not overshoot, but it does not settle at the target either" in graded.text()
