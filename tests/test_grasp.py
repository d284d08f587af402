"""labkit.grasp: the measurements on hand-checkable cases, and chapter 09's capstone acceptance.

The first half builds tiny models whose answers can be computed by hand (an object that
cannot move, an oscillator of known amplitude and frequency, two motors pressing with a
known force, a box resting on four corners).  The second half runs chapter 09's own cells
(limits, trial, feedback) on several different correct parameter sets, which must all
earn full marks, and on wrong ones, which must each fail exactly the requirement they
break, with the amount in the feedback.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import nbformat
import numpy as np
import pytest

import labkit
import labkit.grasp as grasp
from labkit.classroom.notebooks import course_dir
from labkit.classroom.student import student_notebook

# -- the script ------------------------------------------------------------------------------

ARM = """<mujoco><option gravity="0 0 0" timestep="0.001"/><worldbody>
  <body name="hand"><joint name="lift" type="slide" axis="0 0 1"/>
    <geom type="box" size="0.02 0.02 0.01" mass="0.5"/>
    <body name="finger" pos="0.05 0 0"><joint name="finger" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.005 0.01 0.01" mass="0.1"/></body></body>
  <body name="object" pos="0.3 0 0"><freejoint/>
    <geom name="object" type="box" size="0.01 0.01 0.01" mass="0.1"/></body>
</worldbody><actuator>
  <position name="lift" joint="lift" kp="10000" kv="200"/>
  <position name="finger" joint="finger" kp="1000" kv="20"/>
</actuator></mujoco>"""


def test_script_ramps_close_then_lift():
    model, data = labkit.load(ARM)
    ctrl = grasp.script(model, close={"finger": 0.02}, lift={"lift": 0.05},
                        durations=(0.5, 1.0, 0.5), close_ramp=0.2, lift_ramp=0.8)
    lift, finger = model.actuator("lift").id, model.actuator("finger").id

    def at(t):
        data.time = t
        return ctrl(model, data)

    assert at(0.0).tolist() == [0.0, 0.0]
    assert at(0.1)[finger] == pytest.approx(0.01)            # smoothstep(1/2) = 1/2
    assert at(0.2)[finger] == at(0.45)[finger] == pytest.approx(0.02)
    assert at(0.5 + 0.4)[lift] == pytest.approx(0.025)       # half-way up the ramp
    assert at(0.5 + 0.8)[lift] == at(1.9)[lift] == pytest.approx(0.05)
    assert at(1.9)[finger] == pytest.approx(0.02)             # the close target stays
    # the peak acceleration of h·s(t/T) is 6h/T², where the ramp starts
    dt = 1e-4
    accel = (at(0.5 + 2 * dt)[lift] - 2 * at(0.5 + dt)[lift] + at(0.5)[lift]) / dt**2
    assert accel == pytest.approx(6 * 0.05 / 0.8**2, rel=1e-3)


def test_script_rejects_bad_durations_and_names():
    model, _ = labkit.load(ARM)
    with pytest.raises(ValueError, match="positive"):
        grasp.script(model, close={}, lift={}, durations=(0.5, 0.0, 1.0))
    with pytest.raises(ValueError, match="fit in its phase"):
        grasp.script(model, close={}, lift={}, durations=(0.5, 1.0, 1.0), close_ramp=0.6)
    with pytest.raises(KeyError, match="no actuator named 'lfit'"):
        grasp.script(model, close={}, lift={"lfit": 0.1})


# -- the measurements --------------------------------------------------------------------------

def test_an_object_left_behind_slips_by_the_hand_travel():
    # Nothing touches the object and there is no gravity: it stays where it is while the
    # fingers rise with the hand, so the slip is the hand's travel and the lift is zero.
    model, data = labkit.load(ARM)
    report = grasp.trial(model, data, object="object", fingers=["finger"], hand="hand",
                         close={"finger": 0.0}, lift={"lift": 0.05}, durations=(0.2, 1.0, 0.5),
                         lift_ramp=0.5)
    assert report.lift == 0.0 and report.jitter < 1e-9
    assert report.slip == pytest.approx(0.05, rel=1e-3)       # the stiff servo settles on its target
    assert report.penetration == 0.0 and report.penetration_pair == ("", "")
    assert report.peak_force == 0.0 and report.mean_force == 0.0
    assert report.unstable == ()
    rec = report.recording
    assert rec.t[0] == 0.0 and rec.t[1] == pytest.approx(model.opt.timestep)
    assert len(rec.t) == round(1.7 / model.opt.timestep)
    assert rec["hand"][-1, 2] == pytest.approx(0.05, rel=1e-3)
    assert report.phases == {"close": (0.0, 0.2), "lift": (0.2, 1.2), "hold": (1.2, 1.7)}



def test_sample_k_is_read_after_step_k_plus_1_like_a_hand_written_loop():
    # trial runs through labkit.sim.run; its samples must be those of the plain loop
    # "write ctrl, mj_step, read" (after mj_step, xpos is the state the step started from).
    model, data = labkit.load(ARM)
    kwargs = dict(close={"finger": 0.01}, lift={"lift": 0.05}, durations=(0.05, 0.1, 0.05))
    report = grasp.trial(model, data, object="object", fingers=["finger"], hand="hand", **kwargs)
    control = grasp.script(model, **kwargs)
    plain = mujoco.MjData(model)
    hand, start = model.body("hand").id, None
    moved = []
    for _ in range(len(report.recording.t)):
        plain.ctrl[:] = control(model, plain)
        mujoco.mj_step(model, plain)
        start = plain.xpos[hand].copy() if start is None else start
        moved.append(plain.xpos[hand] - start)
    assert np.array_equal(report.recording["hand"], np.array(moved))
    assert np.array_equal(plain.qpos, data.qpos) and plain.time == data.time

PUSHED_OUT = """<mujoco><option integrator="{integrator}" timestep="0.005"/><worldbody>
  <geom type="plane" size="1 1 .1"/><body pos="0 0 0.09"><freejoint/><geom size=".1"/></body>
