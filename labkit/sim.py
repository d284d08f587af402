"""The one simulation loop, and the two process-wide MuJoCo hooks an experiment may need.

:func:`run` steps a model for an explicit ``duration`` (seconds) or ``nstep`` (steps),
writing ``data.ctrl`` before each step and calling a sampler as it goes; recording
(:func:`labkit.record`), videos (:func:`labkit.video`) and the grasp trials use it.
:func:`mujoco_warnings` collects the warnings MuJoCo prints; :func:`control_callback`
installs ``mjcb_control`` for one block and always restores it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from . import gl

if TYPE_CHECKING:
    import mujoco

__all__ = ["Control", "control", "control_callback", "mujoco_warnings", "run", "steps"]

#: A control: None (leave data.ctrl alone), a constant vector, or f(model, data) -> vector.
Control = None | Sequence[float] | np.ndarray | Callable[["mujoco.MjModel", "mujoco.MjData"], Any]


def steps(model: mujoco.MjModel, *, duration: float | None = None, nstep: int | None = None) -> int:
    """The number of steps to run: ``nstep``, or ``duration`` (s) in whole timesteps.

    Exactly one of the two must be given.

    Example: ``steps(model, duration=2.0)`` is 1000 for a 2 ms timestep.
    """
    if (duration is None) == (nstep is None):
        raise TypeError("give exactly one of duration= (seconds) or nstep= (number of steps)")
    if nstep is not None:
        if isinstance(nstep, bool) or not isinstance(nstep, int | np.integer):
            raise TypeError(f"nstep= is a whole number of steps, got {nstep!r}; for seconds use duration=")
        count = int(nstep)
    else:
        count = round(float(duration) / model.opt.timestep)
    if count < 0:
        raise ValueError("cannot run for a negative time")
    return count


def control(model: mujoco.MjModel, ctrl: Control) -> Callable[[mujoco.MjData], None] | None:
    """Turn a :data:`Control` into a function that writes ``data.ctrl`` (None: leave it).

    A vector must have ``model.nu`` entries; a function is called as ``ctrl(model, data)``
    before every step and returns such a vector.
    """
    if ctrl is None:
        return None
    if callable(ctrl):
        def apply(data: mujoco.MjData) -> None:
            data.ctrl[:] = ctrl(model, data)
        return apply
    vector = np.asarray(ctrl, dtype=float).reshape(-1)
    if vector.shape != (model.nu,):
        raise ValueError(f"ctrl has {vector.size} values but the model has nu={model.nu} controls")

    def constant(data: mujoco.MjData) -> None:
        data.ctrl[:] = vector
    return constant


def run(model: mujoco.MjModel, data: mujoco.MjData, *, duration: float | None = None,
        nstep: int | None = None, ctrl: Control = None, every: int = 1,
        sample: Callable[[int], None] | None = None) -> int:
    """Step ``model`` for ``duration`` seconds or ``nstep`` steps; returns the step count.

    Args:
      ctrl: written to ``data.ctrl`` before every step (see :data:`Control`).
      every: call ``sample`` every ``every`` steps.
      sample: ``sample(k)`` for the k-th sample: once before the first step (after an
        ``mj_forward``, so nothing read is stale after a reset) and after every
        ``every``-th ``mj_step``, so N steps give ``N // every + 1`` samples.

    Example: ``labkit.sim.run(model, data, duration=1.0, ctrl=[0.5])``.
    """
    gl.choose()
    import mujoco

    count = steps(model, duration=duration, nstep=nstep)
    if every < 1:
        raise ValueError("every must be a positive number of steps")
    apply = control(model, ctrl)
    if apply is not None:
        apply(data)
    if sample is not None:
        mujoco.mj_forward(model, data)
        sample(0)
    k = 1
    for step in range(1, count + 1):
        if apply is not None:
            apply(data)
        mujoco.mj_step(model, data)
        if sample is not None and step % every == 0:
            sample(k)
            k += 1
    return count


@contextmanager
def mujoco_warnings() -> Iterator[list[str]]:
    """Collect MuJoCo's warning messages raised inside the ``with`` block into a list.

    MuJoCo reports some problems (a deprecated attribute, an unstable simulation) through
    ``mju_user_warning``, by default to stderr and ``MUJOCO_LOG.TXT``.

    Example::

        with labkit.mujoco_warnings() as caught:
            labkit.sim.run(model, data, duration=1.0)
        # caught: one string per warning; the previous handler is restored
    """
    gl.choose()
    import mujoco

    caught: list[str] = []
    mujoco.set_mju_user_warning(lambda message: caught.append(str(message).strip()))
    try:
        yield caught
    finally:
        mujoco.set_mju_user_warning(None)


@contextmanager
def control_callback(function: Callable[[Any, Any], None]) -> Iterator[None]:
    """Install ``function(model, data)`` as MuJoCo's ``mjcb_control`` inside the block.

    ``mjcb_control`` is process-wide: every ``mj_step`` and ``mj_forward`` of every model
    calls it, once per evaluation of the dynamics.  The previous callback (usually none)
    is put back on exit, also when the block raises.

    Example: ``with labkit.control_callback(pd): labkit.sim.run(model, data, duration=1)``.
    """
    gl.choose()
    import mujoco

    previous = mujoco.get_mjcb_control()
    mujoco.set_mjcb_control(function)
    try:
        yield
    finally:
        mujoco.set_mjcb_control(previous)
