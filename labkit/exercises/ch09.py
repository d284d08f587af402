"""Checkers of chapter 09 (the capstone), with everything they use: the limits, the starting
parameters, the trial script and the trial itself.

The capstone notebook imports all of these from here, so what it shows is what the grader
uses; the checkers read nothing from the notebook but the learner's answers.  The constants
are read-only (``MappingProxyType``, tuples): a notebook cannot edit the grader's copy.

Units: SI throughout (m, s, N, N/m, N·s/m); the feedback prints lengths in mm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from .. import grasp, sim, solver
from ..display import figure, fmt
from ..models import load
from .answers import NUMBER, PARAMS, array
from .core import Exercise, ExerciseFailed, checker

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "LIMITS",
    "LIMIT_NOTES",
    "PARTS",
    "RIG",
    "SCRIPT",
    "SERVOS",
    "START",
    "build",
    "limits_text",
    "panels",
    "requirements",
    "rig_slip",
    "run",
    "table_depth_for",
]

LIMITS = MappingProxyType({
    "min_lift": 0.100,          # m
    "max_slip": 0.002,          # m
    "max_penetration": 0.001,   # m
    "max_peak_force": 15.0,     # N
    "max_jitter": 0.005,        # m/s
})
"""The capstone's limits (SI units): see :data:`LIMIT_NOTES` for what each one bounds."""

LIMIT_NOTES = MappingProxyType({
    "min_lift": ("m", "the cube's lowest height above its start, during the hold"),
    "max_slip": ("m", "largest motion of the cube relative to the fingers after the grasp"),
    "max_penetration": ("m", "deepest overlap of any contact of the cube, whole trial"),
    "max_peak_force": ("N", "largest normal force one finger exerts on the cube, whole trial"),
    "max_jitter": ("m/s", "RMS of the cube's velocity (relative to the hand) about its mean, hold"),
})
"""Unit and meaning of each limit."""

PARTS = MappingProxyType({"object": "cube", "fingers": ("left", "right"), "hand": "hand"})
"""The bodies ``grasp.trial`` measures in ``models/capstone_gripper.xml``."""

SCRIPT = MappingProxyType({
    "close": MappingProxyType({"left": 0.035, "right": 0.035}),   # m: pad faces on the cube's centre plane
    "lift": MappingProxyType({"lift": 0.12}),                     # m: 120 mm up
    "durations": (0.5, 1.5, 2.0),                                 # s: close, lift, hold
    "close_ramp": 0.3,                                            # s
    "lift_ramp": 1.0,                                             # s
})
"""The trial script (``grasp.script``'s arguments)."""

SERVOS = MappingProxyType({"finger": ("left", "right"), "lift": ("lift",)})
"""Servo groups: ``finger_kp`` sets both fingers' kp, ``lift_kv`` the lift's kv, ..."""

START = MappingProxyType({
    "friction": 0.5, "condim": 3, "solref": (0.02, 1), "solimp": (0.8, 0.9, 0.001, 0.5, 2),
    "cone": "pyramidal", "impratio": 1, "noslip_iterations": 0, "timestep": 0.002,
    "integrator": "Euler", "finger_kp": 200, "finger_kv": 2, "lift_kp": 50, "lift_kv": 20,
})
"""The parameters written in ``models/capstone_gripper.xml``: the failing starting point."""

MIN_TIMESTEP = 0.0005       # s: a smaller step would make the graded trial too slow
MAX_NOSLIP = 1000           # noslip iterations per step: more would make the graded trial too slow


