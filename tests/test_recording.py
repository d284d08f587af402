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
    rec = labkit.record(model, data, 200, ["qpos:hinge", "qvel:free", "force:servo",
                                           "sensor:tip", "ncon", "site:tip", "xpos:ball"],
                        ctrl=controller)
    m, d = labkit.load(ARM)
    expected = {k: [] for k in rec}
    times = []

    def sample():
        times.append(d.time)
        expected["qpos:hinge"].append(d.qpos[0])
        expected["qvel:free"].append(d.qvel[1:7].copy())
        expected["force:servo"].append(d.actuator_force[0])
        expected["sensor:tip"].append(d.sensordata[1:4].copy())
        expected["ncon"].append(d.ncon)
        expected["site:tip"].append(d.site_xpos[0].copy())
        expected["xpos:ball"].append(d.xpos[2].copy())

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
    assert rec["qvel:free"].shape == (201, 6) and rec["ncon"].max() >= 1  # the ball lands
    assert np.array_equal(data.qpos, d.qpos)  # data is left at the final state


def test_duration_every_and_callables(pendulum):
    model, data = pendulum
    rec = labkit.record(model, data, 0.1, {"angle": "qpos:swing",
                                           "height": lambda m, d: d.site_xpos[0, 2]}, every=5)
    assert len(rec.t) == 50 // 5 + 1 and rec.t[-1] == pytest.approx(0.1)
    assert rec["height"].shape == rec["angle"].shape == (11,)
    assert rec.units["angle"] == "rad"


def test_positions_lag_qpos_by_one_step_as_after_mj_step(pendulum):
    # mj_step computes kinematics *before* integrating, so after it site_xpos belongs
    # to the previous qpos.  record() samples exactly what mj_step leaves.
    model, data = pendulum
    rec = labkit.record(model, data, 20, ["qpos:swing", "site:tip"])
    height = rec["site:tip"][:, 2]
    assert height[0] == pytest.approx(-0.5 * np.cos(rec["qpos:swing"][0]), abs=1e-12)
    np.testing.assert_allclose(height[1:], -0.5 * np.cos(rec["qpos:swing"][:-1]), atol=1e-12)


def test_bad_signals_are_explained(pendulum):
    model, data = pendulum
    with pytest.raises(KeyError, match="no joint named 'swng'; its joints: \\['swing'\\]"):
        labkit.record(model, data, 1, ["qpos:swng"])
    with pytest.raises(ValueError, match="needs a kind"):
        labkit.record(model, data, 1, ["swing"])
    with pytest.raises(ValueError, match="nu=0"):
        labkit.record(model, data, 1, ["qpos:swing"], ctrl=[1.0])


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
    rec = labkit.record(model, data, 3, ["ctrl:p", "force:p", "ctrl:m"], ctrl=[0.5, 0.2, 0.1])
    assert model.nu == 3 and rec["ctrl:p"].shape == (4, 2) and rec["ctrl:m"].shape == (4,)
    np.testing.assert_array_equal(rec["ctrl:p"][-1], [0.2, 0.1])
    np.testing.assert_array_equal(rec["force:p"][-1], data.actuator_force[model.actuator_outadr[1]])

