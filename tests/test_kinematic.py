"""labkit.kinematic: command mapping, couplings, slew limits and collision projection."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

import labkit
from labkit import kinematic as K

# A one-finger test rig: a hinge "base" carrying a 10 cm proximal link and a 5 cm distal link
# whose hinge "tip" follows "base" at ratio 0.5, and a thin peg (6 mm square, along y) on a
# vertical slide "reach": at reach = 0.18 m the peg sits 2 cm below the hinge, 7 cm out, in the
# path of the closing finger; at reach = 0 it is 20 cm down, out of reach.
RIG = """
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="prox">
      <joint name="base" axis="0 1 0" range="-1 1.5"/>
      <geom name="prox" type="capsule" fromto="0 0 0 0.1 0 0" size="0.01"/>
      <body name="dist" pos="0.1 0 0">
        <joint name="tip" axis="0 1 0" range="-0.5 0.75"/>
        <geom name="dist" type="capsule" fromto="0 0 0 0.05 0 0" size="0.01"/>
      </body>
    </body>
    <body name="carriage" pos="0.07 0 -0.2">
      <joint name="reach" type="slide" axis="0 0 1" range="0 0.2"/>
      <geom name="peg" type="box" size="0.003 0.05 0.003"/>
    </body>
  </worldbody>
  <equality><joint joint1="tip" joint2="base" polycoef="0 0.5 0 0 0"/></equality>
</mujoco>
"""


@pytest.fixture
def rig():
    return labkit.load(RIG)


@pytest.fixture
def hand():
    return labkit.load("hand")


CLOSE = {"thumb_mcp": 1.4, "index_mcp": 1.5, "index_pip": 1.6, "middle_mcp": 1.5, "middle_pip": 1.6}


# -- commands ----------------------------------------------------------------------------------

def test_command_mapping_ends_middle_and_clamping():
    joints = ["a", "b", "c"]
    lo, hi = np.array([0.0, -1.0, 0.2]), np.array([1.5, 1.0, 0.4])
    assert K.command_to_targets([0, 0, 0], joints, lo, hi) == {"a": 0.0, "b": -1.0, "c": 0.2}
    assert K.command_to_targets([255, 255, 255], joints, lo, hi) == {"a": 1.5, "b": 1.0, "c": 0.4}
    mid = K.command_to_targets([127.5] * 3, joints, lo, hi)
    assert mid == pytest.approx({"a": 0.75, "b": 0.0, "c": 0.3}, abs=1e-15)
    clamped = K.command_to_targets([-40, 300, 1e9], joints, lo, hi)
    assert clamped == {"a": 0.0, "b": 1.0, "c": 0.4}


def test_command_reverse_per_channel_and_custom_range():
    # seed 002 §4.2: a reversed channel runs 0 -> MAX (flexed), 255 -> MIN (straight)
    out = K.command_to_targets([0, 255], ["index_mcp", "spread"], [0.0, -0.2], [1.22, 0.2],
                               reverse=[True, False])
    assert out == {"index_mcp": 1.22, "spread": 0.2}
    assert K.command_to_targets([255], ["j"], [0.0], [1.22], reverse=True) == {"j": 0.0}
    assert K.command_to_targets([0.25], ["j"], 0.0, 2.0, command_range=(-1, 1))["j"] == pytest.approx(1.25)


@pytest.mark.parametrize("values, joints, kwargs, message", [
    ([1, 2], ["a", "b", "c"], {}, "got 2 commands for 3 joints (a, b, c)"),
    ([np.nan], ["a"], {}, "not finite for: a"),
    ([1], ["a"], {"command_range": (5, 5)}, "low < high"),
])
def test_command_errors_say_what_to_fix(values, joints, kwargs, message):
    with pytest.raises(ValueError) as info:
        K.command_to_targets(values, joints, np.zeros(len(joints)), np.ones(len(joints)), **kwargs)
    assert message in str(info.value)


def test_command_to_targets_names_a_joint_without_a_target_range():
    with pytest.raises(ValueError) as info:
        K.command_to_targets([0, 0], ["wrist", "wheel"], [0.0, -np.inf], [1.0, np.inf])
    assert "no finite target range for wheel" in str(info.value) and "lo and hi" in str(info.value)
    assert "wrist" not in str(info.value)


# A wheel on a continuous hinge (no range), a limited hinge, and a slide without limits.
WHEELS = """
<mujoco>
  <worldbody>
    <body name="cart">
      <joint name="track" type="slide" axis="1 0 0"/>
      <geom type="box" size=".1 .05 .02"/>
      <body name="wheel" pos="0 0.07 0">
        <joint name="spin" axis="0 1 0"/>
        <geom type="cylinder" size=".03 .01" euler="90 0 0"/>
      </body>
      <body name="flap" pos="0.1 0 0.02">
        <joint name="flap" axis="0 1 0" range="0 90"/>
        <geom type="box" size=".02 .02 .002" pos=".02 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_a_continuous_hinge_is_commanded_over_one_turn():
    # issue 20: Driver.command refused any joint without a range ("lo and hi must be finite")
    model, data = labkit.load(WHEELS)
    drv = K.Driver(model, data, joints=["spin", "flap"])
    flap_hi = model.joint("flap").range[1]               # 90° in radians, from the compiler
    assert drv.command([255, 255]) == pytest.approx({"spin": math.pi, "flap": flap_hi})
    assert drv.command([0, 0]) == pytest.approx({"spin": -math.pi, "flap": 0.0})
    assert drv.command([127.5, 0])["spin"] == pytest.approx(0.0, abs=1e-15)
    assert drv.command([255, 0], ranges={"spin": (0.0, 10.0)})["spin"] == 10.0  # beyond a turn
    drv.command([255, 0])
    drv.run(10)                                           # 10 steps of 2 ms at 5 rad/s
    assert drv.applied["spin"] == pytest.approx(10 * 5.0 * model.opt.timestep, rel=1e-12)