</worldbody></mujoco>"""


@pytest.mark.parametrize("integrator", ["Euler", "implicit", "implicitfast", "RK4"])
def test_after_mj_step_xpos_is_the_start_state_except_under_rk4(integrator):
    # the premise of trial's sampling (the module docstring): a ball pushed out of a floor it overlaps
    model, data = labkit.load(PUSHED_OUT.format(integrator=integrator))
    start = data.qpos[2]
    mujoco.mj_step(model, data)
    end, seen = data.qpos[2], data.xpos[1, 2]
    assert data.contact[0].dist == pytest.approx(seen - 0.1, abs=1e-12)     # contacts: the same state
    if integrator == "RK4":                          # RK4's last stage: neither the start nor the end
        assert start < seen < end and end - seen < seen - start      # nearer the end, but not there
    else:
        assert seen == start < end


def test_a_bad_control_is_no_reset_but_drives_nothing():
    # _UNSTABLE's comment: bad qpos/qvel/qacc reset mjData, a bad ctrl does not
    model, data = labkit.load(ARM)
    mujoco.mj_step(model, data, 5)
    data.ctrl[0] = np.nan
    mujoco.mj_step(model, data)
    assert data.warning[mujoco.mjtWarning.mjWARN_BADCTRL].number == 1
    assert data.time == pytest.approx(6 * model.opt.timestep) and data.actuator_force[0] == 0.0


PALM = '<geom type="box" size="0.02 0.02 0.01" mass="0.5"/>'
CARRIED = '<body name="object" pos="0 0 -0.03"><geom type="sphere" size="0.01" mass="0.1"/></body>'
WELDED = (ARM.replace('body name="object"', 'body name="unused"').replace('geom name="object"', 'geom')
          .replace(PALM, PALM + CARRIED))


def test_an_object_welded_to_the_hand_rises_with_it_and_never_slips():
    model, data = labkit.load(WELDED)
    report = grasp.trial(model, data, object="object", fingers=["hand"], hand="hand",
                         close={}, lift={"lift": 0.05}, durations=(0.2, 1.0, 0.5), lift_ramp=0.5)
    assert report.slip == 0.0 and report.jitter == 0.0
    assert report.lift == pytest.approx(0.05, rel=1e-3)


OSCILLATOR = """<mujoco><option gravity="0 0 0" timestep="0.001"/><worldbody>
  <body name="hand"><geom type="box" size="0.02 0.02 0.01" mass="0.5" contype="0" conaffinity="0"/>
    <body name="object"><joint type="slide" axis="1 0 0" stiffness="{k}" springref="{a}"/>
      <geom type="sphere" size="0.01" mass="{m}" contype="0" conaffinity="0"/></body></body>
