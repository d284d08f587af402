"""labkit.control_callback installs mjcb_control for one block and always restores it."""

from __future__ import annotations

import mujoco
import pytest

import labkit


def test_callback_runs_inside_and_is_removed_after_an_error():
    model, data = labkit.load("pendulum")
    calls = []
    with pytest.raises(ZeroDivisionError), labkit.control_callback(lambda m, d: calls.append(d.time)):
        mujoco.mj_step(model, data)
        raise ZeroDivisionError
    assert len(calls) == 1 and mujoco.get_mjcb_control() is None
    mujoco.mj_step(model, data)
    assert len(calls) == 1