def build(params: Mapping[str, Any]) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The capstone model with ``params`` applied (keys: ``grasp.PARAMETERS``, the servo groups
    of :data:`SERVOS`), and a fresh MjData.  Raises ``ValueError`` naming a wrong entry."""
    timestep = params.get("timestep", 0.002)
    if not isinstance(timestep, int | float) or isinstance(timestep, bool) or timestep < MIN_TIMESTEP:
        raise ValueError("choose a timestep of at least 0.5 ms: the graded trial would take too long")
    noslip = params.get("noslip_iterations", 0)
    if isinstance(noslip, int | float) and noslip > MAX_NOSLIP:
        raise ValueError(f"choose at most {MAX_NOSLIP} noslip_iterations: the graded trial would take "
                         "too long")
    model, data = load("capstone_gripper")
    return grasp.configure(model, params, servos=SERVOS), data


def run(params: Mapping[str, Any]) -> grasp.GraspReport:
    """Run the graded trial (:data:`SCRIPT` on :data:`PARTS`) with ``params``; returns a
    ``grasp.GraspReport``."""
    return grasp.trial(*build(params), **PARTS, **SCRIPT)


def _mm(x: float) -> str:
    """A length or speed in millimetres, as the feedback prints it."""
    return fmt(1e3 * x, 3)


def requirements(limits: Mapping[str, float] = LIMITS) -> list[tuple[str, str, float]]:
    """Exercise 9.4's requirements as ``(key, statement, weight)``, in the order they are
    checked: lift, slip and penetration, which the starting point fails, count double."""
    return [
        ("stable", "the simulation stays stable", 1.0),
        ("lift", f"the cube stays at least {_mm(limits['min_lift'])} mm up during the hold", 2.0),
        ("slip", f"the cube slips at most {_mm(limits['max_slip'])} mm relative to the fingers", 2.0),
        ("penetration", f"no contact overlaps more than {_mm(limits['max_penetration'])} mm", 2.0),
        ("peak_force", f"no finger presses harder than {fmt(limits['max_peak_force'])} N", 1.0),
        ("jitter", f"the cube shakes by at most {_mm(limits['max_jitter'])} mm/s RMS during the hold", 1.0),
    ]


def limits_text() -> str:
    """The limits and exercise 9.4's requirements with their weights, as a table to print."""
    lines = [f"{'limit':16s} {'value':>6s} {'unit':4s}  bounds"]
    for key, value in LIMITS.items():
        unit, note = LIMIT_NOTES[key]
        lines.append(f"{key:16s} {fmt(value):>6s} {unit:4s}  {note}")
    lines += ["", "exercise 9.4 requires (weight):"]
    lines += [f"  {fmt(weight)} × {statement}" for _, statement, weight in requirements()]
    return "\n".join(lines)


# the signals panels() draws (in mm), the limit each is held to, and its axis label
_PANELS = (("slip", "max_slip", "slip [mm]"), ("penetration", "max_penetration", "penetration [mm]"),
           ("height", "min_lift", "cube height [mm]"))