</worldbody></mujoco>"""


def test_jitter_is_the_rms_velocity_of_an_oscillation():
    # The spring's rest position is A away from where the object starts: it oscillates with
    # amplitude A at ω = √(k/m), so its velocity's RMS about the mean is A·ω/√2.
    m, omega, amplitude = 0.1, 2 * np.pi * 5, 0.002
    model, data = labkit.load(OSCILLATOR.format(k=m * omega**2, a=amplitude, m=m))
    report = grasp.trial(model, data, object="object", fingers=["hand"], hand="hand",
                         close={}, lift={}, durations=(0.3, 0.1, 1.0))  # the hold is 5 periods
    assert report.jitter == pytest.approx(amplitude * omega / math.sqrt(2), rel=1e-2)
    assert report.lift == 0.0                                   # it moves sideways only
    velocity = report.recording["velocity"][report.recording.t >= 0.4]
    assert np.abs(velocity[:, 0]).max() == pytest.approx(amplitude * omega, rel=2e-2)


CREEP = """<mujoco><option gravity="0 0 0" timestep="0.001"/><worldbody>
  <body name="hand"><geom type="box" size="0.02 0.02 0.01" mass="0.5" contype="0" conaffinity="0"/>
    <body name="object"><joint name="x" type="slide" axis="1 0 0" damping="10"/>
      <geom type="sphere" size="0.01" mass="0.1" contype="0" conaffinity="0"/></body></body>
</worldbody><actuator><motor name="push" joint="x"/></actuator></mujoco>"""


def test_a_steady_creep_is_slip_but_not_jitter():
    # 0.5 N against 10 N·s/m of damping: after a few m/b = 10 ms the object creeps at 5 cm/s
    model, data = labkit.load(CREEP)
    report = grasp.trial(model, data, object="object", fingers=["hand"], hand="hand",
                         close={"push": 0.5}, lift={}, durations=(0.3, 0.2, 0.5))
    assert report.slip == pytest.approx(0.05 * 0.7, rel=2e-3)  # 5 cm/s for the 0.7 s after the close
    assert report.jitter < 1e-9


SQUEEZE = """<mujoco><option gravity="0 0 0" timestep="0.002" cone="elliptic"/><worldbody>
  <body name="hand">
    <body name="left" pos="-0.021 0 0"><joint name="left" type="slide" axis="1 0 0" damping="5"/>
      <geom name="left_pad" type="box" size="0.005 0.02 0.02" mass="0.1"/></body>
    <body name="right" pos="0.021 0 0"><joint name="right" type="slide" axis="-1 0 0" damping="5"/>
      <geom name="right_pad" type="box" size="0.005 0.02 0.02" mass="0.1"/></body></body>
  <body name="object"><freejoint/><geom name="object" type="box" size="0.015 0.015 0.015" mass="0.2"/></body>
</worldbody>
<actuator><motor name="left" joint="left"/><motor name="right" joint="right"/></actuator></mujoco>"""


def test_finger_force_is_what_the_motors_press_with():
    model, data = labkit.load(SQUEEZE)
    report = grasp.trial(model, data, object="object", fingers=["left", "right"], hand="hand",
                         close={"left": 3.0, "right": 3.0}, lift={}, durations=(0.5, 0.1, 1.0))
    assert report.mean_force == pytest.approx(3.0, rel=1e-4)  # each finger: its motor's 3 N
    assert report.peak_force >= report.mean_force
    assert report.recording["force"].shape == (len(report.recording.t), 2)
    assert set(report.penetration_pair) in ({"left_pad", "object"}, {"right_pad", "object"})
    assert report.penetration > 0 and report.slip < 1e-6


RESTING = """<mujoco><option timestep="0.002" cone="elliptic"/><worldbody>
  <geom name="floor" type="plane" size="1 1 0.1"/>
  <body name="hand" pos="0 0 0.5">
    <geom type="sphere" size="0.01" mass="1" contype="0" conaffinity="0"/></body>
  <body name="box" pos="0 0 0.05"><freejoint/>
    <geom name="box" type="box" size="0.05 0.05 0.05" mass="1"/></body>
