"""Measure a grasp-and-lift trial: ``labkit.grasp.trial``.

A gripper (a *hand* body carrying *finger* bodies) closes on an *object*, lifts it and
holds it, following a fixed :func:`script` of three phases::

    close   the close controls ramp from their open commands (default 0) to their closed ones;
            the object rests on its support
    lift    the lift controls ramp smoothly (3s² - 2s³) from their close values to theirs
    hold    every control stays where the lift left it

and the trial measures, from the simulation alone (SI units throughout):

- **slip** (m): how far the object moved relative to the fingers (the mean position of
  the finger bodies) after the grasp was made, i.e. from the end of *close* to the end
  of the trial; the largest distance is reported;
- **penetration** (m): the deepest overlap of any contact that involves the object
  (``-contact.dist``; a contact margin is not subtracted), over the whole trial, and the
  two geoms of that contact;
- **peak_force** / **mean_force** (N): the normal force each finger exerts on the object
  (``mj_contactForce``, summed over that finger's contacts), its largest value over the
  whole trial and its mean over the hold (averaged over the fingers);
- **jitter** (m/s): the RMS about its mean of the object's velocity relative to the hand
  during the hold; a steady creep has no jitter, a shaking object has;
- **lift** (m): the object's height above its starting height, the lowest value during
  the hold (so a lift that sags, arrives late or drops the object shows it).

Positions are read from ``xpos`` after each ``mj_step``.  Under Euler, implicit and
implicitfast they and the contacts belong to the state the step started from.  Under RK4 they
belong to RK4's last stage, a trial state at the end of the step (q + h·v₃, neither the start
nor the end state), so every sample is about one step later than its time says; no
measurement here resolves one step.  Velocities are finite differences of those positions.
A simulation that diverges is reported (``unstable``), not hidden.
:func:`configure` applies a dictionary of contact, solver and servo parameters to a
model, with errors that name the entry that is wrong.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from . import gl, sim
from .display import fmt
from .models import element_id
from .recording import Recording

if TYPE_CHECKING:
    import mujoco

__all__ = ["PARAMETERS", "GraspReport", "configure", "script", "smoothstep", "trial"]

# -- parameters ------------------------------------------------------------------------------
#: The parameters :func:`configure` understands, and what each one sets.
PARAMETERS = {
    "friction": "sliding friction of every geom (or a (sliding, torsional, rolling) triple)",
    "condim": "contact dimensionality of every geom: 1, 3, 4 or 6",
    "solref": "(timeconst, dampratio) or (-stiffness, -damping) of every geom",
    "solimp": "(dmin, dmax, width, midpoint, power) of every geom",
    "cone": "friction cone: 'pyramidal' or 'elliptic'",
    "impratio": "ratio of frictional to normal constraint impedance (≥ 1 makes friction stiffer)",
    "noslip_iterations": "iterations of the noslip post-solver (0: off)",
    "timestep": "simulation timestep (s)",
    "integrator": "'Euler', 'implicitfast', 'implicit' or 'RK4'",
    "<servo>_kp": "position gain (N/m or N·m/rad) of the servos named <servo>",
    "<servo>_kv": "velocity gain (N·s/m or N·m·s/rad) of the servos named <servo>",
}


def _vector(key: str, value: Any, size: int) -> np.ndarray:
    array = np.asarray(value, dtype=float).reshape(-1)
    if array.size != size or not np.all(np.isfinite(array)):
        raise ValueError(f"{key!r} needs {size} finite numbers, got {value!r}")
    return array


def configure(
    model: mujoco.MjModel,
    params: Mapping[str, Any],
    *,
    servos: Mapping[str, Sequence[str]] = (),  # type: ignore[assignment]
    geoms: Sequence[str] | None = None,
) -> mujoco.MjModel:
    """Apply ``params`` (keys as in :data:`PARAMETERS`) to ``model`` in place; return it.

    Contact parameters go to every geom named in ``geoms`` (default: every geom), so both
    sides of each contact agree and MuJoCo's mixing rules return them unchanged.
    ``servos`` maps a servo group name to actuator names: ``{"finger": ["left", "right"]}``
    makes ``finger_kp`` and ``finger_kv`` set the gains of both (position servos:
    ``gainprm[0] = kp``, ``biasprm[1:3] = (-kp, -kv)``).  A key that is not understood,
    or a value out of range, raises ``ValueError`` naming it; an unknown geom or actuator
    name raises ``KeyError`` listing the model's names (:func:`labkit.models.element_id`).

    Example: ``configure(model, {"friction": 1.0, "finger_kp": 500}, servos={"finger": ["left"]})``.
    """
    __tracebackhide__ = True
    import mujoco

    groups = dict(servos)
    known = {k for k in PARAMETERS if not k.startswith("<")}
    known |= {f"{g}_{gain}" for g in groups for gain in ("kp", "kv")}
    targets = range(model.ngeom) if geoms is None else [element_id(model, "geom", g) for g in geoms]
    for key, value in params.items():
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            guess = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown parameter {key!r}{guess} (known: {', '.join(sorted(known))})")
        if key == "friction":
            array = np.asarray(value, dtype=float).reshape(-1)
            if array.size not in (1, 3) or not np.all(array >= 0):
                raise ValueError(f"'friction' is one number or three, all ≥ 0; got {value!r}")
            for g in targets:
                model.geom_friction[g, : array.size] = array
        elif key == "condim":
            if value not in (1, 3, 4, 6):
                raise ValueError(f"'condim' must be 1, 3, 4 or 6; got {value!r}")
            for g in targets:
                model.geom_condim[g] = int(value)
        elif key in ("solref", "solimp"):
            array = _vector(key, value, 2 if key == "solref" else 5)
            for g in targets:
                getattr(model, f"geom_{key}")[g] = array
        elif key == "cone":
            cones = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL,
                     "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
            if value not in cones:
                raise ValueError(f"'cone' must be 'pyramidal' or 'elliptic'; got {value!r}")
            model.opt.cone = cones[value]
        elif key in ("impratio", "timestep"):
            number = float(value)
            if not number > 0 or not math.isfinite(number):
                raise ValueError(f"{key!r} must be a positive number; got {value!r}")
            setattr(model.opt, key, number)
        elif key == "integrator":
            kinds = {"Euler": mujoco.mjtIntegrator.mjINT_EULER,
                     "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
                     "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
                     "RK4": mujoco.mjtIntegrator.mjINT_RK4}
            if value not in kinds:
                raise ValueError(f"'integrator' must be one of {', '.join(kinds)}; got {value!r}")
            model.opt.integrator = kinds[value]
        elif key == "noslip_iterations":
            if int(value) != value or value < 0:
                raise ValueError(f"'noslip_iterations' must be a whole number ≥ 0; got {value!r}")
            model.opt.noslip_iterations = int(value)
        else:
            group, gain = key.rsplit("_", 1)
            number = float(value)
            if not number >= 0 or not math.isfinite(number):
                raise ValueError(f"{key!r} must be a number ≥ 0; got {value!r}")
            for name in groups[group]:
                a = element_id(model, "actuator", name)
                if (model.actuator_gaintype[a] != mujoco.mjtGain.mjGAIN_FIXED
                        or model.actuator_biastype[a] != mujoco.mjtBias.mjBIAS_AFFINE):
                    raise ValueError(f"actuator {name!r} is not a position servo (fixed gain, "
                                     f"affine bias), so {key!r} cannot set its gain")
                if gain == "kp":
                    model.actuator_gainprm[a, 0] = number
                    model.actuator_biasprm[a, 1] = -number
                else:
                    model.actuator_biasprm[a, 2] = -number
    return model


# -- the trial ---------------------------------------------------------------------------------
def smoothstep(s: float) -> float:
    """3s² - 2s³ for s clipped to [0, 1]: a ramp from 0 to 1 that starts and ends at rest.

    Example: ``smoothstep(0.5)`` → ``0.5``; ``smoothstep(2.0)`` → ``1.0``.
    """
    s = min(max(s, 0.0), 1.0)
    return s * s * (3 - 2 * s)


_UNITS = {"slip": "m", "penetration": "m", "peak_force": "N", "mean_force": "N",
          "jitter": "m/s", "lift": "m"}

#: mjtWarning names whose firing means the simulation blew up: after a bad qpos, qvel or qacc
#: MuJoCo resets mjData; after a bad ctrl it keeps going but applies no actuator force
_UNSTABLE = ("mjWARN_BADQPOS", "mjWARN_BADQVEL", "mjWARN_BADQACC", "mjWARN_BADCTRL")


@dataclass(frozen=True)
class GraspReport:
    """What a grasp-and-lift trial measured (see the module docstring for definitions).

    slip (m), penetration (m), peak_force (N), mean_force (N), jitter (m/s), lift (m):
    the measurements (:attr:`units` names them); penetration_pair: the geom names of the
    deepest contact (``("", "")`` if the object never touched anything); unstable: the
    MuJoCo warnings (``mjtWarning`` names) that say the simulation diverged, empty when
    it did not (when it is not empty the numbers above mean nothing: after a bad qpos, qvel
    or qacc MuJoCo reset the simulation midway, after a bad ctrl it ran without actuator
    forces); phases: name → (start, end) in s; recording: the per-step time series
    behind the numbers (``slip`` m, ``height`` m of the object above its start, ``hand``
    m, the hand's displacement (3), ``penetration`` m, ``force`` N per finger,
    ``velocity`` m/s of the object relative to the hand (3)), ready for ``labkit.plot``.
    """

    slip: float
    penetration: float
    peak_force: float
    mean_force: float
    jitter: float
    lift: float
    penetration_pair: tuple[str, str]
    unstable: tuple[str, ...]
    phases: dict[str, tuple[float, float]]
    recording: Recording = field(repr=False)

    units: ClassVar[dict[str, str]] = _UNITS

    def text(self) -> str:
        """The report as a table in mm, N and mm/s, one measurement per line.

        Example: ``print(report.text())`` → a ``grasp trial`` header, then ``slip  7.45 mm`` ….
        """
        rows = [("slip", self.slip * 1e3, "mm"), ("penetration", self.penetration * 1e3, "mm"),
                ("peak force", self.peak_force, "N"), ("mean force", self.mean_force, "N"),
                ("jitter", self.jitter * 1e3, "mm/s"), ("lift", self.lift * 1e3, "mm")]
        # below a thousandth of the unit shown, a number is simulation noise, not a lesson
        shown = [(name, fmt(value, 3) if abs(value) >= 1e-3 or value == 0 else "< 0.001", unit)
                 for name, value, unit in rows]
        lines = [f"{name:12s} {value:>8s} {unit}" for name, value, unit in shown]
        if self.penetration_pair[0]:
            lines[1] += f"  ({self.penetration_pair[0]} / {self.penetration_pair[1]})"
        if self.unstable:
            lines.append("UNSTABLE: " + ", ".join(self.unstable) + " (the numbers are meaningless)")
        return "grasp trial\n  " + "\n  ".join(lines)

    def __repr__(self) -> str:
        return self.text()


def _commands(model: mujoco.MjModel, which: str, commands: Mapping[str, float]) -> dict[int, float]:
    """Actuator id → command for ``commands`` (actuator name → ctrl); a name the model lacks
    raises KeyError listing its actuators; a command that is not a finite number, or lies
    outside a limited actuator's ctrlrange (MuJoCo would clamp it silently), raises
    ValueError naming the actuator and the range."""
    __tracebackhide__ = True
    out = {}
    for name, value in commands.items():
        a = element_id(model, "actuator", name)
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ValueError(f"the {which} command of actuator {name!r} must be a number, got "
                             f"{value!r}")
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"the {which} command of actuator {name!r} must be finite, got "
                             f"{value!r}")
        low, high = model.actuator_ctrlrange[a]
        if model.actuator_ctrllimited[a] and not low <= number <= high:
            raise ValueError(f"the {which} command {number:g} of actuator {name!r} lies outside "
                             f"its ctrlrange [{low:g}, {high:g}]: MuJoCo would clamp it to "
                             f"{min(max(number, low), high):g}")
        out[a] = number
    return out


def _open_commands(model: mujoco.MjModel, open: float | Mapping[str, float] | None,
                   close: Mapping[str, float]) -> dict[int, float]:
    """The open (start) command of each close actuator: 0 where ``open`` is None (as before
    there was an ``open``), ``open`` for every one where it is a number, else per actuator
    (each must be one of ``close``'s; the others start at 0)."""
    __tracebackhide__ = True
    if open is None:
        return {}
    if isinstance(open, Mapping):
        for name in open:
            element_id(model, "actuator", name)          # an unknown name: KeyError, listing
        stray = [name for name in open if name not in close]
        if stray:
            raise ValueError(f"open names actuator {stray[0]!r}, which close does not: open gives "
                             "the command each closing actuator starts from (close: "
                             f"{', '.join(close) or 'empty'})")
        return _commands(model, "open", open)
    return _commands(model, "open", dict.fromkeys(close, open))


def script(
    model: mujoco.MjModel,
    *,
    close: Mapping[str, float],
    lift: Mapping[str, float],
    durations: tuple[float, float, float] = (0.5, 1.5, 2.0),
    close_ramp: float = 0.0,
    lift_ramp: float | None = None,
    open: float | Mapping[str, float] | None = None,
) -> Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray]:
    """The close → lift → hold controls as a function ``f(model, data) -> ctrl`` of
    ``data.time``, for :func:`trial` and for ``labkit.record``/``labkit.video``'s ``ctrl=``.

    close: actuator name → its closed command, the ctrl it moves to during the close phase
    from its open command, over ``close_ramp`` seconds (0: at once); open: the open
    commands they start from, one number for every actuator of ``close`` or a mapping
    actuator name → command (those it leaves out start at 0); None (the default) starts
    every one at 0, for grippers whose ctrl 0 is open.  Give ``open`` where ctrl 0 means
    closed or where open needs a command (a position servo whose ctrl is the finger gap, a
    motor that must pull the fingers apart).  lift: actuator name → ctrl it moves to from
    its close value (0 if not in ``close``) in the lift phase, over ``lift_ramp`` seconds
    (default: the whole lift phase).  Ramps follow :func:`smoothstep`.  Other controls are
    0.  durations: seconds of close, lift and hold.  The function returns shape (nu,).
    A command that is not a finite number, or lies outside a limited actuator's ctrlrange,
    raises ValueError naming the actuator; an open command for an actuator ``close`` does
    not name raises ValueError too.

    Example: ``script(model, close={"left": 0.035}, lift={"lift": 0.12})(model, data)``;
    ``script(model, close={"gap": 0.0}, open=0.04, lift={"lift": 0.1})`` for a gripper whose
    ctrl is the finger gap.
    """
    __tracebackhide__ = True
    t_close, t_lift, t_hold = (float(x) for x in durations)
    if min(t_close, t_lift, t_hold) <= 0:
        raise ValueError(f"the three durations must be positive, got {durations}")
    lift_ramp = t_lift if lift_ramp is None else float(lift_ramp)
    if not 0 <= close_ramp <= t_close or not 0 <= lift_ramp <= t_lift:
        raise ValueError("each ramp must fit in its phase (0 ≤ close_ramp ≤ close duration, "
                         "0 ≤ lift_ramp ≤ lift duration)")
    closing = _commands(model, "closed", close)
    lifting = _commands(model, "lift", lift)
    start = _open_commands(model, open, close)
    nu = model.nu

    def ctrl(_model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        t = data.time
        u = np.zeros(nu)
        s = 1.0 if close_ramp == 0 else smoothstep(t / close_ramp)
        for a, target in closing.items():
            opened = start.get(a, 0.0)
            u[a] = opened + s * (target - opened)
        if t >= t_close - 1e-9:
            s = 1.0 if lift_ramp == 0 else smoothstep((t - t_close) / lift_ramp)
            for a, target in lifting.items():
                u[a] += s * (target - u[a])
        return u

    return ctrl


def _keyframe(model: mujoco.MjModel, keyframe: int | str) -> int:
    """The index of keyframe ``keyframe`` (name or index); KeyError naming the model's keys."""
    __tracebackhide__ = True
    import mujoco

    if isinstance(keyframe, str):
        index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
    elif isinstance(keyframe, int | np.integer) and not isinstance(keyframe, bool):
        index = int(keyframe) if 0 <= keyframe < model.nkey else -1
    else:
        raise TypeError(f"keyframe is a keyframe's name or index, got {keyframe!r}")
    if index < 0:
        names = [model.key(i).name or f"#{i}" for i in range(model.nkey)]
        raise KeyError(f"the model has no keyframe {keyframe!r}; its keyframes: {names or 'none'}")
    return index


def trial(
    model: mujoco.MjModel,
    data: mujoco.MjData | None = None,
    *,
    object: str,
    fingers: Sequence[str],
    hand: str,
    close: Mapping[str, float],
    lift: Mapping[str, float],
    durations: tuple[float, float, float] = (0.5, 1.5, 2.0),
    close_ramp: float = 0.0,
    lift_ramp: float | None = None,
    open: float | Mapping[str, float] | None = None,
    keyframe: int | str | None = None,
) -> GraspReport:
    """Run the close → lift → hold :func:`script` and measure it; returns a
    :class:`GraspReport`.

    object, hand: body names; fingers: the finger body names (their geoms' contacts with
    the object are the finger contacts).  close (the closed commands), open (the open
    commands the close actuators start from; default 0), lift, durations, close_ramp,
    lift_ramp: the script, as in :func:`script`.  To start a gripper open, give the command
    that holds it open as ``open`` and, where ``qpos0`` is not open, a ``keyframe`` (name or
    index) whose pose is.  ``data`` (a fresh MjData if None) is reset first, with
    ``mj_resetData`` or to the keyframe (``mj_resetDataKeyframe``, then time 0, since the
    script follows ``data.time``), and left at the final state.  The simulation runs
    round(sum(durations) / timestep) steps through :func:`labkit.sim.run`; sample k (of as
    many) is read after step k + 1, i.e. the state at time k·timestep (under RK4, the trial
    state of RK4's last stage, near time (k + 1)·timestep: see the module docstring).

    Example: ``trial(model, object="cube", fingers=["left", "right"], hand="hand",
    close={"left": 0.035, "right": 0.035}, lift={"lift": 0.12}).slip`` → metres; a
    gripper whose ctrl is the finger gap: ``close={"gap": 0.0}, open=0.04``.
    """
    __tracebackhide__ = True
    gl.choose()
    import mujoco

    control = script(model, close=close, lift=lift, durations=durations, close_ramp=close_ramp,
                     lift_ramp=lift_ramp, open=open)
    key = None if keyframe is None else _keyframe(model, keyframe)
    t_close, t_lift, t_hold = (float(x) for x in durations)
    obj, base = element_id(model, "body", object), element_id(model, "body", hand)
    finger_ids = [element_id(model, "body", f) for f in fingers]
    if not finger_ids:
        raise ValueError("a grasp needs at least one finger body")
    which = {b: k for k, b in enumerate(finger_ids)}
    if data is None:
        data = mujoco.MjData(model)
    if key is None:
        mujoco.mj_resetData(model, data)
    else:
        mujoco.mj_resetDataKeyframe(model, data, key)
        data.time = 0.0

    dt = model.opt.timestep
    n = round((t_close + t_lift + t_hold) / dt)  # one sample per step
    obj_pos, hand_pos, finger_pos = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
    depth, force = np.zeros(n), np.zeros((n, len(finger_ids)))
    deepest, pair = 0.0, ("", "")
    wrench = np.zeros(6)
    geom_body = model.geom_bodyid

    def measure(j: int) -> None:
        # sim.run calls sample(0) after an mj_forward at time 0, then sample(j) after the j-th
        # mj_step.  After mj_step, xpos, the contacts and their forces describe the state the
        # step started from, at time (j-1)·dt (under RK4: its last stage, near time j·dt): that
        # is sample k = j - 1.  sample(0) repeats what the first step will see, so it is not
        # recorded.
        nonlocal deepest, pair
        if j == 0:
            return
        k = j - 1
        obj_pos[k] = data.xpos[obj]
        hand_pos[k] = data.xpos[base]
        finger_pos[k] = data.xpos[finger_ids].mean(axis=0)
        for i in range(data.ncon):
            contact = data.contact[i]
            b1, b2 = geom_body[contact.geom1], geom_body[contact.geom2]
            if obj not in (b1, b2) or contact.exclude:
                continue
            if -contact.dist > depth[k]:
                depth[k] = -contact.dist
            if -contact.dist > deepest:
                deepest = -contact.dist
                pair = (model.geom(contact.geom1).name or f"#{contact.geom1}",
                        model.geom(contact.geom2).name or f"#{contact.geom2}")
            other = b2 if b1 == obj else b1
            if other in which:
                mujoco.mj_contactForce(model, data, i, wrench)
                force[k, which[other]] += wrench[0]

    sim.run(model, data, nstep=n, ctrl=control, sample=measure)

    times = np.arange(n) * dt
    rel_fingers = obj_pos - finger_pos
    grasped = int(np.searchsorted(times, t_close - 1e-9))  # the first sample of the lift
    slip = np.linalg.norm(rel_fingers - rel_fingers[min(grasped, n - 1)], axis=1)
    slip[:grasped] = 0.0
    hold_start = t_close + t_lift
    hold = times >= hold_start - 1e-9
    velocity = np.vstack([np.zeros((1, 3)), np.diff(obj_pos - hand_pos, axis=0) / dt])
    held = velocity[hold][1:]  # the first hold sample's difference spans the phase change
    jitter = float(np.sqrt(np.mean(np.sum((held - held.mean(axis=0)) ** 2, axis=1))))
    height = obj_pos[:, 2] - obj_pos[0, 2]
    hand_moved = hand_pos - hand_pos[0]
    unstable = tuple(name for name in _UNSTABLE
                     if data.warning[getattr(mujoco.mjtWarning, name)].number > 0)
    recording = Recording(  # units: slip, height, hand, penetration m; force N; velocity m/s
        times,
        {"slip": slip, "height": height, "hand": hand_moved, "penetration": depth, "force": force,
         "velocity": velocity},
    )
    return GraspReport(
        slip=float(slip.max()),
        penetration=float(deepest),
        peak_force=float(force.max()),
        mean_force=float(force[hold].mean()),
        jitter=jitter,
        lift=float(height[hold].min()),
        penetration_pair=pair,
        unstable=unstable,
        phases={"close": (0.0, t_close), "lift": (t_close, hold_start),
                "hold": (hold_start, hold_start + t_hold)},
        recording=recording,
    )
