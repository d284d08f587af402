"""Record named signals while a simulation runs: ``labkit.record``.

A signal is named by a short spec string::

    "qpos:<joint>"   joint position(s)        (1 value; 4 for ball, 7 for free joints)
    "qvel:<joint>"   joint velocity(ies)      (1; 3 for ball, 6 for free joints)
    "qacc:<joint>"   joint acceleration(s)
    "ctrl:<actuator>"   its controls in data.ctrl (several for pid/orientation actuators)
    "force:<actuator>"  its output(s) in data.actuator_force (actuator space, before gear)
    "act:<actuator>"    activation state(s) of a stateful actuator
    "sensor:<sensor>"   sensor reading(s)
    "xpos:<body>"       body frame position in world (3)
    "site:<site>"       site position in world (3)
    "ncon"              number of active contacts
    "time"              simulation time

or by any callable ``f(model, data) -> number or array``.  Specs are resolved to array
indices once, before the run, so recording costs a few numpy gathers per step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import gl
from .models import element_id

if TYPE_CHECKING:
    import mujoco

__all__ = ["Control", "Recording", "record", "resolve"]

Signal = str | Callable[["mujoco.MjModel", "mujoco.MjData"], Any]
#: A control: None (leave data.ctrl alone), a constant vector, or f(model, data) -> vector.
Control = None | Sequence[float] | np.ndarray | Callable[["mujoco.MjModel", "mujoco.MjData"], Any]

_JOINT_WIDTH = {"qpos": (7, 4, 1, 1), "qvel": (6, 3, 1, 1), "qacc": (6, 3, 1, 1)}


@dataclass
class Recording(Mapping[str, np.ndarray]):
    """Signals over time: ``rec["qpos:swing"]`` is an array of shape (T,) or (T, k).

    t: sample times in seconds, shape (T,); the first sample is the state before the
    first step.  units: a best-effort unit string per signal (SI; radians for hinges).
    """

    t: np.ndarray
    signals: dict[str, np.ndarray]
    units: dict[str, str] = field(default_factory=dict)

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


def resolve(model: mujoco.MjModel, spec: str) -> tuple[str, np.ndarray, str]:
    """Resolve a spec string to (data field, index array, unit). See the module docstring."""
    import mujoco

    if spec in ("ncon", "time"):
        return spec, np.zeros(0, dtype=int), "" if spec == "ncon" else "s"
    kind, sep, name = spec.partition(":")
    if not sep:
        raise ValueError(f"signal {spec!r} needs a kind, e.g. 'qpos:{spec}' or 'sensor:{spec}'")
    if kind in _JOINT_WIDTH:
        j = element_id(model, "joint", name)
        jtype = int(model.jnt_type[j])
        start = model.jnt_qposadr[j] if kind == "qpos" else model.jnt_dofadr[j]
        width = _JOINT_WIDTH[kind][jtype]
        hinge = jtype == mujoco.mjtJoint.mjJNT_HINGE
        unit = {"qpos": "rad" if hinge else "m", "qvel": "rad/s" if hinge else "m/s",
                "qacc": "rad/s²" if hinge else "m/s²"}[kind]
        return kind, np.arange(start, start + width), unit if jtype >= 2 else ""
    if kind in ("ctrl", "force", "act"):
        a = element_id(model, "actuator", name)
        if kind == "act":
            adr, num = model.actuator_actadr[a], model.actuator_actnum[a]
            if adr < 0:
                raise ValueError(f"actuator {name!r} has no activation state (it is stateless)")
            return "act", np.arange(adr, adr + num), ""
        if kind == "ctrl":  # an actuator may take several controls (pid, orientation)
            adr, num = model.actuator_ctrladr[a], model.actuator_ctrlnum[a]
            return "ctrl", np.arange(adr, adr + num), ""
        adr, num = model.actuator_outadr[a], model.actuator_outnum[a]  # and give several forces
        return "actuator_force", np.arange(adr, adr + num), ""
    if kind == "sensor":
        s = element_id(model, "sensor", name)
        adr, dim = model.sensor_adr[s], model.sensor_dim[s]
        return "sensordata", np.arange(adr, adr + dim), ""
    if kind in ("xpos", "site"):
        i = element_id(model, "body" if kind == "xpos" else "site", name)
        return ("xpos" if kind == "xpos" else "site_xpos"), np.array([i]), "m"
    raise ValueError(
        f"unknown signal kind {kind!r} in {spec!r}; use qpos, qvel, qacc, ctrl, force, act, "
        "sensor, xpos, site, ncon, time, or a callable"
    )


def control(model: mujoco.MjModel, ctrl: Control) -> Callable[[mujoco.MjData], None] | None:
    """Turn a :data:`Control` into a function that writes ``data.ctrl`` (None: leave it)."""
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


def steps_for(model: mujoco.MjModel, duration_or_steps: float | int) -> int:
    """An int is a step count; a float is a duration in seconds (rounded to whole steps)."""
    if isinstance(duration_or_steps, bool) or not isinstance(duration_or_steps, int | float):
        raise TypeError("give a duration in seconds (float) or a number of steps (int)")
    if isinstance(duration_or_steps, int):
        steps = duration_or_steps
    else:
        steps = round(duration_or_steps / model.opt.timestep)
    if steps < 0:
        raise ValueError("cannot record a negative duration")
    return steps


def _writer(model: mujoco.MjModel, data: mujoco.MjData, source: Any, index: np.ndarray,
            out: Any) -> Callable[[int], None]:
    """A function that stores sample k of one signal into ``out``."""
    if callable(source):
        return lambda k: out.append(np.asarray(source(model, data), dtype=float))
    if source in ("ncon", "time"):
        def scalar(k: int) -> None:
            out[k, 0] = getattr(data, source)
        return scalar
    view = getattr(data, source)
    if source in ("xpos", "site_xpos"):
        row = int(index[0])

        def vector(k: int) -> None:
            out[k] = view[row]
        return vector
    if index.size == 1:
        i = int(index[0])

        def single(k: int) -> None:
            out[k, 0] = view[i]
        return single
    lo, hi = int(index[0]), int(index[-1]) + 1  # specs resolve to contiguous ranges

    def span(k: int) -> None:
        out[k] = view[lo:hi]
    return span


def record(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    duration_or_steps: float | int,
    signals: Sequence[Signal] | Mapping[str, Signal],
    ctrl: Control = None,
    *,
    every: int = 1,
) -> Recording:
    """Step the simulation and record signals.

    duration_or_steps: seconds (float) or a number of ``mj_step`` calls (int).
    signals: spec strings (see module docstring) or callables; a mapping gives the
        names to store them under.
    ctrl: None, a constant vector of length ``nu``, or ``f(model, data) -> vector``
        called before every step.
    every: keep one sample every ``every`` steps.

    Samples the state before the first step and after every ``every``-th step, so a run
    of N steps gives ``N // every + 1`` samples.  ``data`` is left at the final state.
    Each sample is what ``mj_step`` leaves in ``data``: ``qpos``/``qvel`` are the new
    state, while positions computed by kinematics (``xpos``, ``site_xpos``, most
    sensors) were computed at the start of the step, one timestep earlier.  ``mj_forward``
    runs once before the first sample, so it never shows stale values after a reset.
    """
    __tracebackhide__ = True
    gl.choose()
    import mujoco

    steps = steps_for(model, duration_or_steps)
    if every < 1:
        raise ValueError("every must be a positive number of steps")
    named = dict(signals) if isinstance(signals, Mapping) else {
        (s if isinstance(s, str) else getattr(s, "__name__", f"signal{i}")): s
        for i, s in enumerate(signals)
    }
    # Resolve every spec once: (name, data field or callable, index array, unit).
    plan: list[tuple[str, Any, np.ndarray, str]] = []
    for name, spec in named.items():
        if callable(spec):
            plan.append((name, spec, np.zeros(0, dtype=int), ""))
        else:
            field_name, index, unit = resolve(model, spec)
            plan.append((name, field_name, index, unit))
    apply = control(model, ctrl)
    samples = steps // every + 1
    times = np.empty(samples)
    store: dict[str, list[Any] | np.ndarray] = {}
    for name, source, index, _ in plan:
        width = 3 if source in ("xpos", "site_xpos") else max(index.size, 1)
        store[name] = [] if callable(source) else np.empty((samples, width))

    # One small writer per signal, bound to the data arrays once: MjData's arrays are
    # views of fixed memory, so reading them through a cached view sees every update.
    writers: list[Callable[[int], None]] = []
    for name, source, index, _ in plan:
        writers.append(_writer(model, data, source, index, store[name]))

    def sample(k: int) -> None:
        times[k] = data.time
        for write in writers:
            write(k)

    if apply is not None:
        apply(data)
    # The first sample must see quantities computed from the current state (after a
    # reset, data.energy, xpos, sensors are stale until the next forward pass).
    mujoco.mj_forward(model, data)
    sample(0)
    k = 1
    for step in range(1, steps + 1):
        if apply is not None:
            apply(data)
        mujoco.mj_step(model, data)
        if step % every == 0:
            sample(k)
            k += 1
    out: dict[str, np.ndarray] = {}
    for name, source, _index, _ in plan:
        values = np.array(store[name]) if callable(source) else store[name]
        out[name] = values[:, 0] if values.ndim == 2 and values.shape[1] == 1 else values
    return Recording(times, out, {name: unit for name, _, _, unit in plan})