</worldbody></mujoco>"""


def test_penetration_of_a_box_resting_on_four_corners():
    # chapter 05's rule: four corner rows sized with 1/m, each carrying m·g/4, sink like one
    # contact under g/4
    model, data = labkit.load(RESTING)
    report = grasp.trial(model, data, object="box", fingers=["hand"], hand="hand",
                         close={}, lift={}, durations=(0.5, 0.5, 0.5))
    predicted = labkit.solver.rest_penetration((0.02, 1), labkit.solver.DEFAULT_SOLIMP,
                                               timestep=0.002, accel=9.81 / 4)
    assert report.recording["penetration"][-1] == pytest.approx(predicted, rel=1e-4)
    assert report.penetration >= report.recording["penetration"][-1]
    assert set(report.penetration_pair) == {"floor", "box"}
    assert report.peak_force == 0.0                            # the floor is not a finger


def test_a_diverging_simulation_is_reported():
    model, data = labkit.load(ARM.replace('kp="1000" kv="20"', 'kp="1000" kv="1000"'))
    with labkit.mujoco_warnings() as caught:
        report = grasp.trial(model, data, object="object", fingers=["finger"], hand="hand",
                             close={"finger": 0.02}, lift={}, durations=(0.2, 0.1, 0.1))
    assert report.unstable == ("mjWARN_BADQACC",) and caught
    assert "UNSTABLE" in report.text()


def test_report_text_has_units_and_no_addresses():
    model, data = labkit.load(SQUEEZE)
    report = grasp.trial(model, data, object="object", fingers=["left", "right"], hand="hand",
                         close={"left": 3.0, "right": 3.0}, lift={}, durations=(0.2, 0.1, 0.2))
    text = repr(report)
    assert text.startswith("grasp trial") and "0x" not in text
    for unit in ("mm", "N", "mm/s"):
        assert f" {unit}" in text
    assert grasp.GraspReport.units["jitter"] == "m/s"


# -- open and closed commands -------------------------------------------------------------------

# The smallest gripper whose ctrl 0 means closed: each finger's position servo commands its
# opening (m), as a parallel gripper's width command does.  joint ref = 0.04 makes qpos0 the
# open pose (the bodies sit where q = ref puts them), so at q = 0 each pad's inner face is at
# x = ∓0.01, inside the 0.02 m half-width cube: ctrl 0 squeezes it.
GAP = """<mujoco><option timestep="0.002" cone="elliptic"/><worldbody>
  <geom name="floor" type="plane" size="1 1 0.1"/>
  <body name="hand" pos="0 0 0.02"><joint name="lift" type="slide" axis="0 0 1"/>
    <geom type="sphere" size="0.005" mass="0.5" contype="0" conaffinity="0"/>
    <body name="left" pos="-0.055 0 0">
      <joint name="left" type="slide" axis="-1 0 0" ref="0.04" damping="2"/>
      <geom name="left_pad" type="box" size="0.005 0.02 0.02" mass="0.05" friction="1"/></body>
    <body name="right" pos="0.055 0 0">
      <joint name="right" type="slide" axis="1 0 0" ref="0.04" damping="2"/>
      <geom name="right_pad" type="box" size="0.005 0.02 0.02" mass="0.05" friction="1"/>
    </body></body>
  <body name="cube" pos="0 0 0.02"><freejoint/>
    <geom name="cube" type="box" size="0.02 0.02 0.02" mass="0.05" friction="1"/></body>
</worldbody><actuator>
  <position name="left" joint="left" kp="300" kv="5" ctrlrange="0 0.04"/>
  <position name="right" joint="right" kp="300" kv="5" ctrlrange="0 0.04"/>
  <position name="lift" joint="lift" kp="500" kv="50" ctrlrange="0 0.2"/>
