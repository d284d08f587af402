"""labkit.sim: the one simulation loop, MuJoCo's warnings collected, mjcb_control restored."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import labkit
from labkit import sim

DEPRECATED = ('<mujoco><compiler settotalmass="2"/><worldbody><body><freejoint/>'
              '<geom size=".1"/></body></worldbody></mujoco>')


def test_warnings_are_collected_and_the_handler_restored(capfd):
    with labkit.mujoco_warnings() as caught:
        model, _ = labkit.load(DEPRECATED)
    assert len(caught) == 1 and "settotalmass" in caught[0] and "deprecated" in caught[0]
    assert model.body_mass[1] == 2.0  # deprecated, but still applied
    with labkit.mujoco_warnings() as none:
        labkit.load("pendulum")
    assert none == []
    assert "settotalmass" not in capfd.readouterr().err



def test_callback_runs_inside_and_is_removed_after_an_error():
    model, data = labkit.load("pendulum")
    calls = []
    with pytest.raises(ZeroDivisionError), labkit.control_callback(lambda m, d: calls.append(d.time)):
        mujoco.mj_step(model, data)
        raise ZeroDivisionError
    assert len(calls) == 1 and mujoco.get_mjcb_control() is None
    mujoco.mj_step(model, data)
    assert len(calls) == 1


def test_run_writes_ctrl_before_each_step_and_samples_as_documented():
    model, data = labkit.load("<mujoco><worldbody><body><joint name='h' axis='0 1 0'/><geom size='.1' "
                              "mass='1'/></body></worldbody><actuator><motor joint='h'/></actuator></mujoco>")
    seen = []
    count = sim.run(model, data, nstep=10, ctrl=lambda m, d: [d.time], every=5,
                    sample=lambda k: seen.append((k, float(data.time), float(data.ctrl[0]))))
    h = model.opt.timestep
    assert count == 10 and [s[0] for s in seen] == [0, 1, 2]
    np.testing.assert_allclose([s[1] for s in seen], [0, 5 * h, 10 * h])
    # before the sample after a step, ctrl holds what was written before that step
    np.testing.assert_allclose([s[2] for s in seen], [0, 4 * h, 9 * h])
    assert sim.steps(model, duration=1.0) == round(1.0 / h)
    with pytest.raises(TypeError, match="exactly one"):
        sim.run(model, data)
