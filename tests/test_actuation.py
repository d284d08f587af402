"""labkit.actuation: every stage of the force chain, recomputed and cross-checked with MuJoCo.

trace() raises TraceMismatch itself when a recomputed stage disagrees with MuJoCo's arrays,
so every call below is already a check against the engine.  The tests add expectations
derived by hand (gear, clamps, servo laws, filters, delays) so that they do not rest on
labkit's recomputation alone.
"""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

import labkit
from labkit import display
from labkit.actuation import (
    Trace,
    TraceMismatch,
    explain,
    laws,
    length_gradient,
    moment_matrix,
    params,
    rounding,
    trace,
)

# the module labkit/actuation/trace.py (the package's attribute ``trace`` is the function)
trace_module = importlib.import_module("labkit.actuation.trace")

H = 0.002  # timestep of every test model (s)

WORLD = """
<worldbody>
  <body name="arm"><joint name="hinge" axis="0 1 0" range="-2 2"/>
    <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/><site name="tip" pos="0.3 0 0"/></body>
  <body name="wheel" pos="0 1 0"><joint name="spin" axis="0 1 0"/>
    <geom type="cylinder" size="0.1 0.02" mass="1"/></body>
  <body name="cart" pos="0 -1 0"><joint name="rail" type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.1 0.1" mass="2"/></body>
  <body name="head" pos="0 2 0"><joint name="neck" type="ball"/>
    <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0" mass="1"/><site name="eye" pos="0.3 0 0"/></body>
  <site name="base" pos="0 2 0"/>
  <body name="drone" pos="0 3 1"><freejoint name="float"/>
    <geom type="box" size="0.1 0.1 0.02" mass="0.5"/><site name="prop" pos="0.1 0 0"/></body>
</worldbody>
<tendon><fixed name="diff"><joint joint="hinge" coef="1"/><joint joint="spin" coef="-0.5"/></fixed></tendon>
"""


def build(actuators: str, *, extra: str = "", world: str = WORLD) -> tuple[mujoco.MjModel, mujoco.MjData]:
    xml = (f'<mujoco><compiler autolimits="true"/><option timestep="{H}"/>{extra}{world}'
           f"<actuator>{actuators}</actuator></mujoco>")
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def check_against_data(model: mujoco.MjModel, data: mujoco.MjData, t: Trace) -> None:
    """The contract, stated explicitly: right after mj_forward, force and qfrc_actuator are MuJoCo's."""
    out = slice(model.actuator_outadr[t.id], model.actuator_outadr[t.id] + model.actuator_outnum[t.id])
    assert t.fresh
    np.testing.assert_array_equal(t.force, data.actuator_force[out])
    np.testing.assert_array_equal(t.qfrc_actuator, data.qfrc_actuator[t.dofs])
    adr, num = model.actuator_ctrladr[t.id], model.actuator_ctrlnum[t.id]
    np.testing.assert_array_equal(t.request, data.ctrl[adr:adr + num])
    assert t.qfrc.shape == (model.nv,) and t.input.shape == t.request.shape


def run(model: mujoco.MjModel, data: mujoco.MjData, ctrl: list[float], steps: int = 30,
        every: int = 6) -> list[Trace]:
    """Trace every actuator after mj_forward, then every ``every`` steps over ``steps`` steps."""
    data.ctrl[:] = ctrl
    traces = []
    for k in range(steps + 1):
        if k % every == 0:
            mujoco.mj_forward(model, data)
            for i in range(model.nactuator):
                t = trace(model, data, i)
                check_against_data(model, data, t)
                traces.append(t)
        mujoco.mj_step(model, data)
    return traces


# ---------------------------------------------------------------------------------------
# every family and transmission, stepped (stateful ones change their act)