</actuator></mujoco>"""
GAP_SCRIPT = {"close": {"left": 0.0, "right": 0.0}, "lift": {"lift": 0.05},
              "durations": (0.5, 0.5, 0.5), "close_ramp": 0.3}


def _first_touch(report) -> float:
    """The time (s) a finger first pushes on the object."""
    return float(report.recording.t[np.argmax(report.recording["force"].sum(axis=1) > 0)])


def test_a_gripper_whose_ctrl_0_is_closed_starts_open_with_its_open_command():
    model, data = labkit.load(GAP)
    parts = {"object": "cube", "fingers": ["left", "right"], "hand": "hand"}
    shut = grasp.trial(model, data, **parts, **GAP_SCRIPT)              # today's default: open = 0
    opened = grasp.trial(model, data, **parts, **GAP_SCRIPT, open=0.04)
    # the pads touch when the commanded opening reaches 0.01 m (faces at the cube's ±0.02 m):
    # smoothstep(s) = 1 - 0.01/0.04 at s ≈ 0.673 of the 0.3 s ramp, the servo lagging behind
    low, high = 0.0, 1.0
    for _ in range(60):                                   # bisection: smoothstep(s) = 0.75
        mid = (low + high) / 2
        low, high = (mid, high) if grasp.smoothstep(mid) < 0.75 else (low, mid)
    assert _first_touch(opened) >= 0.3 * low
    # without it the servos pull from ctrl 0 (closed) at once: the pads cross the 0.03 m to the
    # cube under kp = 300 N/m in a few tens of ms
    assert _first_touch(shut) < 0.1
    # both grasp and lift the cube (a failed grasp leaves it at 0): the hand rises 0.05 m less
    # its servo's sag m·g/kp = 0.65·9.81/500 ≈ 13 mm and the lag of a 0.5 s ramp
    assert opened.lift > 0.02 and shut.lift > 0.02
    ctrl = grasp.script(model, **GAP_SCRIPT, open={"left": 0.04, "right": 0.04})
    data.time = 0.0
    assert ctrl(model, data)[:2].tolist() == [0.04, 0.04]    # at t = 0: the open command
    data.time = 0.3
    assert ctrl(model, data)[:2].tolist() == [0.0, 0.0]      # after the ramp: the closed one


def test_open_and_closed_commands_are_checked_and_name_the_actuator():
    model, data = labkit.load(GAP)
    parts = {"object": "cube", "fingers": ["left", "right"], "hand": "hand"}
    with pytest.raises(ValueError, match=r"open command 0.05 of actuator 'left' lies outside its "
                                         r"ctrlrange \[0, 0.04\]"):
        grasp.trial(model, data, **parts, **GAP_SCRIPT, open=0.05)
    with pytest.raises(ValueError, match=r"closed command -0\.01 of actuator 'right'"):
        grasp.trial(model, data, **parts, **{**GAP_SCRIPT, "close": {"left": 0, "right": -0.01}})
    with pytest.raises(ValueError, match="open names actuator 'lift', which close does not"):
        grasp.trial(model, data, **parts, **GAP_SCRIPT, open={"lift": 0.0})
    with pytest.raises(ValueError, match="open command of actuator 'left' must be finite"):
        grasp.trial(model, data, **parts, **GAP_SCRIPT, open={"left": float("nan")})
    with pytest.raises(ValueError, match="open command of actuator 'left' must be a number"):
        grasp.trial(model, data, **parts, **GAP_SCRIPT, open={"left": "wide"})
    with pytest.raises(KeyError, match="no actuator named 'lfet'"):
        grasp.trial(model, data, **parts, **GAP_SCRIPT, open={"lfet": 0.0} | {"left": 0.0})
    with pytest.raises(KeyError, match="no keyframe 'open'"):
        grasp.trial(model, data, **parts, **GAP_SCRIPT, keyframe="open")


def test_a_keyframe_starts_the_trial_from_its_pose_at_time_zero():
    # qpos0 closed (no ref): a keyframe holds the open pose, and time restarts at 0
    xml = (GAP.replace(' ref="0.04"', "").replace('pos="-0.055 0 0"', 'pos="-0.015 0 0"')
           .replace('pos="0.055 0 0"', 'pos="0.015 0 0"'))
    xml = xml.replace("</worldbody>", "</worldbody><keyframe>"
                      '<key name="open" time="5" qpos="0 0.04 0.04 0 0 0.02 1 0 0 0"/></keyframe>')
    model, data = labkit.load(xml)
    parts = {"object": "cube", "fingers": ["left", "right"], "hand": "hand"}
    opened = grasp.trial(model, data, **parts, **GAP_SCRIPT, open=0.04, keyframe="open")
    reference = grasp.trial(labkit.load(GAP)[0], None, **parts, **GAP_SCRIPT, open=0.04)
    assert opened.phases == reference.phases and opened.recording.t[0] == 0.0
    assert _first_touch(opened) == _first_touch(reference)
    assert opened.lift == pytest.approx(reference.lift, rel=1e-9)


def _jaco_on_a_lift(corpus):
    """dm_control's Kinova Jaco hand, pointing down on a lift servo, over a 5 cm cube on a floor.
    The wheel's hand has no actuators; each finger gets a position servo over the joint's
    range 0.15 (open) to 1.35 rad (closed), the command dm_control's own hand takes."""
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1, 1, 0.1])
    mount = spec.worldbody.add_body(name="mount", pos=[0, 0, 0.195])
    mount.add_joint(name="lift", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 0, 1])
    mount.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.01], mass=0.5, contype=0,
                   conaffinity=0)
    hand = mujoco.MjSpec.from_file(str(corpus.path("dm_control/kinova/jaco_hand")))
    # the file turns the hand to point along -y; this frame turns it back, to point down
    spec.attach(hand, frame=mount.add_frame(quat=[0, 0.70710678118, 0.70710678118, 0]),
                prefix="jaco/")
    spec.add_actuator(name="lift", target="lift", trntype=mujoco.mjtTrn.mjTRN_JOINT
                      ).set_to_position(kp=2000, kv=200)
    for i in (1, 2, 3):
        servo = spec.add_actuator(name=f"finger_{i}", target=f"jaco/finger_{i}",
                                  trntype=mujoco.mjtTrn.mjTRN_JOINT)
        servo.set_to_position(kp=2.0, kv=0.0)
        servo.ctrllimited, servo.ctrlrange = mujoco.mjtLimited.mjLIMITED_TRUE, [0.15, 1.35]
    cube = spec.worldbody.add_body(name="cube", pos=[0, 0, 0.025])
    cube.add_freejoint()
    cube.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.025] * 3, mass=0.1,
                  friction=[1, 0.005, 0.0001])
    model = spec.compile()
    return model, mujoco.MjData(model)