def test_command_errors_name_the_joint_and_what_to_do():
    model, data = labkit.load(WHEELS)
    drv = K.Driver(model, data)
    with pytest.raises(ValueError) as info:
        drv.command([0, 0, 0])
    text = str(info.value)
    assert "slide joint 'track' has no limits" in text and "ranges={'track': (lo, hi)}" in text
    assert "joints=[...]" in text and "spin" not in text and "lo and hi must be finite" not in text
    assert drv.command([255, 0, 0], ranges={"track": (-0.5, 0.5)})["track"] == 0.5
    with pytest.raises(KeyError, match=r"'wheel', which is not driven.*'track', 'spin', 'flap'"):
        drv.command([0, 0, 0], ranges={"wheel": (0, 1)})
    with pytest.raises(ValueError, match=r"ranges\['track'\] must be two different finite"):
        drv.command([0, 0, 0], ranges={"track": (0.0, np.inf)})
    with pytest.raises(ValueError, match=r"ranges\['track'\] must be two different finite"):
        drv.command([0, 0, 0], ranges={"track": (1.0,)})


# -- couplings ---------------------------------------------------------------------------------

def test_couplings_overwrite_followers_and_chain():
    chain = [K.Coupling("c", "b", 2.0, 0.1), K.Coupling("b", "a", 0.5)]
    out = K.apply_couplings({"a": 1.0, "b": 99.0, "c": -5.0}, chain)
    assert out == {"a": 1.0, "b": 0.5, "c": 2.0 * 0.5 + 0.1}
    with pytest.raises(ValueError, match="cycle"):
        K.apply_couplings({"a": 0.0}, [K.Coupling("a", "b"), K.Coupling("b", "a")])
    with pytest.raises(KeyError, match="leader of 'b'"):
        K.apply_couplings({"x": 0.0}, [K.Coupling("b", "a")])


def test_couplings_from_model_satisfy_mujocos_equality():
    # qpos0 offsets (joint ref) enter the coupling's offset; MuJoCo's equality residual must be 0
    xml = (RIG.replace('range="-0.5 0.75"', 'range="-2 2" ref="0.3"')
           .replace('polycoef="0 0.5 0 0 0"', 'polycoef="0.1 0.5 0 0 0"')
           .replace('range="-1 1.5"', 'range="-1 1.5" ref="-0.2"'))
    model, data = labkit.load(xml)
    (c,) = K.couplings_from_model(model)
    assert (c.follower, c.leader, c.ratio) == ("tip", "base", 0.5)
    assert c.offset == pytest.approx(0.3 + 0.1 - 0.5 * -0.2)
    for leader in (-0.7, 0.0, 1.2):
        data.joint("base").qpos[0] = leader
        data.joint("tip").qpos[0] = c.value(leader)
        mujoco.mj_forward(model, data)
        rows = data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        assert np.abs(data.efc_pos[rows]).max() < 1e-12