FAMILIES = {
    "motor": ('<motor joint="hinge" gear="2"/>', [0.8]),
    "position": ('<position joint="hinge" kp="10" kv="1" gear="3"/>', [0.6]),
    "position-timeconst": ('<position joint="hinge" kp="10" timeconst="0.05"/>', [1.0]),
    "position-ball-wrap": ('<position joint="neck" gear="0 0 1" kp="2"/>', [2 * math.pi + 0.3]),
    "velocity": ('<velocity joint="spin" kv="3"/>', [2.0]),
    "intvelocity": ('<intvelocity joint="hinge" kp="5" actrange="-0.02 0.02"/>', [1.0]),
    "general-none": ('<general joint="rail" gainprm="4" biastype="affine" biasprm="0.1 -2 -0.5"/>', [0.3]),
    "general-integrator": ('<general joint="rail" dyntype="integrator" gaintype="affine" gainprm="1 2 3" '
                           'biastype="affine" biasprm="1 2 3" actrange="-0.01 0.01"/>', [1.0]),
    "general-filter": ('<general joint="hinge" dyntype="filter" dynprm="0.1"/>', [1.0]),
    "general-filterexact-actearly": ('<general joint="hinge" dyntype="filterexact" dynprm="0.02" '
                                     'actearly="true" actrange="-0.5 0.5"/>', [1.0]),
    "muscle": ('<muscle joint="hinge" lengthrange="-2 2" tausmooth="0.1"/>', [0.7]),
    "pid": ('<pid joint="hinge" kp="5" kv="0.5" ki="2" imax="0.003" slewmax="1" input="pos vel ff"/>',
            [0.5, 0.1, 0.2]),
    "pid-vel-ff": ('<pid joint="spin" input="vel ff" kv="3" velrange="-1 1" ffrange="-2 2"/>', [5.0, -0.5]),
    "pid-actearly": ('<general joint="hinge" gaintype="pid" biastype="affine" biasprm="0 -4 -1" gainprm="3" '
                     'dyntype="pid" dynprm="0.2 2" input="pos ff" actearly="true"/>', [0.4, 0.1]),
    "pid-ball-wrap": ('<pid joint="neck" gear="1 0 0" kp="2" ki="1" input="pos"/>', [2 * math.pi - 0.2]),
    "orientation-expmap": ('<orientation joint="neck" kp="3" kv="0.5"/>', [0.3, -0.2, 0.5]),
    "orientation-quat": ('<orientation joint="neck" input="quat" kp="4" forcerange="0 0.2"/>',
                         [0.9, 0.3, -0.2, 0.1]),
    "orientation-refsite": ('<orientation site="eye" refsite="base" kp="2" kv="0.1"/>', [0.1, 0.4, -0.3]),
    "orientation-integrator": ('<general joint="neck" gaintype="so3" biastype="so3" gainprm="2" '
                               'biasprm="0 -2 -0.1" dyntype="integrator" actearly="true"/>',
                               [1.0, -2.0, 0.5]),
    "dcmotor-voltage": ('<dcmotor joint="spin" motorconst="0.1" resistance="2"/>', [6.0]),
    "dcmotor-full": ('<dcmotor joint="spin" motorconst="0.1" resistance="2" inductance="0.01 0" '
                     'thermal="1 10 0 0.004 25 20" lugre="100 1 0.1 0.2 0.1" cogging="0.01 6 0.1" '
                     'saturation="0.05 0 0"/>', [6.0]),
    "dcmotor-controller": ('<dcmotor joint="spin" motorconst="0.1" resistance="2" input="pos vel ff voltage" '
                           'controller="1 0.5 0.1 2 0.3 12"/>', [1.0, 0.0, 0.01, 0.5]),
    "dcmotor-current-limit": ('<dcmotor joint="spin" motorconst="0.1" resistance="2" input="pos" '
                              'controller="1 0.5 0.1 2 0.3 0.5" inductance="0 0.01" saturation="0 0 5"/>',
                              [2.0]),
    "dcmotor-passive": ('<dcmotor joint="spin" motorconst="0.1" resistance="2" input="none" '
                        'cogging="0.02 4 0"/>', []),
    "damper": ('<damper joint="spin" kv="2" ctrlrange="0 1"/>', [0.5]),
    "cylinder": ('<cylinder joint="rail" timeconst="0.05" area="0.01"/>', [100.0]),
    "delay-zoh": ('<motor joint="hinge" delay="0.006" nsample="4"/>', [1.0]),
    "delay-linear-pid": ('<pid joint="hinge" delay="0.005" nsample="3" interp="linear" kv="1"/>', [0.5, 0.2]),
    "tendon": ('<motor tendon="diff" gear="2"/>', [0.7]),
    "site": ('<motor site="prop" gear="0 0 1 0 0.2 0"/>', [2.0]),
    "site-refsite-translation": ('<position site="tip" refsite="base" gear="1 0 0 0 0 0" kp="3"/>', [0.2]),
    "site-refsite-rotation": ('<position site="eye" refsite="base" gear="0 0 0 0 0 1" kp="3"/>', [7.0]),
    "free-joint": ('<motor joint="float" gear="1 0 0 0 0 1"/>', [0.5]),
    "jointinparent-ball": ('<motor jointinparent="neck" gear="0 1 0"/>', [0.5]),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_stages_match_mujoco_while_stepping(family):
    xml, ctrl = FAMILIES[family]
    model, data = build(xml)
    traces = run(model, data, ctrl)
    assert all(t.verified for t in traces)
    if model.na:  # stateful: the activation really evolved over the run
        assert not np.array_equal(traces[0].act, traces[-1].act)


def test_actuator_damping_is_passive_not_actuator_force():
    model, data = build('<motor joint="hinge" gear="3" damping="0.5" armature="0.02"/>',
                        extra='<option gravity="0 0 0"/>')
    data.qvel[0], data.ctrl[0] = 1.0, 0.2
    mujoco.mj_forward(model, data)
    t = trace(model, data, 0)
    assert t.qfrc_actuator[0] == pytest.approx(0.6)  # only gear·force: damping is not in qfrc_actuator
    assert data.qfrc_damper[0] == pytest.approx(-0.5 * 9 * 1.0)  # reflected by gear²
    assert any("passive force" in n for n in t.notes)


def test_trace_after_mj_step_describes_the_current_state():
    model, data = build('<position joint="hinge" kp="10" kv="1"/>')
    data.ctrl[0] = 1.0
    for _ in range(10):
        mujoco.mj_step(model, data)
    t = trace(model, data, 0)  # no mj_forward: data.actuator_force is the last step's
    assert not t.fresh and any("before the last mj_step" in n for n in t.notes)
    assert t.force[0] != data.actuator_force[0]
    expected = 10 * (1.0 - data.qpos[0]) - 1 * data.qvel[0]  # position law at the current state
    assert t.force[0] == pytest.approx(expected, rel=1e-12)
    before = data.actuator_force.copy()
    mujoco.mj_forward(model, data)
    assert t.force[0] == data.actuator_force[0] and not np.array_equal(before, data.actuator_force)


# ---------------------------------------------------------------------------------------
# hand-derived expectations


def test_clamped_chain_request_input_force_and_qfrc_actuator_all_differ():
    # seed 001 §7: request 10 → ctrlrange [-1, 1] → forcerange 0.8 → gear 2 → joint limit 1.2
    world = WORLD.replace('<joint name="spin" axis="0 1 0"/>',
                          '<joint name="spin" axis="0 1 0" actuatorfrcrange="-1.2 1.2"/>')
    model, data = build('<motor name="elbow" joint="spin" gear="2" ctrlrange="-1 1" forcerange="-0.8 0.8"/>',
                        world=world)
    data.ctrl[0] = 10
    mujoco.mj_forward(model, data)
    t = trace(model, data, "elbow")
    assert (t.request[0], t.input[0], t.force_raw[0], t.force[0]) == (10, 1, 1, 0.8)
    assert t.qfrc[model.jnt_dofadr[1]] == pytest.approx(1.6, rel=1e-15)
    assert t.qfrc_actuator[0] == 1.2
    assert len({t.request[0], t.input[0], t.force[0], t.qfrc_actuator[0]}) == 4
    assert data.ctrl[0] == 10  # clamping acts on a local copy
    assert any("clamps the summed actuator force" in n for n in t.notes)


def test_trace_stages_on_the_course_models():
    # chapters 03 and 04 check MuJoCo's own output against a chain computed by hand, with each
    # clamp lifted in turn; that the tracer's intermediate stages say the same is labkit's business
    model, data = labkit.load("clamp_elbow")
    elbow = model.actuator("elbow").id
    data.ctrl[model.actuator_ctrladr[elbow]] = 10.0
    mujoco.mj_forward(model, data)
    t = trace(model, data, "elbow")
    assert (t.request[0], t.input[0], t.force_raw[0], t.force[0]) == (10, 1, 1, 0.8)
    assert t.qfrc[model.joint("elbow").dofadr[0]] == pytest.approx(1.6, rel=1e-15)
    assert t.qfrc_actuator[0] == 1.2
    from labkit.exercises.ch03 import ARM
    model, data = labkit.load(ARM)
    data.ctrl[0] = 3.0                                    # servo: ctrlrange ±1.2, kp 50, forcerange ±8, q = 0
    mujoco.mj_forward(model, data)
    t = trace(model, data, "servo")
    assert (t.request[0], t.input[0], t.force[0]) == (3.0, 1.2, 8.0)
    assert t.force_raw[0] == pytest.approx(50 * 1.2, rel=1e-15)


def test_gear_scales_length_velocity_and_force():
    model, data = build('<motor joint="hinge" gear="2"/>')
    data.qpos[0], data.qvel[0], data.ctrl[0] = 0.3, -0.5, 0.8
    mujoco.mj_forward(model, data)
    t = trace(model, data, 0)
    assert t.length[0] == pytest.approx(0.6) and t.velocity[0] == pytest.approx(-1.0)
    assert t.force[0] == 0.8 and t.qfrc_actuator[0] == pytest.approx(1.6)


def test_position_servo_with_gear_has_gear_squared_stiffness_and_damping():
    # seed 001 §9 exercise 1: gear 3, kp 10, kv 1, target q 0.2 → ctrl 0.6; stiffness 90, damping 9
    model, data = build('<position joint="hinge" kp="10" kv="1" gear="3"/>')
    data.ctrl[0] = 0.6

    def torque(q: float, v: float) -> float:
        data.qpos[0], data.qvel[0] = q, v
        mujoco.mj_forward(model, data)
        return trace(model, data, 0).qfrc_actuator[0]

    assert torque(0.2, 0.0) == pytest.approx(0.0, abs=1e-12)
    assert (torque(0.25, 0) - torque(0.15, 0)) / 0.1 == pytest.approx(-90, rel=1e-9)
    assert (torque(0.2, 0.1) - torque(0.2, -0.1)) / 0.2 == pytest.approx(-9, rel=1e-9)


def test_filterexact_position_integrates_its_setpoint_exactly():
    model, data = build('<position joint="hinge" kp="10" timeconst="0.05"/>')
    assert model.actuator_dyntype[0] == mujoco.mjtDyn.mjDYN_FILTEREXACT
    data.ctrl[0] = 1.0
    for n in range(1, 4):
        mujoco.mj_step(model, data)
        t = trace(model, data, 0)
        assert t.act[0] == pytest.approx(1 - math.exp(-n * H / 0.05), rel=1e-12)
        assert t.act_dot[0] == pytest.approx((1 - t.act[0]) / 0.05, rel=1e-12)


def test_intvelocity_integrates_ctrl_and_actrange_bounds_the_setpoint():
    model, data = build('<intvelocity joint="hinge" kp="5" actrange="-0.015 0.015"/>')
    data.ctrl[0] = 1.0
    for _ in range(5):
        mujoco.mj_step(model, data)
    assert trace(model, data, 0).act[0] == pytest.approx(5 * H)
    for _ in range(10):
        mujoco.mj_step(model, data)
    t = trace(model, data, 0)
    assert t.act[0] == 0.015 and t.act_dot[0] == 1.0  # the ctrl still says "move", actrange holds the target


def test_pid_law_integral_imax_and_slew():
    model, data = build('<pid joint="hinge" kp="5" kv="0.5" ki="2" imax="0.003" slewmax="1" '
                        'input="pos vel ff"/>')
    assert model.actuator_actnum[0] == 2  # [slew, integral]
    data.ctrl[:] = [0.5, 0.1, 0.2]
    mujoco.mj_step(model, data)
    t = trace(model, data, 0)
    slew, integral = t.act
    assert slew == pytest.approx(1 * H)  # the setpoint moved by slewmax·h, not to 0.5
    assert t.input[0] == pytest.approx(2 * H)  # and moves by slewmax·h again in the next step
    expected = 5 * (t.input[0] - t.length[0]) + 0.5 * (0.1 - t.velocity[0]) + 0.2 + 2 * integral
    assert t.force[0] == pytest.approx(expected, rel=1e-12)
    for _ in range(400):
        mujoco.mj_step(model, data)
    t = trace(model, data, 0)
    assert t.act[1] <= 0.003 + H * 1.0  # anti-windup: accumulation stops at imax (one step of overshoot)
    assert t.act_dot[1] <= 0 or t.act[1] < 0.003


def test_pid_inputs_are_compacted_and_a_missing_pos_setpoint_is_zero():
    # seed 001 §9 exercise 2: input="vel ff" → ctrl[adr] is vel, ctrl[adr + 1] is ff
    model, data = build('<motor joint="rail"/><pid name="p" joint="hinge" input="vel ff" kv="3"/>')
    assert model.nu == 3 and model.actuator_ctrladr[1] == 1 and model.actuator_ctrlnum[1] == 2
    data.qpos[0], data.ctrl[1:] = 0.4, [0.5, 0.2]
    mujoco.mj_forward(model, data)
    t = trace(model, data, "p")
    assert t.stage("request").labels == ("vel", "ff")
    # kp keeps its default 1 and pulls towards the absent (zero) position setpoint
    expected = 1 * (0 - 0.4) + 3 * (0.5 - data.qvel[0]) + 0.2
    assert t.force[0] == pytest.approx(expected, rel=1e-12)


def test_orientation_quat_is_normalised_antipodal_and_norm_limited():
    model, data = build('<orientation joint="neck" input="quat" kp="4" forcerange="0 0.2"/>')
    assert (model.nu, model.nout, model.actuator_outnum[0]) == (4, 3, 3)
    q = np.array([0.9, 0.3, -0.2, 0.1])
    forces = []
    for ctrl in (q, -q, 3 * q):
        data.ctrl[:] = ctrl
        mujoco.mj_forward(model, data)
        forces.append(trace(model, data, 0))
    for t in forces[1:]:
        np.testing.assert_allclose(t.force, forces[0].force, rtol=1e-12)
    t = forces[0]
    assert np.linalg.norm(t.force) == pytest.approx(0.2, rel=1e-12)
    assert np.linalg.norm(t.force_raw) > 0.2
    np.testing.assert_allclose(np.cross(t.force, t.force_raw), 0, atol=1e-12)  # direction kept


def test_a_disabled_actuator_group_produces_no_force():
    model, data = build('<motor joint="hinge" group="2"/><motor joint="hinge" gear="3"/>',
                        extra='<option actuatorgroupdisable="2"/>')
    data.ctrl[:] = [1.0, 1.0]
    mujoco.mj_forward(model, data)
    off, on = trace(model, data, 0), trace(model, data, 1)
    assert off.force[0] == 0 and off.input[0] == 1 and any("group 2 is disabled" in n for n in off.notes)
    assert on.qfrc_actuator[0] == 3.0


def test_orientation_zero_quaternion_reads_as_identity():
    model, data = build('<orientation joint="neck" input="quat" kp="4"/>')
    data.qpos[3:7] = [math.cos(0.2), math.sin(0.2), 0, 0]  # neck turned 0.4 rad about x
    data.ctrl[:] = 0
    mujoco.mj_forward(model, data)
    zero = trace(model, data, 0)
    data.ctrl[:] = [1, 0, 0, 0]
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(zero.force, trace(model, data, 0).force, rtol=1e-12)
    np.testing.assert_allclose(zero.force, [-4 * 0.4, 0, 0], rtol=1e-9, atol=1e-12)


def test_a_bad_control_zeroes_every_input():
    model, data = build('<motor joint="hinge"/><motor joint="spin" gear="3"/>')
    data.ctrl[:] = [np.nan, 1.0]
    with labkit.mujoco_warnings() as caught:  # MuJoCo warns (and would write MUJOCO_LOG.TXT)
        mujoco.mj_forward(model, data)
        t = trace(model, data, 1)
    assert caught and "CTRL" in caught[0]
    assert t.request[0] == 1.0 and t.input[0] == 0 and t.force[0] == 0
    assert any("zeroes every input" in n for n in t.notes)


def test_orientation_expmap_error_is_the_rotation_vector_at_rest():
    model, data = build('<orientation joint="neck" kp="3"/>')
    data.ctrl[:] = [0.3, -0.2, 0.5]
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(trace(model, data, 0).force, 3 * np.array([0.3, -0.2, 0.5]), rtol=1e-12)


def test_dcmotor_stateless_force_is_k_times_current():
    model, data = build('<dcmotor joint="spin" motorconst="0.1" resistance="2"/>')
    data.qvel[1], data.ctrl[0] = 20.0, 6.0
    mujoco.mj_forward(model, data)
    t = trace(model, data, 0)
    assert t.force[0] == pytest.approx(0.1 * (6.0 - 0.1 * 20.0) / 2, rel=1e-12)  # K·(V - K·ω)/R


def test_dcmotor_mechanical_terms_come_after_forcerange():
    model, data = build('<dcmotor joint="spin" motorconst="0.1" resistance="2" saturation="0.05 0 0" '
                        'cogging="0.01 6 0.1"/>')
    data.qpos[1], data.ctrl[0] = 0.2, 12.0
    mujoco.mj_forward(model, data)
    t = trace(model, data, 0)
    assert t.force_raw[0] == pytest.approx(0.1 * 12 / 2)
    assert t.force[0] == pytest.approx(0.05 + 0.01 * math.sin(6 * 0.2 + 0.1), rel=1e-12)  # beyond forcerange


def test_delay_reads_the_request_from_the_history_buffer():
    model, data = build('<motor joint="hinge" delay="0.006" nsample="4"/>')
    requests = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    inputs = []
    for u in requests:
        data.ctrl[0] = u
        inputs.append(trace(model, data, 0).input[0])
        mujoco.mj_step(model, data)
    assert inputs == [0, 0, 0, 1, 2, 3]  # 0.006 s = 3 steps; the buffer starts at zero


def test_several_actuators_on_one_joint_are_summed_then_clamped():
    world = WORLD.replace('<joint name="hinge" axis="0 1 0" range="-2 2"/>',
                          '<joint name="hinge" axis="0 1 0" range="-2 2" actuatorfrcrange="-1 1"/>')
    model, data = build('<motor name="m" joint="hinge" gear="2"/><position name="p" joint="hinge" kp="3"/>'
                        '<velocity name="v" joint="hinge" kv="0.5"/>', world=world)
    data.qpos[0], data.qvel[0], data.ctrl[:] = 0.1, 0.4, [0.3, 0.5, -1.0]
    mujoco.mj_forward(model, data)
    traces = [trace(model, data, name) for name in ("m", "p", "v")]
    total = sum(t.qfrc[0] for t in traces)
    assert total == pytest.approx(2 * 0.3 + 3 * (0.5 - 0.1) + 0.5 * (-1.0 - 0.4))
    assert all(t.qfrc_actuator[0] == np.clip(total, -1, 1) for t in traces)
    assert any("other actuators add" in n for n in traces[0].notes)


def test_tendon_force_limit_scales_all_actuators_on_the_tendon():
    world = WORLD.replace('<fixed name="diff">', '<fixed name="diff" actuatorfrcrange="-1 1">')
    model, data = build('<motor tendon="diff" gear="2"/><motor tendon="diff"/>', world=world)
    data.ctrl[:] = [1.5, 1.5]
    mujoco.mj_forward(model, data)
    a, b = trace(model, data, 0), trace(model, data, 1)
    assert a.force_raw[0] == 1.5 and a.force[0] == pytest.approx(0.5) and b.force[0] == pytest.approx(0.5)
    coef = np.zeros(model.nv)
    coef[[model.jnt_dofadr[0], model.jnt_dofadr[1]]] = [1, -0.5]  # the fixed tendon's joint coefficients
    np.testing.assert_allclose(a.qfrc, 0.5 * 2 * coef, rtol=1e-12)  # moment = gear · tendon Jacobian


def test_site_transmission_with_and_without_refsite():
    model, data = build('<motor name="thrust" site="prop" gear="0 0 1 0 0 0"/>'
                        '<position name="reach" site="tip" refsite="base" gear="0 1 0 0 0 0" kp="3"/>')
    data.ctrl[:] = [2.0, 0.1]
    mujoco.mj_forward(model, data)
    thrust, reach = trace(model, data, "thrust"), trace(model, data, "reach")
    assert thrust.length[0] == 0  # no refsite: no meaningful length, but it still pushes
    free = model.jnt_dofadr[model.joint("float").id]
    assert thrust.qfrc[free + 2] == pytest.approx(2.0)  # z thrust of an unrotated body
    offset = data.site_xpos[model.site("tip").id] - data.site_xpos[model.site("base").id]
    assert reach.length[0] == pytest.approx(offset[1])  # y offset in the (unrotated) refsite frame
    assert reach.force[0] == pytest.approx(3 * (0.1 - offset[1]))


def test_actuator_side_gravity_compensation_is_added_then_clamped():
    world = WORLD.replace('<body name="arm">', '<body name="arm" gravcomp="1">').replace(
        '<joint name="hinge" axis="0 1 0" range="-2 2"/>',
        '<joint name="hinge" axis="0 1 0" range="-2 2" actuatorgravcomp="true" actuatorfrcrange="-0.5 0.5"/>')
    model, data = build('<motor joint="hinge"/>', world=world)
    data.ctrl[0] = 0.1
    mujoco.mj_forward(model, data)
    t = trace(model, data, 0)
    gravcomp = data.qfrc_gravcomp[0]
    assert abs(gravcomp) > 0.5
    assert t.qfrc_actuator[0] == np.clip(0.1 + gravcomp, -0.5, 0.5)
    assert any("gravity compensation" in n for n in t.notes)


def test_seed_counts_nactuator_nu_nout():
    # seed 001 §2: pid [pos, vel] + motor → 2 actuators, 3 controls, 2 outputs
    model, _ = build('<pid joint="hinge"/><motor joint="spin"/>')
    assert (model.nactuator, model.nu, model.nout, model.na) == (2, 3, 2, 0)
    # seed 001 §9 exercise 5: two-input pid + quat orientation → 2, 6, 4
    model, _ = build('<pid joint="hinge"/><orientation joint="neck" input="quat"/>')
    assert (model.nactuator, model.nu, model.nout) == (2, 6, 4)


# ---------------------------------------------------------------------------------------
# a model the tracer has never seen


def random_actuators(rng: np.random.Generator, n: int) -> str:
    def r(low: float, high: float) -> str:
        return f"{rng.uniform(low, high):.4g}"

    def ranges() -> str:
        text = ""
        if rng.random() < 0.5:
            text += f' ctrlrange="-{r(0.2, 1)} {r(0.2, 1)}"'
        if rng.random() < 0.5:
            text += f' forcerange="-{r(0.1, 2)} {r(0.1, 2)}"'
        return text

    targets = [f'joint="{j}" gear="{r(0.5, 3)}"' for j in ("hinge", "spin", "rail")] + [
        f'tendon="diff" gear="{r(0.5, 2)}"', f'site="prop" gear="{r(-1, 1)} 0 {r(0, 2)} 0 {r(-1, 1)} 0"',
        f'site="tip" refsite="base" gear="{r(0.5, 1)} 0 0 0 0 0"', 'jointinparent="neck" gear="0 0 1"']
    out = []
    for _ in range(n):
        target = targets[rng.integers(len(targets))]
        kind = rng.integers(6)
        if kind == 0:
            out.append(f"<motor {target}{ranges()}/>")
        elif kind == 1:
            out.append(f'<position {target} kp="{r(1, 20)}" kv="{r(0, 2)}" timeconst="{r(0, 0.05)}"'
                       f"{ranges()}/>")
        elif kind == 2:
            out.append(f'<intvelocity {target} kp="{r(1, 20)}" actrange="-{r(0.1, 1)} {r(0.1, 1)}"'
                       f"{ranges()}/>")
        elif kind == 3:
            out.append(f'<general {target} dyntype="filter" dynprm="{r(0.01, 0.1)}" gainprm="{r(0.5, 3)}" '
                       f'biastype="affine" biasprm="{r(-1, 1)} {r(-2, 0)} {r(-1, 0)}"{ranges()}/>')
        elif kind == 4:
            out.append(f'<pid {target} kp="{r(1, 10)}" kv="{r(0, 1)}" ki="{r(0, 2)}" imax="{r(0, 0.5)}" '
                       f'input="pos vel ff"/>')
        else:
            out.append(f'<velocity {target} kv="{r(0.5, 3)}"{ranges()}/>')
    out.append(f'<orientation joint="neck" kp="{r(1, 5)}" kv="{r(0, 1)}" forcerange="0 {r(0.1, 1)}"/>')
    return "".join(out)


def test_randomised_model_with_many_actuators_and_transmissions():
    rng = np.random.default_rng(20240917)
    world = WORLD.replace('<joint name="hinge" axis="0 1 0" range="-2 2"/>',
                          '<joint name="hinge" axis="0 1 0" range="-2 2" actuatorfrcrange="-3 3"/>'
                          ).replace('<fixed name="diff">', '<fixed name="diff" actuatorfrcrange="-2 2">')
    model, data = build(random_actuators(rng, 14), world=world)
    assert model.nactuator == 15 and model.nu > model.nactuator and model.nout > model.nactuator
    traces = run(model, data, list(rng.uniform(-2, 2, size=model.nu)), steps=40, every=20)
    assert len(traces) == 3 * model.nactuator and all(t.verified for t in traces)
    assert len({t.family for t in traces}) >= 5


# ---------------------------------------------------------------------------------------
# a deliberate mismatch is caught


def test_a_wrong_force_law_is_detected(monkeypatch):
    model, data = build('<position name="servo" joint="hinge" kp="10"/>')
    data.ctrl[0] = 0.5
    mujoco.mj_forward(model, data)
    original = laws.force_law

    def off_by_a_little(model, d, i, u, chain):
        original(model, d, i, u, chain)
        chain.force_raw[model.actuator_outadr[i]] *= 1 + 1e-6  # 1000× the tolerance

    monkeypatch.setattr(laws, "force_law", off_by_a_little)
    expected = r"stage 'force' of actuator 'servo'.*\[5\.000005\].*actuator_force\[0:1\] holds \[5\]"
    with pytest.raises(TraceMismatch, match=expected):
        trace(model, data, "servo")


def test_a_wrong_activation_law_is_detected(monkeypatch):
    model, data = build('<pid joint="hinge" ki="1" slewmax="2"/>')
    data.ctrl[:] = [1.0, 0.0]
    mujoco.mj_forward(model, data)
    monkeypatch.setattr(laws, "slew", lambda u, prev, rate, dt, period: (u, (u - prev) / dt))
    with pytest.raises(TraceMismatch, match=r"stage 'act_dot'"):
        trace(model, data, 0)


def test_a_wrong_force_raw_hidden_by_forcerange_is_detected(monkeypatch):
    # forcerange cuts both the right (1.2·kp) and the wrong raw force to 5: only the lifted copy sees it
    model, data = build('<position name="servo" joint="hinge" kp="30" forcerange="-5 5"/>')
    data.ctrl[0] = 1.2
    mujoco.mj_forward(model, data)
    assert trace(model, data, "servo").force_raw[0] == pytest.approx(36.0)
    original = laws.force_law

    def doubled(model, d, i, u, chain):
        original(model, d, i, u, chain)
        chain.force_raw[model.actuator_outadr[i]] *= 2

    monkeypatch.setattr(laws, "force_law", doubled)
    with pytest.raises(TraceMismatch, match=r"stage 'force_raw' of actuator 'servo'.*\[72\].*holds \[36\]"):
        trace(model, data, "servo")


def test_a_wrong_input_hidden_by_forcerange_is_detected(monkeypatch):
    # the request 3 is clamped to 1; a tracer that clamped to 0.9 but kept the right force_raw is caught
    model, data = build('<position name="servo" joint="hinge" kp="30" ctrlrange="-1 1" forcerange="-5 5"/>')
    data.ctrl[0] = 3.0
    mujoco.mj_forward(model, data)
    original = trace_module.recompute

    def misclamped(model, d):
        chain = original(model, d)
        chain.ctrl[0] = chain.inputs[0] = 0.9
        return chain

    monkeypatch.setattr(trace_module, "recompute", misclamped)
    with pytest.raises(TraceMismatch, match=r"stage 'input' of actuator 'servo'.*\[0\.9\].*force \[27\]"):
        trace(model, data, "servo")


def test_the_ctrlrange_note_respects_clampctrl_and_a_bad_control():
    model, data = build('<motor name="m" joint="hinge" ctrlrange="-1 1"/>')
    data.ctrl[0] = np.inf                                # clamped to 1: a big request, no bad control
    assert any("ctrlrange clamps" in n for n in trace(model, data, "m").notes)
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL
    data.ctrl[0] = 5.0                                   # not clamped: the force law reads 5
    t = trace(model, data, "m")
    assert t.input[0] == 5.0 and not any("ctrlrange" in n for n in t.notes)
    data.ctrl[0] = np.inf                                # unclamped infinity: every input is zeroed
    with labkit.mujoco_warnings():
        t = trace(model, data, "m")
    assert t.input[0] == 0 and [n for n in t.notes if "ctrlrange" in n or "zeroes" in n] == [
        "a control is NaN, infinite or beyond 1e10: MuJoCo zeroes every input (mjWARN_BADCTRL)"]


def test_forcerange_after_a_tendon_limit_clamps_the_scaled_force():
    world = WORLD.replace('<fixed name="diff">', '<fixed name="diff" actuatorfrcrange="-1 1">')
    model, data = build('<motor name="a" tendon="diff" forcerange="-0.5 0.5"/>'
                        '<motor name="b" tendon="diff"/>', world=world)
    data.ctrl[:] = [-3.0, 5.0]                           # sum 2 → both halved → a: −1.5, cut to −0.5
    mujoco.mj_forward(model, data)
    a = trace(model, data, "a")
    np.testing.assert_allclose(data.actuator_force, [-0.5, 2.5], rtol=1e-12)
    assert "forcerange [-0.5, 0.5] clamps the tendon-scaled force: [-1.5] → [-0.5]" in a.notes


@pytest.mark.parametrize("gear", [1.0, 2.5])
def test_moment_matrix_and_length_gradient(gear):
    model, data = build(f'<motor joint="hinge" gear="{gear}"/><motor tendon="diff"/>'
                        '<motor joint="neck" gear="0.3 -0.2 1"/>')
    data.qvel[:] = np.linspace(-1, 1, model.nv)
    mujoco.mj_forward(model, data)
    moment, posed = moment_matrix(model, data), data.qpos.copy()
    np.testing.assert_allclose(moment @ data.qvel, data.actuator_velocity, atol=1e-12)
    gradient = length_gradient(model, data)
    np.testing.assert_array_equal(data.qpos, posed)          # left where it was
    np.testing.assert_allclose(gradient, moment, atol=1e-8)  # at the identity even the ball's agrees
    neck = model.jnt_qposadr[model.joint("neck").id]
    data.qpos[neck:neck + 4] = [np.cos(0.4), np.sin(0.4), 0, 0]  # 0.8 rad about x
    mujoco.mj_forward(model, data)
    gap = np.abs(length_gradient(model, data) - moment_matrix(model, data))
    assert gap[:2].max() < 1e-8 and gap[2].max() > 0.05      # hinge and tendon: ∂l/∂q; the ball: not


def test_a_forgotten_joint_limit_is_detected(monkeypatch):
    world = WORLD.replace('<joint name="spin" axis="0 1 0"/>',
                          '<joint name="spin" axis="0 1 0" actuatorfrcrange="-1 1"/>')
    model, data = build('<motor joint="spin" gear="3"/>', world=world)
    data.ctrl[0] = 1.0
    mujoco.mj_forward(model, data)
    original = trace_module.recompute

    def unclamped(model, d):
        stages = original(model, d)
        stages.qfrc_actuator = stages.qfrc_total
        return stages

    monkeypatch.setattr(trace_module, "recompute", unclamped)
    with pytest.raises(TraceMismatch, match=r"stage 'qfrc_actuator'.*\[3\].*\[1\]"):
        trace(model, data, 0)


# ---------------------------------------------------------------------------------------
# display, lookup errors, the engine's enums


def test_enum_values_match_the_installed_mujoco():
    # labkit names and compares types through MuJoCo's own enums: every value reads as its enum name
    for prefix, enum in (("_TRN_", mujoco.mjtTrn), ("_DYN_", mujoco.mjtDyn), ("_GAIN_", mujoco.mjtGain),
                         ("_BIAS_", mujoco.mjtBias), ("_JNT_", mujoco.mjtJoint)):
        members = dict(enum.__members__)
        assert len(members) >= 4
        for name, member in members.items():
            assert name.startswith("mj" + prefix.strip("_") + "_"), name
            assert params.type_name(enum, int(member)) == name.split("_", 1)[1].lower(), name
    assert params.type_name(mujoco.mjtDyn, 99) == "99"  # a value MuJoCo does not name prints as a number
    for kind, enum in (("gain", mujoco.mjtGain), ("bias", mujoco.mjtBias), ("dyn", mujoco.mjtDyn)):
        for name, member in enum.__members__.items():  # a parameter table for every type but user
            assert (params.prm_names(kind, int(member)) is None) == name.endswith("_USER"), name
    assert params.prm_names("dyn", mujoco.mjtDyn.mjDYN_FILTEREXACT) == ("timeconst",)
    for name, bit in (("POS", 1), ("VEL", 2), ("FF", 4), ("VOLTAGE", 8), ("NONE", 16), ("PRESSURE", 32)):
        assert int(getattr(mujoco.mjtCtrlInput, f"mjINPUT_{name}")) == bit
        assert params.type_name(mujoco.mjtCtrlInput, bit) == name.lower()
    vel_ff = int(mujoco.mjtCtrlInput.mjINPUT_VEL | mujoco.mjtCtrlInput.mjINPUT_FF)
    assert params.unpack(np.array([0.5, 0.2]), vel_ff) == (0.0, 0.5, 0.2, 0.0)
    assert params.type_name(mujoco.mjtCtrlChart, int(mujoco.mjtCtrlChart.mjCHART_QUAT)) == "quat"
    model, _ = build('<motor joint="hinge"/>')
    assert [params.joint_dofs(model, j) for j in range(model.njnt)] == [1, 1, 1, 3, 6]
    # nothing in the package restates MuJoCo's numbering or its constants
    source = "\n".join(path.read_text() for path in Path(params.__file__).parent.glob("*.py"))
    assert not re.search(r"= range\(\d+\)|\b_(TRN|DYN|GAIN|BIAS|IN|CHART|JNT)_[A-Z]+\b", source)
    assert "mjMINVAL" in source and "mjMAXVAL" in source and "1e-15" not in source and "= 1e10" not in source


def test_round_off_is_compared_equal_and_printed_as_zero():
    assert rounding.tolerance(3.0, -5.0) == 5 * rounding.RTOL and rounding.tolerance(1e-3) == rounding.RTOL
    assert rounding.agree(1.0, 1.0 + 1e-12) and not rounding.agree(1.0, 1.0 + 1e-8)
    # an infinity agrees with itself only, not with every number (|1 - inf| <= 1e-9·inf would say so)
    infinities = rounding.agree([1.0, np.inf, np.inf, np.nan], [np.inf, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(infinities, [False, True, False, False])
    np.testing.assert_array_equal(display.clean([2.0, 3e-12, np.nan]), [2.0, 0.0, np.nan])
    np.testing.assert_array_equal(display.clean([[5e-10]]).reshape(-1), [0.0])  # below 1e-9 absolute: zero


def test_text_is_a_deterministic_table_and_html_renders():
    model, data = build('<pid name="p" joint="hinge" ki="1" input="pos vel"/>')
    data.ctrl[:] = [0.5, 0.0]
    mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    t = trace(model, data, "p")
    text = t.text()
    assert text == trace(model, data, "p").text() == repr(t)
    lines = text.splitlines()
    assert lines[0].startswith("Actuator 'p' (id 0) · pid · joint → hinge")
    assert lines[2].split() == ["stage", "value", "unit", "source"]
    stages = [line.split()[0] for line in lines[3:13]]
    assert stages == ["request", "input", "act", "act_dot", "length", "velocity", "force_raw", "force",
                      "qfrc", "qfrc_actuator"]
    assert "pos=0.5, vel=0" in text and "mjdata.h:actuator_force" in text and "✔" in text
    html = t._repr_html_()
    assert html.count("<tr>") == 11 and "https://github.com/google-deepmind/mujoco/blob/3.17.0/" in html


def test_unknown_actuators_raise_actionable_errors():
    model, data = build('<motor name="m" joint="hinge"/>')
    with pytest.raises(KeyError, match=r"no actuator named 'x'.*\['m'\]"):
        trace(model, data, "x")
    with pytest.raises(IndexError, match="out of range"):
        explain(model, 3)
    bare = mujoco.MjModel.from_xml_string("<mujoco/>")
    with pytest.raises(KeyError, match="no actuators"):
        trace(bare, mujoco.MjData(bare), 0)


# ---------------------------------------------------------------------------------------
# explain: what each shortcut became

SHORTCUTS = [
    ('<motor joint="hinge" gear="2"/>', "motor", ("none", "fixed", "none"), {"gain": 1}, (1, 0, 1)),
    ('<position joint="hinge"/>', "position", ("none", "fixed", "affine"),
     {"kp": 1, "kv": 0, "timeconst": 0}, (1, 0, 1)),
    ('<position joint="hinge" kp="10" kv="1" timeconst="0.05"/>', "position (filtered setpoint)",
     ("filterexact", "fixed", "affine"), {"kp": 10, "kv": 1, "timeconst": 0.05}, (1, 1, 1)),
    ('<velocity joint="hinge"/>', "velocity", ("none", "fixed", "affine"), {"kv": 1}, (1, 0, 1)),
    ('<intvelocity joint="hinge" kp="5" actrange="-1 1"/>', "intvelocity", ("integrator", "fixed", "affine"),
     {"kp": 5, "kv": 0}, (1, 1, 1)),
    ('<pid joint="hinge"/>', "pid", ("none", "pid", "affine"),
     {"kp": 1, "kv": 0, "ki": 0, "imax": 0, "slewmax": 0}, (2, 0, 1)),
    ('<pid joint="hinge" kp="5" ki="2" imax="0.3" slewmax="1" input="pos vel ff"/>', "pid",
     ("pid", "pid", "affine"), {"kp": 5, "kv": 0, "ki": 2, "imax": 0.3, "slewmax": 1}, (3, 2, 1)),
    ('<orientation joint="neck" kp="3" kv="0.5"/>', "orientation", ("none", "so3", "so3"),
     {"kp": 3, "kv": 0.5}, (3, 0, 3)),
    ('<orientation site="eye" refsite="base" input="quat"/>', "orientation", ("none", "so3", "so3"),
     {"kp": 1, "kv": 0}, (4, 0, 3)),
    ('<dcmotor joint="spin" motorconst="0.1" resistance="2" inductance="0.01 0"/>', "dcmotor",
     ("dcmotor", "dcmotor", "dcmotor"), {"R": 2, "K": 0.1, "electrical timeconst": 0.005}, (1, 1, 1)),
    ('<damper joint="spin" kv="2" ctrlrange="0 1"/>', "damper", ("none", "affine", "none"), {"kv": 2},
     (1, 0, 1)),
    ('<cylinder joint="rail" area="0.01" timeconst="0.1"/>', "cylinder", ("filter", "fixed", "affine"),
     {"area": 0.01, "timeconst": 0.1, "bias0": 0, "bias1": 0, "bias2": 0}, (1, 1, 1)),
    ('<adhesion body="arm" ctrlrange="0 1" gain="5"/>', "adhesion", ("none", "fixed", "none"), {"gain": 5},
     (1, 0, 1)),
]


@pytest.mark.parametrize(("xml", "family", "types", "parameters", "counts"), SHORTCUTS,
                         ids=[s[0].split()[0][1:] + str(k) for k, s in enumerate(SHORTCUTS)])
def test_explain_reads_back_each_shortcut(xml, family, types, parameters, counts):
    model, _ = build(xml)
    e = explain(model, 0)
    assert e.family == family
    assert (e.dyntype, e.gaintype, e.biastype) == types
    assert e.parameters == pytest.approx(parameters)
    assert (e.ctrlnum, e.actnum, e.outnum) == counts
    assert e.text() == repr(e) and e.text().splitlines()[0].endswith(family)
    assert "<table>" in e._repr_html_()


def test_explain_details_of_a_pid_and_an_orientation():
    model, _ = build('<motor joint="rail"/><pid name="p" joint="hinge" input="vel ff" velrange="-1 1"/>'
                     '<orientation name="o" site="eye" refsite="base" forcerange="0 2"/>')
    p = explain(model, "p")
    assert (p.ctrladr, p.ctrlnum, p.ctrlspec, p.inputs) == (1, 2, 6, ("vel", "ff"))
    assert p.ctrllimited.tolist() == [True, False] and p.ctrlrange[0].tolist() == [-1, 1]
    np.testing.assert_array_equal(p.biasprm, [0, -1, 0])  # kp = 1 is still there without a pos input
    assert p.gainprm.tolist() == [0] and p.dynprm.size == 0
    o = explain(model, "o")
    assert (o.trntype, o.target, o.refsite, o.outadr, o.outnum) == ("so3", "eye", "base", 2, 3)
    assert o.forcelimited and o.forcerange.tolist() == [0, 2] and o.gear.shape == (3, 6)
    assert "forcerange" in o.text() and "(on the norm)" in o.text()