def test_the_jaco_hand_grasps_with_explicit_open_and_closed_commands(corpus):
    model, data = _jaco_on_a_lift(corpus)
    fingers = [f"jaco/b_finger{part}_{i}" for part in ("", "_tip") for i in (1, 2, 3)]
    commands = {"close": {f"finger_{i}": 1.35 for i in (1, 2, 3)}, "open": 0.15,
                "lift": {"lift": 0.1}, "durations": (1.0, 1.0, 1.0), "close_ramp": 0.6}
    report = grasp.trial(model, data, object="cube", fingers=fingers, hand="jaco/hand", **commands)
    assert report.unstable == ()
    # open: nothing touches the cube until the ramp has closed the fingers part of the way
    assert _first_touch(report) > 0.1
    # lifted, not left behind (a failed grasp leaves the cube at 0): the hand rose 0.1 m less
    # its servo's sag m·g/kp ≈ 1.3 kg·9.81/2000 ≈ 6 mm; the cube hangs lower in the fingers
    assert report.lift > 0.05 and report.peak_force > 0
    control = grasp.script(model, **{k: v for k, v in commands.items()})
    data.time = 0.0
    np.testing.assert_array_equal(control(model, data)[1:], 0.15)           # starts open
    with pytest.raises(ValueError, match=r"actuator 'finger_1' lies outside its ctrlrange "
                                         r"\[0.15, 1.35\]"):
        grasp.trial(model, data, object="cube", fingers=fingers, hand="jaco/hand",
                    **{**commands, "open": 0.0})


def test_trial_names_missing_bodies():
    model, data = labkit.load(ARM)
    with pytest.raises(KeyError, match="no body named 'cube'"):
        grasp.trial(model, data, object="cube", fingers=["finger"], hand="hand", close={}, lift={})
    with pytest.raises(ValueError, match="at least one finger"):
        grasp.trial(model, data, object="object", fingers=[], hand="hand", close={}, lift={})


# -- configure ----------------------------------------------------------------------------------