def test_nonlinear_equality_is_refused(rig):
    model, _ = labkit.load(RIG.replace('polycoef="0 0.5 0 0 0"', 'polycoef="0 0.5 0.1 0 0"'))
    with pytest.raises(ValueError, match="nonlinear"):
        K.couplings_from_model(model)


def test_hand_couplings_and_active_joints(hand):
    model, data = hand
    drv = K.Driver(model, data)
    assert drv.active == ("lift", "index_mcp", "index_pip", "middle_mcp", "middle_pip",
                          "thumb_yaw", "thumb_mcp")
    assert {(c.follower, c.leader, c.ratio) for c in drv.couplings} == {
        ("thumb_ip", "thumb_mcp", 1.0), ("index_dip", "index_pip", 0.8), ("middle_dip", "middle_pip", 0.8)}


# -- driver set-up errors ----------------------------------------------------------------------

def test_unknown_joint_lists_the_real_ones(rig):
    with pytest.raises(KeyError) as info:
        K.Driver(*rig, joints=["bsae"])
    assert "no joint named 'bsae'" in str(info.value) and "'base', 'tip', 'reach'" in str(info.value)
    drv = K.Driver(*rig)
    with pytest.raises(KeyError, match="driven joints"):
        drv.set_goal({"nope": 1.0})


def test_free_joint_and_bad_coupling_range_are_refused(hand, rig):
    with pytest.raises(ValueError, match="free joint"):
        K.Driver(*hand, joints=["rod"])
    with pytest.raises(ValueError, match="outside tip's range"):
        K.Driver(*rig, couplings=[K.Coupling("tip", "base", 1.0)])
    with pytest.raises(ValueError, match="tolerance"):
        K.Driver(*rig, tolerance=-1)


# -- slew limits -------------------------------------------------------------------------------

def test_slew_limits_hold_and_goal_is_reached_exactly(rig):
    model, data = rig
    drv = K.Driver(model, data, slew=2.0, slide_slew=0.05, project=False)
    drv.set_goal({"base": 1.0, "reach": 0.03})
    rate_dt = {"base": 2.0 * model.opt.timestep, "reach": 0.05 * model.opt.timestep}
    steps = math.ceil(max(1.0 / rate_dt["base"], 0.03 / rate_dt["reach"])) + 1   # +1: rounding
    previous = drv.applied
    for _ in range(steps):
        drv.step()
        now = drv.applied
        for name, limit in rate_dt.items():
            assert abs(now[name] - previous[name]) <= limit + 1e-15
        assert now["tip"] == 0.5 * now["base"]             # coupling exact in every pose
        previous = now
    assert drv.applied["base"] == 1.0 and drv.applied["reach"] == 0.03
    assert data.joint("base").qpos[0] == 1.0 and drv.tracking_error() == 0.0


def test_no_slew_applies_the_goal_in_one_step_and_clips(rig):
    drv = K.Driver(*rig, slew=None, project=False)
    drv.set_goal({"base": 7.0})                              # beyond the range [-1, 1.5]
    drv.step()
    assert drv.applied["base"] == 1.5 and drv.applied["tip"] == 0.75


def test_follower_targets_command_their_leader(rig):
    drv = K.Driver(*rig)
    assert drv.set_goal({"tip": 0.4})["base"] == pytest.approx(0.8)     # seed 002 §4.3: arc / ratio
    with pytest.raises(ValueError, match="conflicting"):
        drv.set_goal({"tip": 0.4, "base": 0.1})


# -- projection --------------------------------------------------------------------------------

def _dry_run_free(model, goal, start, steps, slew):
    """Does the slewed path (no projection) from start to goal stay free of penetration?"""
    data = mujoco.MjData(model)
    data.qpos[:] = start
    mujoco.mj_forward(model, data)
    drv = K.Driver(model, data, slew=slew, project=False, final_forward=False)
    drv.set_goal(goal)
    depth = [drv.step().penetration for _ in range(steps)]
    return max(depth) == 0.0 and drv.applied == drv.goal