def panels(reports: Sequence[grasp.GraspReport], labels: Sequence[str]) -> Figure:
    """Slip, penetration and the cube's height (mm) against time (s) for several trials, one
    panel each, with the :data:`LIMITS` dashed and the ends of the close and lift phases dotted.

    reports: ``grasp.GraspReport`` s of the same script (the first one's phases are drawn);
    labels: one legend entry per report.  Returns a matplotlib Figure with three Axes.

    Example: ``panels([run(START)], ["start"])``.
    """
    fig, axes = figure(size=(9.6, 2.8), ncols=3)
    edges = (reports[0].phases["close"][1], reports[0].phases["lift"][1])
    for ax, (signal, limit, label) in zip(axes, _PANELS, strict=True):
        for report, name in zip(reports, labels, strict=True):
            ax.plot(report.recording.t, 1e3 * report.recording[signal], label=name)
        ax.axhline(1e3 * LIMITS[limit], color="k", ls="--", lw=1)
        for edge in edges:
            ax.axvline(edge, color="gray", ls=":", lw=1)
        ax.set(xlabel="time [s]", ylabel=label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    return fig


# -- § 3 · exercise 9.1 ----------------------------------------------------------------------------

@checker("9.1", "A lift that holds its height", points=2, answers={"lift_kp": NUMBER, "lift_kv": NUMBER})
def _lift(ex: Exercise) -> None:
    lifted = run({**START, "lift_kp": ex.value("lift_kp"), "lift_kv": ex.value("lift_kv")})
    held = lifted.recording.t >= lifted.phases["hold"][0]
    error = SCRIPT["lift"]["lift"] - lifted.recording["hand"][held, 2]
    worst = np.abs(error).max()
    why = ("still on its way up when the hold began" if abs(error[0]) >= abs(error[-1])
           else "sagging under the cube")
    ex.require(not lifted.unstable, "the simulation stays stable",
               failure=f"MuJoCo reported {', '.join(lifted.unstable)}",
               hint="under the Euler integrator a servo's kv above 2·mass/timestep diverges (section 6)")
    ex.require(worst <= 0.005, "the hand stays within 5 mm of its 0.12 m target during the whole hold",
               failure=f"it was up to {fmt(1e3 * worst, 3)} mm away, {why}",
               hint="the sag is m·g/kp; an overdamped servo settles with time constant ≈ kv/kp; "
                    "kv = 2·√(kp·m) is critically damped")


# -- § 4 · exercise 9.2 ----------------------------------------------------------------------------

RIG = MappingProxyType({**START, "cone": "elliptic", "noslip_iterations": 20, "lift_kp": 1e4, "lift_kv": 190})
"""Exercise 9.2's rig: Coulomb-like friction (elliptic cone, noslip) and a very stiff lift."""

PAD_TRAVEL = 0.010      # m: how far a finger closes before its pad touches the cube


def rig_slip(grip: float) -> float:
    """Slip (m) of the cube on the :data:`RIG` when each pad presses with ``grip`` newtons
    (``finger_kp`` = grip / the servo's 25 mm shortfall once the pad touches)."""
    squeeze = SCRIPT["close"]["left"] - PAD_TRAVEL
    return run({**RIG, "finger_kp": grip / squeeze}).slip


@checker("9.2", "The minimum grip force", points=2, answers={"grip_min": NUMBER})
def _grip(ex: Exercise) -> None:
    grip = ex.value("grip_min")
    if grip <= 0:
        raise ExerciseFailed(f"`grip_min` = {fmt(grip)}: a normal force per pad, in newtons, is positive")
    above, below = rig_slip(1.03 * grip), rig_slip(0.97 * grip)
    ex.require(above <= 0.0005, "with 3 % more than grip_min per pad the cube is lifted without slipping",
               failure=f"it slipped {fmt(1e3 * above, 3)} mm: your force is too small",
               hint="did you include the lift's acceleration, and both pads?")
    ex.require(below >= 0.002, "with 3 % less than grip_min per pad the cube slips",
               failure=f"it slipped only {fmt(1e3 * below, 3)} mm: your force is more than the minimum",
               hint="each of the two pads contributes μ·N; the acceleration peaks where the ramp starts")


# -- § 5 · exercise 9.3 ----------------------------------------------------------------------------

def table_depth_for(solref: Sequence[float], seconds: float = 0.5) -> float:
    """Resting depth (m) of the cube on the table (fingers open) after ``seconds``, with
    ``solref`` on every geom, the default solimp and an elliptic cone: the mean ``-dist`` of
    its contacts."""
    resting, rest_data = build({**START, "cone": "elliptic", "solref": tuple(solref),
                                "solimp": solver.DEFAULT_SOLIMP})
    sim.run(resting, rest_data, duration=seconds)
    return float(-np.mean([c.dist for c in rest_data.contact[:rest_data.ncon]]))


@checker("9.3", "A solref for a target depth", points=2, answers={"table_solref": array(length=2)})
def _table(ex: Exercise) -> None:
    ref = np.asarray(ex.value("table_solref"), dtype=float)
    valid = ref.shape == (2,) and (bool(np.all(ref > 0)) or bool(np.all(ref < 0)))
    if ex.require(valid, "solref is (timeconst, dampratio), both > 0, or (-stiffness, -damping), both < 0",
                  failure=f"got {fmt(ref.tolist())}",
                  hint="MuJoCo replaces a mixed-sign solref by its default"):
        depth = table_depth_for(tuple(ref))
        ex.require(2e-5 <= depth <= 4e-5, "the cube rests 0.02–0.04 mm deep in the table",
                   failure=f"it rests {fmt(1e3 * depth, 3)} mm deep",
                   hint="four corners share the weight: predict with rest_penetration(..., accel=g/4)")
        used = solver.reference(tuple(ref), solver.DEFAULT_SOLIMP, timestep=START["timestep"])
        ex.require(not used.clamped, "MuJoCo uses your timeconst as written",
                   failure=f"timeconst {fmt(ref[0])} s is below 2·timestep, so MuJoCo raised it to 0.004 s",
                   hint="trade timeconst against dampratio: the depth depends on their product")


# -- § 7 · exercise 9.4, the capstone ----------------------------------------------------------------

_HINTS = {
    "stable": "§6 · under Euler a servo kv above 2·mass/timestep diverges: lower kv or use "
              "integrator='implicitfast'",
    "lift": "§3 · a position servo sags by m·g/kp and an overdamped one arrives late (chapter 03); "
            "or the cube slipped",
    "slip": "§4 · check the grip against Coulomb's minimum, then stop the creep: elliptic cone with a larger "
            "impratio, or noslip (chapter 07)",
    "penetration": "§5 · an impact overshoots by v·τ/e and a squeeze follows chapter 05's rest rule: shorter "
                   "timeconst, higher dmin/dmax, a better damped approach",
    "peak_force": "§1 · the grip is finger_kp × 25 mm; a fast, stiff impact adds a spike on top "
                  "(chapters 03 and 05)",
    "jitter": "§6 · an undamped finger servo rings at √(2kp/(2m_f + m_c))/2π: give the fingers kv "
              "(chapter 04)",
}


def _verdicts(report: grasp.GraspReport) -> dict[str, tuple[bool, str]]:
    """Whether ``report`` meets each limit, and the failure message if it does not."""
    lim = LIMITS
    return {
        "stable": (not report.unstable,
                   f"MuJoCo reported {', '.join(report.unstable)}: the numbers below mean nothing"),
        "lift": (report.lift >= lim["min_lift"],
                 f"at its lowest it was {_mm(report.lift)} mm up, "
                 f"{_mm(lim['min_lift'] - report.lift)} mm short of the {_mm(lim['min_lift'])} mm limit"),
        "slip": (report.slip <= lim["max_slip"],
                 f"the cube slipped {_mm(report.slip)} mm, the limit is {_mm(lim['max_slip'])} mm"),
        "penetration": (report.penetration <= lim["max_penetration"],
                        f"{' and '.join(report.penetration_pair)} overlapped by "
                        f"{_mm(report.penetration)} mm, the limit is {_mm(lim['max_penetration'])} mm"),
        "peak_force": (report.peak_force <= lim["max_peak_force"],
                       f"a finger pressed with up to {fmt(report.peak_force, 3)} N, the limit is "
                       f"{fmt(lim['max_peak_force'])} N"),
        "jitter": (report.jitter <= lim["max_jitter"],
                   f"it shook at {_mm(report.jitter)} mm/s RMS, the limit is {_mm(lim['max_jitter'])} mm/s"),
    }


@checker("9.4", "Lift the cube and hold it", points=10, answers={"answer": PARAMS})
def _capstone(ex: Exercise) -> None:
    params = ex.value("answer")
    try:
        report = run(params)
    except (ValueError, KeyError, TypeError) as exc:
        raise ExerciseFailed(f"the grader cannot run `answer`: {exc}") from None
    verdicts = _verdicts(report)
    for key, statement, weight in requirements():
        passed, failure = verdicts[key]
        ex.require(passed, statement, failure=failure, hint=_HINTS[key], weight=weight)