def test_configure_sets_every_parameter():
    model, _ = labkit.load(ARM)
    grasp.configure(model, {"friction": 0.7, "condim": 4, "solref": (0.01, 1),
                            "solimp": (0.95, 0.99, 0.001, 0.5, 2), "cone": "elliptic", "impratio": 10,
                            "noslip_iterations": 3, "timestep": 0.001, "integrator": "implicitfast",
                            "finger_kp": 300, "finger_kv": 7},
                    servos={"finger": ["finger"]})
    assert model.geom_friction[:, 0].tolist() == [0.7] * model.ngeom
    assert model.geom_friction[0, 1] == 0.005                 # one number sets the sliding coefficient only
    assert model.geom_condim.tolist() == [4] * model.ngeom
    assert model.geom_solref[0].tolist() == [0.01, 1] and model.geom_solimp[0, 1] == 0.99
    assert model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and model.opt.impratio == 10
    assert model.opt.noslip_iterations == 3 and model.opt.timestep == 0.001
    assert model.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    a = model.actuator("finger").id
    assert model.actuator_gainprm[a, 0] == 300 and model.actuator_biasprm[a, :3].tolist() == [0, -300, -7]
    grasp.configure(model, {"friction": (1.0, 0.01, 0.001)}, geoms=["object"])
    assert model.geom_friction[model.geom("object").id].tolist() == [1.0, 0.01, 0.001]
    assert model.geom_friction[0, 0] == 0.7                    # the other geoms keep theirs


def test_configure_explains_what_is_wrong():
    model, _ = labkit.load(ARM)
    with pytest.raises(ValueError, match="unknown parameter 'fricton'; did you mean 'friction'"):
        grasp.configure(model, {"fricton": 1})
    with pytest.raises(ValueError, match="'condim' must be 1, 3, 4 or 6"):
        grasp.configure(model, {"condim": 2})
    with pytest.raises(ValueError, match="'cone' must be"):
        grasp.configure(model, {"cone": "elliptical"})
    with pytest.raises(ValueError, match="'solimp' needs 5"):
        grasp.configure(model, {"solimp": (0.9, 0.95)})
    with pytest.raises(ValueError, match="'friction' is one number or three"):
        grasp.configure(model, {"friction": -1})
    with pytest.raises(ValueError, match="'lift_kp' must be a number ≥ 0"):
        grasp.configure(model, {"lift_kp": -5}, servos={"lift": ["lift"]})
    model, _ = labkit.load(SQUEEZE)
    with pytest.raises(ValueError, match="not a position servo"):
        grasp.configure(model, {"finger_kp": 5}, servos={"finger": ["left"]})
    with pytest.raises(KeyError, match="no geom named 'pad'"):
        grasp.configure(model, {"friction": 1}, geoms=["pad"])


# -- chapter 09's capstone (its grading lives in labkit.exercises.ch09: tests/test_exercises_ch07_09.py) --

NOTEBOOK = course_dir() / "09_capstone.ipynb"


def test_the_student_copy_leaks_nothing():
    copy = student_notebook(nbformat.read(NOTEBOOK, as_version=4))
    assert copy.exercises == ["9.1", "9.2", "9.3", "9.4"]
    assert copy.public_lines == []
    sources = "\n".join(cell.source for cell in copy.notebook.cells)
    reference = nbformat.read(NOTEBOOK, as_version=4)
    regions = [cell.source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
               for cell in reference.cells if "### BEGIN SOLUTION" in cell.source]
    solved = [line.strip() for region in regions for line in region.splitlines()
              if len(line.strip()) >= 12 and not line.strip().startswith("#")]   # not "START," or ")"
    assert len(solved) >= 4                                # 9.1 … 9.4 each have a solution line
    assert not [line for line in solved if line in sources]


def test_the_capstone_model_is_hand_checkable():
    model, _ = labkit.load("capstone_gripper")
    assert [model.body(n).mass[0] for n in ("cube", "hand", "left", "right")] == [0.2, 0.5, 0.1, 0.1]
    assert model.body_gravcomp[[model.body(n).id for n in ("hand", "left", "right")]].tolist() == [1, 1, 1]
    text = Path(labkit.model_path("capstone_gripper")).read_text()
    assert 'shadowsize="1024"' in text and "<!--" in text