def test_random_commands_never_penetrate_and_reach_what_is_reachable(hand):
    model, data = hand
    tol, iterations, slew = 5e-4, 12, 10.0
    drv = K.Driver(model, data, slew=slew, tolerance=tol, iterations=iterations, final_forward=False)
    rng = np.random.default_rng(8)
    steps = 90                                              # 1.6 rad at 10 rad/s is 80 steps
    reversed_ = [name != "thumb_yaw" and name != "lift" for name in drv.active]
    outcomes = []
    for _ in range(5):
        start = data.qpos.copy()
        commands = rng.uniform(0, 255, len(drv.active))
        commands[0] = 0                                     # keep the lift down
        goal = drv.command(commands, reverse=reversed_)
        free_path = _dry_run_free(model, goal, start, steps, slew)
        previous = drv.applied
        for _ in range(steps):
            report = drv.step()
            assert report.penetration <= tol
            assert drv.coupling_error() == 0.0
            now = drv.applied
            for name in drv.active:
                limit = (slew if name != "lift" else 0.05) * model.opt.timestep
                assert abs(now[name] - previous[name]) <= limit + 1e-15
            previous = now
        if free_path:
            assert drv.applied == goal                     # reached exactly
        else:
            _assert_stopped_at_contact(drv, tol, slew * model.opt.timestep / 2**iterations)
        outcomes.append(free_path)
    assert any(outcomes) and not all(outcomes)             # both kinds of goal were exercised


def _assert_stopped_at_contact(drv, tol, resolution):
    """Every active joint short of its goal is blocked: a nudge of a few resolutions towards
    the goal penetrates beyond the tolerance, while the pose itself is within it."""
    assert drv.penetration() <= tol
    applied, goal = drv.applied, drv.goal
    blocked = [n for n in drv.active if applied[n] != goal[n]]
    assert blocked
    for name in blocked:
        nudged = dict(applied)
        nudged[name] += math.copysign(4 * resolution, goal[name] - applied[name])
        q = drv._couple(np.array([nudged[n] for n in drv.joints]))
        assert drv._unsafe(q), f"{name} stopped short of contact"
    drv._write_and_collide(np.array(list(applied.values())), final=True)


def test_closing_on_the_rod_stops_at_contact_with_projection_only(hand):
    model, data = hand
    off = K.Driver(model, data, project=False)
    off.set_goal(CLOSE)
    deepest_off = max(r.penetration for r in off.run(200))
    assert deepest_off > 0.02                              # fingers pass 2 cm into the rod
    off.reset({name: 0.0 for name in CLOSE})
    on = K.Driver(model, data, tolerance=2e-4)
    on.set_goal(CLOSE)
    reports = on.run(250)
    assert max(r.penetration for r in reports) <= 2e-4
    assert {"projected"} <= {r.status for r in reports} <= {"free", "projected"}
    _assert_stopped_at_contact(on, 2e-4, 5.0 * model.opt.timestep / 2**12)
    assert on.tracking_error() > 0.1                       # blocked joints are far from the goal


def test_a_blocked_joint_does_not_stop_the_others(rig):
    # the peg blocks "base"; lowering it ("reach", free to move) goes on at full speed
    model, data = rig
    drv = K.Driver(model, data, slew=1.0, slide_slew=0.05)
    drv.reset({"reach": 0.18})
    drv.set_goal({"base": 1.5, "reach": 0.0})
    limit = 0.05 * model.opt.timestep
    reports, reach = [], [0.18]
    for _ in range(1600):
        reports.append(drv.step())
        reach.append(drv.applied["reach"])
    moving = np.diff(reach)[np.array(reach[1:]) > 0]
    assert np.all(np.abs(moving + limit) < 1e-12)          # every step a full slide step down
    assert any("base" in r.limited for r in reports)       # while base was held back
    assert max(r.penetration for r in reports) <= drv.tolerance
    assert drv.applied["base"] == 1.5                      # and reached once the peg had gone


def test_fallback_from_a_penetrating_coupled_pose(hand):
    model, data = hand
    drv = K.Driver(model, data)
    safe = drv.applied
    drv.reset({"index_pip": 1.6, "index_mcp": 1.0})       # teleport: the coupled distal is in the rod
    assert drv.penetration() > drv.tolerance
    assert drv.last_safe == safe                           # the penetrating pose was not recorded
    report = drv.step()
    assert report.status == "fallback"
    assert report.penetration <= drv.tolerance and drv.coupling_error() == 0.0
    assert drv.applied["index_mcp"] < 1.0                 # cut back from the last safe (open) pose


