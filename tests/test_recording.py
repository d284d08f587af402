"""labkit.record matches a bare mj_step loop sample for sample."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import labkit

ARM = """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <body name="link">
      <joint name="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
      <site name="tip" pos="0.3 0 0"/>
    </body>
    <body name="ball" pos="1 0 0.2"><freejoint name="free"/><geom size="0.05"/></body>
    <geom type="plane" size="2 2 .1"/>
  </worldbody>
  <actuator><position name="servo" joint="hinge" kp="5"/></actuator>
  <sensor><jointpos name="angle" joint="hinge"/><framepos name="tip" objtype="site" objname="tip"/></sensor>
</mujoco>
"""


def controller(model, data):
    return [0.5 * np.sin(2 * np.pi * data.time)]


def test_matches_a_bare_loop():
    model, data = labkit.load(ARM)
    signals = {"hinge": data.joint("hinge").qpos, "free": data.joint("free").qvel,
               "servo": data.actuator("servo").force, "tip sensor": data.sensor("tip").data,
               "ncon": lambda m, d: d.ncon, "tip": data.site("tip").xpos, "ball": data.body("ball").xpos}
    rec = labkit.record(model, data, signals, nstep=200, ctrl=controller)
    m, d = labkit.load(ARM)
    expected = {k: [] for k in rec}
    times = []

    def sample():
        times.append(d.time)
        expected["hinge"].append(d.qpos[0])
        expected["free"].append(d.qvel[1:7].copy())
        expected["servo"].append(d.actuator_force[0])
        expected["tip sensor"].append(d.sensordata[1:4].copy())
        expected["ncon"].append(d.ncon)
        expected["tip"].append(d.site_xpos[0].copy())
        expected["ball"].append(d.xpos[2].copy())

    d.ctrl[:] = controller(m, d)
    mujoco.mj_forward(m, d)
    sample()
    for _ in range(200):
        d.ctrl[:] = controller(m, d)
        mujoco.mj_step(m, d)
        sample()
    assert rec.t.shape == (201,) and np.array_equal(rec.t, times)
    for key, values in expected.items():
        assert np.array_equal(rec[key], np.array(values)), key
    assert rec["free"].shape == (201, 6) and rec["ncon"].max() >= 1  # the ball lands
    assert np.array_equal(data.qpos, d.qpos)  # data is left at the final state


def test_duration_every_and_functions(pendulum):
    model, data = pendulum
    rec = labkit.record(model, data, {"angle": data.joint("swing").qpos,
                                      "height": lambda m, d: d.site_xpos[0, 2]}, duration=0.1, every=5)
    assert len(rec.t) == 50 // 5 + 1 and rec.t[-1] == pytest.approx(0.1)
    assert rec["height"].shape == rec["angle"].shape == (11,)


def test_positions_lag_qpos_by_one_step_as_after_mj_step(pendulum):
    # mj_step computes kinematics *before* integrating, so after it site_xpos belongs
    # to the previous qpos.  record() samples exactly what mj_step leaves.
    model, data = pendulum
    rec = labkit.record(model, data, {"angle": data.joint("swing").qpos, "tip": data.site("tip").xpos},
                        nstep=20)
    height = rec["tip"][:, 2]
    assert height[0] == pytest.approx(-0.5 * np.cos(rec["angle"][0]), abs=1e-12)
    np.testing.assert_allclose(height[1:], -0.5 * np.cos(rec["angle"][:-1]), atol=1e-12)


def test_time_is_given_by_an_explicit_keyword(pendulum):
    model, data = pendulum
    angle = {"angle": data.joint("swing").qpos}
    assert len(labkit.record(model, data, angle, nstep=20).t) == 21
    assert len(labkit.record(model, data, angle, duration=0.04).t) == 21     # 20 steps of 2 ms
    for wrong in ({}, {"duration": 1.0, "nstep": 5}):
        with pytest.raises(TypeError, match=r"exactly one of duration= .* or nstep="):
            labkit.record(model, data, angle, **wrong)
    with pytest.raises(TypeError, match="nstep= is a whole number of steps"):
        labkit.record(model, data, angle, nstep=2.0)


def test_bad_signals_are_explained(pendulum):
    model, data = pendulum
    with pytest.raises(KeyError, match="swng"):       # MuJoCo's named access names the problem
        labkit.record(model, data, {"a": data.joint("swng").qpos}, nstep=1)
    with pytest.raises(ValueError, match=r"not part of data .* data.joint\('hinge'\).qpos"):
        labkit.record(model, data, {"a": data.qpos[0]}, nstep=1)      # a copy, not a view
    with pytest.raises(TypeError, match="signals is a dict"):
        labkit.record(model, data, [data.joint("swing").qpos], nstep=1)
    with pytest.raises(ValueError, match="nu=0"):
        labkit.record(model, data, {"a": data.joint("swing").qpos}, nstep=1, ctrl=[1.0])


def test_crossings_interpolate_between_samples():
    t = np.linspace(0.0, 2.0, 201)
    rec = labkit.Recording(t, {"x": np.sin(2 * np.pi * t - 0.3)})
    # sin(2πt − 0.3) rises through 0 at t = 0.3/(2π) + k
    np.testing.assert_allclose(rec.crossings("x"), 0.3 / (2 * np.pi) + np.arange(2), atol=1e-4)
    np.testing.assert_allclose(rec.crossings("x", rising=False), 0.5 + 0.3 / (2 * np.pi) + np.arange(2),
                               atol=1e-4)


def test_multi_input_actuators_record_their_whole_blocks():
    xml = """<mujoco><worldbody>
      <body><joint name="a" axis="0 1 0"/><geom size=".1"/></body>
      <body pos="1 0 0"><joint name="b" axis="0 1 0"/><geom size=".1"/></body></worldbody>
      <actuator><motor name="m" joint="a"/><pid name="p" joint="b" kp="3" kv="1"/></actuator></mujoco>"""
    model, data = labkit.load(xml)
    rec = labkit.record(model, data, {"p in": data.actuator("p").ctrl, "p out": data.actuator("p").force,
                                      "m in": data.actuator("m").ctrl}, nstep=3, ctrl=[0.5, 0.2, 0.1])
    assert model.nu == 3 and rec["p in"].shape == (4, 2) and rec["m in"].shape == (4,)
    np.testing.assert_array_equal(rec["p in"][-1], [0.2, 0.1])
    np.testing.assert_array_equal(rec["p out"][-1], data.actuator_force[model.actuator_outadr[1]])

