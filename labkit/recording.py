"""Record signals while a simulation runs: ``labkit.record``.

Signals are named by the caller and read through MuJoCo's own named access, e.g.
``{"angle": data.joint("swing").qpos, "torque": data.actuator("servo").force}``: those
are views into ``data`` that change as the simulation steps (a misspelt name raises
MuJoCo's KeyError, which lists the valid names).  Any function ``f(model, data)`` works
too.  The run itself is :func:`labkit.sim.run`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from . import sim
from .sim import Control

if TYPE_CHECKING:
    import mujoco

__all__ = ["Recording", "activation", "record"]

Signal = np.ndarray | Callable[["mujoco.MjModel", "mujoco.MjData"], Any]


@dataclass
class Recording(Mapping[str, np.ndarray]):
    """Signals over time: ``rec["angle"]`` is an array of shape (T,) or (T, k).

    t: sample times in seconds, shape (T,); the first sample is the state before the
    first step.
    """

    t: np.ndarray
    signals: dict[str, np.ndarray]

    def __getitem__(self, key: str) -> np.ndarray:
        try:
            return self.signals[key]
        except KeyError:
            raise KeyError(f"no signal {key!r} was recorded; recorded: {list(self.signals)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.signals)

    def __len__(self) -> int:
        return len(self.signals)

    def crossings(self, name: str, level: float = 0.0, *, rising: bool = True) -> np.ndarray:
        """Times (s) at which scalar signal ``name`` crosses ``level`` upward (or downward
        with ``rising=False``), linearly interpolated between samples; shape (n,)."""
        x = np.asarray(self[name], dtype=float) - level
        if x.ndim != 1:
            raise ValueError(f"{name!r} is a vector signal; pick one component first")
        before, after = x[:-1], x[1:]
        hits = np.flatnonzero((before < 0) & (after >= 0) if rising else (before > 0) & (after <= 0))
        fraction = before[hits] / (before[hits] - after[hits])
        return self.t[hits] + fraction * (self.t[hits + 1] - self.t[hits])

    def __repr__(self) -> str:
        span = f"{self.t[0]:.3g}–{self.t[-1]:.3g} s" if len(self.t) else "empty"
        return f"<Recording {len(self.t)} samples, {span}: {', '.join(self.signals)}>"


def activation(model: mujoco.MjModel, data: mujoco.MjData, actuator: str) -> np.ndarray:
    """The activation state(s) of ``actuator``: a view of ``data.act``, shape (actnum,).

    MuJoCo's named access has no activation field, so this slice stands in for it; like
    ``data.actuator(name).ctrl`` it changes as the simulation runs.

    Example: ``labkit.record(model, data, {"setpoint": labkit.activation(model, data, "servo")},
    duration=1.0)``.
    """
    index = model.actuator(actuator).id
    start, count = model.actuator_actadr[index], model.actuator_actnum[index]
    if start < 0:
        raise ValueError(f"actuator {actuator!r} has no activation state: it is stateless "
                         "(no dyntype, timeconst, or pid integral/slew)")
    return data.act[start:start + count]


def _fields(data: mujoco.MjData) -> list[np.ndarray]:
    """Every array of ``data`` (what a named-access view may alias)."""
    found = []
    for name in dir(data):
        if name.startswith("_"):
            continue
        try:
            value = getattr(data, name)
        except Exception:  # properties that need arguments or are not arrays
            continue
        if isinstance(value, np.ndarray):
            found.append(value)
    return found


def _writer(model: mujoco.MjModel, data: mujoco.MjData, name: str, source: Signal,
            fields: list[np.ndarray], samples: int) -> tuple[Callable[[int], None], Callable[[], np.ndarray]]:
    """(store sample k, collect the samples) for one signal."""
    if callable(source):
        values: list[np.ndarray] = []
        return (lambda k: values.append(np.array(source(model, data), dtype=float)),
                lambda: np.array(values))
    if isinstance(source, np.ndarray) and any(np.may_share_memory(source, f) for f in fields):
        out = np.empty((samples, *source.shape))

        def store(k: int) -> None:
            out[k] = source     # a view of data: this copies its current value
        return store, lambda: out
    raise ValueError(
        f"signal {name!r} is not part of data and not a function, so it would not change as the "
        f"simulation runs (got {type(source).__name__}). Pass a named-access view such as "
        "data.joint('hinge').qpos, data.actuator('motor').force or data.body('ball').xpos, "
        "or a function f(model, data)")


def record(model: mujoco.MjModel, data: mujoco.MjData, signals: Mapping[str, Signal], *,
           duration: float | None = None, nstep: int | None = None, ctrl: Control = None,
           every: int = 1) -> Recording:
    """Step the simulation and record signals.

    Args:
      signals: name → what to record: a view of ``data`` from MuJoCo's named access
        (``data.joint("swing").qpos``, ``data.actuator("servo").force``,
        ``data.sensor("touch").data``, ``data.body("ball").xpos``), which changes as the
        simulation runs, or a function ``f(model, data)`` returning a number or array.
      duration: seconds to run, or
      nstep: number of ``mj_step`` calls (give exactly one of the two).
      ctrl: None, a constant vector of length ``nu``, or ``f(model, data) -> vector``
        written to ``data.ctrl`` before every step.
      every: keep one sample every ``every`` steps.

    Returns:
      A :class:`Recording`: ``rec.t`` has shape (T,) with T = steps // every + 1 (the
      state before the first step, then after every ``every``-th step), ``rec[name]``
      shape (T,) for one value per sample or (T, k).  ``data`` is left at the final state.

    Each sample is what ``mj_step`` leaves in ``data``: ``qpos``/``qvel`` are the new
    state, while positions computed by kinematics (``xpos``, most sensors) belong to the
    start of the step, one timestep earlier.

    Example::

        rec = labkit.record(model, data, {"angle": data.joint("swing").qpos}, duration=3.0)
        rec.crossings("angle")           # times of upward zero crossings, s
    """
    __tracebackhide__ = True
    if not isinstance(signals, Mapping):
        raise TypeError("signals is a dict {name: view or function}, e.g. "
                        "{'angle': data.joint('swing').qpos}")
    fields = _fields(data) if any(not callable(s) for s in signals.values()) else []
    count = sim.steps(model, duration=duration, nstep=nstep)
    if every < 1:
        raise ValueError("every must be a positive number of steps")
    times = np.empty(count // every + 1)
    writers = {name: _writer(model, data, name, source, fields, len(times))
               for name, source in signals.items()}
    stores = [store for store, _ in writers.values()]

    def sample(k: int) -> None:
        times[k] = data.time
        for store in stores:
            store(k)

    sim.run(model, data, nstep=count, ctrl=ctrl, every=every, sample=sample)
    out: dict[str, np.ndarray] = {}
    for name, (_, collect) in writers.items():
        values = collect()
        out[name] = values[:, 0] if values.ndim == 2 and values.shape[1] == 1 else values
    return Recording(times, out)