def test_overlap_when_the_world_moves_into_the_hand_and_escape_by_opening(hand):
    model, data = hand
    drv = K.Driver(model, data)
    drv.set_goal(CLOSE)
    drv.run(250)
    data.joint("rod").qpos[2] -= 0.01                      # the rod sinks into the fingers
    report = drv.step()
    assert report.status == "overlap" and report.penetration > drv.tolerance
    held = report.penetration
    drv.set_goal({name: 0.0 for name in CLOSE})            # command the hand open
    depths = [r.penetration for r in drv.run(150)]
    assert depths[0] <= held and max(np.diff(depths)) <= 1e-12   # never worse while backing out
    assert depths[-1] == 0.0


def _bare_hand():
    """Chapter 08 § 1's hand without its <exclude>: the thumb's root is 13.5 mm inside the palm."""
    spec = labkit.spec("hand")
    spec.delete(spec.excludes[0])
    return labkit.load(spec)


def test_a_start_overlap_that_no_motion_changes_blocks_nothing():
    # issue 20: the driver used to accept only strictly shallower poses once no safe pose was
    # known, so this overlap, which bending a finger cannot change, froze every joint
    model, data = _bare_hand()
    drv = K.Driver(model, data)
    palm_thumb = tuple(sorted((model.geom("palm").id, model.geom("thumb_prox").id)))
    start = drv.overlaps()
    assert drv.last_safe is None and list(start) == [palm_thumb]
    drv.set_goal({"index_mcp": 0.5, "thumb_yaw": 0.4})
    reports = drv.run(100)                         # 0.5 rad at 5 rad/s: 50 steps of 2 ms
    assert {r.status for r in reports} == {"overlap"} and drv.tracking_error() == 0.0
    # MuJoCo's own contact: the overlap is exactly as deep as at the start (the thumb root, a
    # capsule's end sphere, turns about its own centre), no deeper
    depths = [-c.dist for c in data.contact[:data.ncon]
              if tuple(sorted((c.geom1, c.geom2))) == palm_thumb]
    assert max(depths) <= start[palm_thumb] + K.driver.SAME_DEPTH


def test_a_start_overlap_does_not_stop_contacts_being_projected():
    # closing the bare hand on the rod: the fingers still stop at the rod's surface
    model, data = _bare_hand()
    drv = K.Driver(model, data)
    drv.set_goal(CLOSE)
    reports = drv.run(300)
    assert {r.status for r in reports} == {"overlap"} and any(r.limited for r in reports)
    rod = model.geom("rod").id
    touching = [c.dist for c in data.contact[:data.ncon] if rod in (c.geom1, c.geom2)]
    assert touching and min(touching) >= -drv.tolerance      # in contact, within the tolerance


@pytest.fixture
def peg_in_finger():
    """The rig with the peg 3 mm into the proximal link from below: reach 0.19 m puts the peg's
    top (z = -0.01 + 0.003) 3 mm above the capsule's underside (z = -0.01)."""
    model, data = labkit.load(RIG)
    data.joint("reach").qpos[0] = 0.19
    return model, data


def test_a_start_overlap_may_not_deepen_and_stays_out_once_left(peg_in_finger):
    model, data = peg_in_finger
    drv = K.Driver(model, data, slew=None)
    pair = tuple(sorted((model.geom("prox").id, model.geom("peg").id)))
    assert drv.overlaps()[pair] == pytest.approx(0.003, abs=1e-9)
    drv.set_goal({"reach": 0.2})                    # push the peg 1 cm further in: refused
    report = drv.step()
    assert report.status == "overlap" and report.limited == ("reach",)
    assert drv.applied["reach"] == pytest.approx(0.19, abs=1e-9)
    drv.set_goal({"reach": 0.19, "base": -0.02})    # lift the finger 1.4 mm at the peg: accepted
    assert drv.step().status == "overlap" and drv.applied["base"] == -0.02
    lifted = drv.overlaps()[pair]
    # deepest point: the peg top's edge nearest the hinge, (x, z) = (0.067, -0.007), at distance
    # |x sin θ − z cos θ| from the tilted capsule's axis; depth = radius − that distance
    axis_distance = 0.067 * math.sin(0.02) + 0.007 * math.cos(0.02)
    assert lifted == pytest.approx(0.01 - axis_distance, abs=1e-12)     # double-precision geometry
    drv.set_goal({"base": 0.0})                     # back down: deeper than it has been, refused
    report = drv.step()
    assert report.status == "overlap" and report.limited == ("base",)
    assert drv.overlaps()[pair] <= lifted + K.driver.SAME_DEPTH
    drv.set_goal({"base": -0.2})                    # off the peg: free, and a safe pose at last
    assert drv.step().status == "free" and drv.penetration() == 0.0 and drv.last_safe is not None
    drv.set_goal({"base": 0.0})                     # and down again: stopped at the peg's surface
    report = drv.step()
    assert report.status == "projected" and drv.penetration() <= drv.tolerance
    assert -0.2 < drv.applied["base"] < 0.0


def test_a_new_overlap_is_refused_while_an_old_one_is_tolerated():
    spec = mujoco.MjSpec.from_string(RIG)
    spec.worldbody.add_geom(name="wall", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.05, 0.05, 0.005],
                            pos=[0.05, 0, 0.03])    # a slab 2.5 cm above the finger
    model = spec.compile()
    data = mujoco.MjData(model)
    data.joint("reach").qpos[0] = 0.19              # the peg 3 mm into the finger, as above
    drv = K.Driver(model, data, slew=None)
    assert drv.last_safe is None and drv.penetration() == pytest.approx(0.003, abs=1e-9)
    drv.set_goal({"base": -0.2})                    # the finger swings off the peg, into the slab
    report = drv.step()
    assert report.status == "overlap" and report.limited == ("base",)
    assert -0.2 < drv.applied["base"] < 0.0 and drv.penetration() <= drv.tolerance
    wall = model.geom("wall").id
    touching = [c.dist for c in data.contact[:data.ncon] if wall in (c.geom1, c.geom2)]
    assert touching and min(touching) >= -drv.tolerance      # stopped at the slab, not in it


def test_the_collision_evaluator_builds_no_constraint_rows(hand):
    # chapter 08 § 7: a kinematic hand pressing on the rod has contacts but no constraint rows, so no
    # contact force exists; with final_forward the written pose gets them (forces never applied)
    model, data = hand
    drv = K.Driver(model, data)
    drv.set_goal(CLOSE)
    drv.run(250)
    assert data.ncon >= 1 and data.nefc == 0
    model, data = labkit.load("hand")
    drv = K.Driver(model, data, final_forward=True)
    drv.set_goal(CLOSE)
    drv.run(250)
    assert data.nefc > 0


def test_evaluators_agree_and_calls_are_counted(hand):
    model, data = hand
    poses, calls = [], []
    for how in K.EVALUATORS:
        mujoco.mj_resetData(model, data)
        drv = K.Driver(model, data, evaluate=how, final_forward=False)
        drv.set_goal(CLOSE)
        drv.run(120)
        poses.append(drv.applied)
        calls.append(dict(drv.calls))
    assert poses[0] == poses[1] == poses[2]
    assert calls[0]["mj_kinematics"] == calls[0]["mj_collision"] == calls[1]["mj_fwdPosition"]
    assert calls[1]["mj_fwdPosition"] == calls[2]["mj_forward"]


def test_large_steps_can_tunnel_through_a_thin_peg(rig):
    # a known limit of endpoint checks: the projection only looks at the poses it writes
    model, data = rig
    fast = K.Driver(model, data, slew=None)
    fast.reset({"base": -1.0, "reach": 0.18})
    fast.set_goal({"base": 1.5})
    assert fast.step().status == "free" and fast.applied["base"] == 1.5     # jumped through
    slow = K.Driver(model, data, slew=2.0)
    slow.reset({"base": -1.0, "reach": 0.18})
    slow.set_goal({"base": 1.5})
    slow.run(800)
    assert slow.applied["base"] < 0.5 and slow.penetration() <= slow.tolerance


def test_penetration_counts_only_the_chosen_geoms(hand):
    model, data = hand
    rod, post = model.geom("rod").id, model.geom("post_left").id
    data.joint("rod").qpos[2] -= 0.003                     # press the rod into its post
    mujoco.mj_forward(model, data)
    assert K.penetration(model, data) == pytest.approx(0.003, abs=1e-6)
    assert K.penetration(model, data, [rod, post]) == pytest.approx(0.003, abs=1e-6)
    assert K.penetration(model, data, K.moved_geoms(model, ["index_mcp"])) == 0.0
    assert set(K.moved_geoms(model, ["index_pip"])) == {
        g for g in range(model.ngeom) if model.body(model.geom_bodyid[g]).name in ("index_mid", "index_dist")}


def test_public_names_stay_importable_from_labkit_kinematic():
    for name in ("Coupling", "Driver", "StepReport", "apply_couplings", "command_to_targets",
                 "couplings_from_model", "joint_ranges", "moved_geoms", "penetration", "EVALUATORS"):
        assert hasattr(K, name), name
    from labkit.kinematic.driver import Driver
    assert K.Driver is Driver


def test_slew_lands_on_the_goal_and_respects_the_limits():
    from labkit.kinematic.commands import slew_towards

    q = slew_towards(np.array([0.0, 0.0, 0.95]), np.array([1.0, 0.05, 2.0]), np.full(3, 0.1),
             np.full(3, -1.0), np.ones(3))
    assert q.tolist() == [0.1, 0.05, 1.0]   # limited, landed exactly, clipped to hi


def test_bisect_stops_a_blocked_joint_within_its_step_over_2_to_the_iterations():
    from labkit.kinematic.projection import bisect

    wall = 0.3   # joint 0 may not pass 0.3; joint 1 is free; nothing is coupled
    pose, blocked = bisect(np.zeros(2), np.array([1.0, 0.5]), [0, 1], lambda q: q[0] > wall,
                           lambda q: q, 10)
    assert blocked == [0] and pose[1] == 0.5
    assert wall - 1.0 / 2**10 <= pose[0] <= wall


def test_unknown_joint_names_list_the_model_joints(rig):
    model, _ = rig
    with pytest.raises(KeyError, match=r"no joint named 'bse'; its joints: \["):
        K.joint_ranges(model, ["bse"])


# -- the driver claims of course/08_kinematic_drive.ipynb ----------------------------------------
# They test labkit's driver (its mapping, slew limit, projection and bookkeeping), not MuJoCo, so
# they live here; the chapter prints the same numbers and keeps only its claims about MuJoCo.

def test_chapter_08_command_mapping_and_mimic_targets(hand):
    # the G20 notes' example: a reversed channel, range 0–1.22 rad: 0 → 1.22, 255 → 0, linear between
    example = K.command_to_targets([0, 255, 127.5], ["at 0", "at 255", "half"], 0.0, 1.22, reverse=True)
    assert tuple(example.values()) == pytest.approx((1.22, 0.0, 0.61), abs=1e-15)
    model, data = hand
    driver = K.Driver(model, data)
    assert driver.active == ("lift", "index_mcp", "index_pip", "middle_mcp", "middle_pip", "thumb_yaw",
                             "thumb_mcp")
    reverse = [n not in ("lift", "thumb_yaw") for n in driver.active]
    fist = driver.command([0, 0, 0, 0, 0, 127.5, 0], reverse=reverse)
    for name in ("index_mcp", "index_pip", "middle_mcp", "middle_pip", "thumb_mcp"):
        assert fist[name] == model.joint(name).range[1]                     # command 0 = upper limit
    assert fist["index_dip"] == 0.8 * fist["index_pip"] and fist["thumb_ip"] == fist["thumb_mcp"]
    # commands outside 0–255 are clamped
    assert driver.command([300] * 7, reverse=reverse) == driver.command([255] * 7, reverse=reverse)
    assert driver.command([-40] * 7, reverse=reverse) == driver.command([0] * 7, reverse=reverse)
    # a mimic's target commands its leader at target / ratio, and the mimic lands on it
    goal = driver.set_goal({"index_dip": 0.6})
    assert (goal["index_pip"], goal["index_dip"]) == pytest.approx((0.6 / 0.8, 0.6), abs=1e-15)
    # without the division (the arc written to the leader) the mimic lands at ratio·arc: short of the
    # arc for this hand's 0.8, as chapter 08 §2 prints (beyond it only for a ratio above 1)
    undivided = driver.set_goal({"index_pip": 0.6})
    assert undivided["index_dip"] == pytest.approx(0.8 * 0.6, abs=1e-15) and undivided["index_dip"] < 0.6


@pytest.fixture(scope="module")
def chapter_08_closes():
    """The chapter's two closes of the hand on the rod: without projection (200 steps) and with the
    G20 notes' projection (0.5 mm, 12 halvings, 300 steps); poses and step reports."""
    model, data = labkit.load("hand")
    free = K.Driver(model, data, slew=5.0, project=False)
    free.set_goal(CLOSE)
    poses, depth_free = [free.applied], []
    for _ in range(200):
        depth_free.append(free.step().penetration)
        poses.append(free.applied)
    model, data = labkit.load("hand")
    projected = K.Driver(model, data, tolerance=5e-4, iterations=12)
    projected.set_goal(CLOSE)
    reports = projected.run(300)
    return {"free": free, "poses": poses, "depth_free": depth_free, "projected": projected,
            "reports": reports, "model": model, "data": data}


def test_chapter_08_slew_limit_mimic_rate_and_arrival(chapter_08_closes):
    free, poses = chapter_08_closes["free"], chapter_08_closes["poses"]
    q = {name: np.array([p[name] for p in poses]) for name in free.joints}
    step = 5.0 * free.dt                                                  # 5 rad/s × 2 ms = 0.01 rad
    assert max(np.abs(np.diff(q[n])).max() for n in free.active) == pytest.approx(step, rel=1e-12)
    assert np.abs(np.diff(q["index_dip"])).max() == pytest.approx(0.8 * step, rel=1e-9)
    t = np.arange(len(poses)) * free.dt
    assert t[np.argmax(q["index_pip"] == free.goal["index_pip"])] == pytest.approx(1.6 / 5.0, abs=free.dt)
    # nothing blocks the first 80 steps: the written pose is the slewed command, exactly
    assert np.abs(q["index_mcp"][:80] - step * np.arange(80)).max() <= 1e-12


def test_chapter_08_projection_tolerance_resting_depth_and_cost(chapter_08_closes):
    projected, reports = chapter_08_closes["projected"], chapter_08_closes["reports"]
    depth = np.array([r.penetration for r in reports])
    assert max(chapter_08_closes["depth_free"]) > 10 * 5e-4             # without projection: > 10× tol
    assert depth.max() <= 5e-4 and projected.coupling_error() == 0.0
    resolution = 5.0 * projected.dt / 2**12 * 0.1                        # rad per halving × 0.1 m arm
    assert 5e-4 - 5 * resolution <= depth[-1] <= 5e-4                   # blocked fingers rest at the tol
    free_costs = {r.evaluations for r in reports if r.status == "free"}
    assert free_costs == {1} and max(r.evaluations for r in reports) == 1 + 1 + 5 * (1 + 12) + 1
    assert sum(r.evaluations for r in reports) / len(reports) > 10       # closing on the rod: > 10 per step
    assert {r.status for r in reports} == {"free", "projected"}


def test_chapter_08_a_blocked_joint_does_not_hold_the_others_back():
    model, data = labkit.load("hand")
    driver = K.Driver(model, data)
    driver.set_goal(CLOSE)
    before, mixed = driver.applied, 0
    for _ in range(300):
        report = driver.step()
        after = driver.applied
        full = [n for n in driver.active if np.isclose(abs(after[n] - before[n]), 5.0 * driver.dt, rtol=1e-9)]
        mixed += bool(report.limited) and bool(full)
        before = after
    assert mixed >= 1


def test_chapter_08_fallback_stuck_escape_and_refused_lift():
    model, data = labkit.load("hand")
    fallback = K.Driver(model, data)
    fallback.reset({"index_mcp": 1.0, "index_pip": 1.6})                 # teleported into the rod
    report = fallback.step()
    assert (report.status, report.penetration <= fallback.tolerance, fallback.coupling_error()) == \
        ("fallback", True, 0.0)
    model, data = labkit.load("hand")
    driver = K.Driver(model, data)
    driver.set_goal(CLOSE)
    driver.run(300)
    data.joint("rod").qpos[2] -= 0.01                                     # the world moves into the hand
    probe = mujoco.MjData(model)
    probe.qpos[:] = data.qpos
    for name, value in driver.last_safe.items():
        probe.joint(name).qpos[0] = value
    mujoco.mj_kinematics(model, probe)
    mujoco.mj_collision(model, probe)
    stale = K.penetration(model, probe, driver.geoms)
    report = driver.step()
    assert stale > 5e-4 and report.status == "overlap" and report.penetration <= stale
    driver.set_goal({name: 0.0 for name in CLOSE})
    escape = np.array([r.penetration for r in driver.run(150)])
    assert np.diff(escape).max() <= 0.0 and escape[-1] == 0.0
    # closed on the rod again, a lift is refused: the fingers under the rod would pass through it
    data.joint("rod").qpos[2] += 0.01
    driver.set_goal(CLOSE)
    driver.run(300)
    driver.set_goal({"lift": 0.04})
    lifting = driver.run(100)
    assert driver.applied["lift"] < 1e-3
    assert lifting[-1].status == "projected" and "lift" in lifting[-1].limited
    assert driver.coupling_error() == 0.0
