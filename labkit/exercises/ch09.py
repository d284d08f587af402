"""Checkers of chapter 09 (the capstone), with everything they use: the limits, the starting
parameters, the trial script and the trial itself.

The capstone notebook imports all of these from here, so what it shows is what the grader
uses; the checkers read nothing from the notebook but the learner's answers.  The constants
are read-only (``MappingProxyType``, tuples): a notebook cannot edit the grader's copy.

Units: SI throughout (m, s, N, N/m, N·s/m); the feedback prints lengths in mm.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from .. import grasp, sim, solver
from ..display import figure, fmt
from ..models import load
from .answers import Kind, array, choice, fields, integer, number
from .ch07 import solref_kind
from .core import Exercise, ExerciseFailed, checker

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "AFTER_LIFT",
    "ANSWER",
    "GATES",
    "LIMITS",
    "LIMIT_NOTES",
    "PARAMETER_KINDS",
    "PARTS",
    "RIG",
    "RIG_HOLDS",
    "RIG_SLIPS",
    "SCRIPT",
    "SERVOS",
    "START",
    "TABLE_BAND",
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
MAX_TIMESTEP = 0.01         # s: 5 × the model's 2 ms; see PARAMETER_KINDS
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


@lru_cache(maxsize=64)
def _cached_trial(key: str) -> grasp.GraspReport:
    return run(json.loads(key))


def _trial(params: Mapping[str, Any]) -> grasp.GraspReport:
    """:func:`run`, cached on the parameters as JSON data: the checkers grade the same
    parameters again (the same answer, START's variants, the 9.2 rig) without rerunning a
    trial.  The report is shared: only read it."""
    return _cached_trial(json.dumps(dict(params), sort_keys=True))


# -- the capstone's answer: one kind, with its physical range, per parameter ---------------------

# sliding friction: positive (a frictionless pad lifts nothing) and at most 10: no material pair
# comes near it (rubber on rubber is 1–2), and far beyond it MuJoCo's contacts misbehave
_SLIDING = number(0, 10, low_open=True, why="a sliding friction coefficient is positive, and no material "
                  "pair comes near 10 (rubber on rubber is about 1–2)")
# torsional and rolling friction are lengths (m, the arm of the normal force): beyond 0.1 m,
# twice the cube's 50 mm edge, no contact patch of this grasp could produce them
_TWISTING = number(0, 0.1, unit=" m", why="torsional and rolling friction are lengths, at most twice "
                   "the cube's 50 mm edge")
_FRICTION_TRIPLE = array(items=[_SLIDING, _TWISTING, _TWISTING])


def _friction(value: Any) -> Any:
    """One sliding coefficient, or (sliding, torsional m, rolling m), as configure takes it."""
    if isinstance(value, list | tuple | np.ndarray):
        return _FRICTION_TRIPLE.convert(value)
    return _SLIDING.convert(value)


# solimp = (dmin, dmax, width, midpoint, power): MuJoCo clamps dmin, dmax and the midpoint into
# (0, 1), so a value outside means something else than it says; the width is a positive length
# (beyond 0.1 m, twice the cube's edge, no contact of the grasp reaches the end of it); the power
# is at least 1 (MuJoCo's rule), and beyond 10 the curve is a step already
_IMPEDANCE = {"low_open": True, "high_open": True}
_SOLIMP = array(items=[
    number(0, 1, **_IMPEDANCE, why="dmin is an impedance, strictly between 0 and 1"),
    number(0, 1, **_IMPEDANCE, why="dmax is an impedance, strictly between 0 and 1"),
    number(0, 0.1, low_open=True, unit=" m", why="the width is a positive length, at most twice the edge"),
    number(0, 1, **_IMPEDANCE, why="the midpoint is a fraction of the width"),
    number(1, 10, why="MuJoCo's power is at least 1, and beyond 10 the impedance is a step already"),
])

# impratio: at least 1 (friction as stiff as the normal, or stiffer) and at most 1000: the manual's
# advice stops near 100, and far beyond, the friction rows' softness falls below the solver's
# tolerance: nothing changes but the conditioning
_IMPRATIO = number(1, 1000, why="impratio ≥ 1 makes friction stiffer; beyond 1000 nothing changes but the "
                   "solver's conditioning")

# timestep: the grader's cost sets the lower bound (a 0.5 ms trial takes 8000 steps); above 10 ms
# (5 × the model's 2 ms) the 0.3 s close ramp gets under 30 steps and MuJoCo raises every solref
# timeconst to at least 2·timestep = 20 ms, as soft as the failing start (a 2 s step scored 4.44)
_TIMESTEP = number(MIN_TIMESTEP, MAX_TIMESTEP, unit=" s",
                   why="choose a timestep of at least 0.5 ms (a smaller one makes the graded trial too "
                       "slow) and at most 10 ms (5 × the model's 2 ms: coarser steps resolve neither the "
                       "close nor a contact)")

# servo gains: ≥ 0 (a negative gain pushes away from the target).  kp ≤ 1e5 N/m: the 0.1 kg
# finger's ω = √(kp/m) then reaches 1000 rad/s, ω·h = 2 at the 2 ms step, Euler's limit (chapter
# 10), and the lift's sag m·g/kp is 0.02 mm.  kv ≤ 1e4 N·s/m: kv/m = 1e5/s for a finger, 50 times
# 1/timestep at the smallest step (under Euler, kv above 2·m/h diverges long before)
MAX_KP, MAX_KV = 1e5, 1e4
_GAINS = {
    "kp": number(0, MAX_KP, unit=" N/m",
                 why="a servo's kp is ≥ 0, and beyond 1e5 N/m no step of the trial can follow the finger"),
    "kv": number(0, MAX_KV, unit=" N·s/m",
                 why="a servo's kv is ≥ 0, and beyond 1e4 N·s/m it is overdamped beyond any use"),
}

PARAMETER_KINDS = MappingProxyType({
    "friction": Kind("a friction coefficient, or three", _friction),
    "condim": choice((1, 3, 4, 6), "MuJoCo's contact dimensionalities"),
    "solref": solref_kind(),     # timeconst ≤ 1 s, dampratio ≤ 10; or stiffness ≤ 1e8, damping ≤ 1e5
    "solimp": _SOLIMP,
    "cone": choice(("pyramidal", "elliptic"), "MuJoCo's two friction cones"),
    "impratio": _IMPRATIO,
    "noslip_iterations": integer(0, MAX_NOSLIP, why=f"choose at most {MAX_NOSLIP} noslip_iterations: more "
                                 "would make the graded trial too slow"),
    "timestep": _TIMESTEP,
    "integrator": choice(("Euler", "implicitfast", "implicit", "RK4"), "MuJoCo's integrators"),
    **{f"{group}_{gain}": kind for group in SERVOS for gain, kind in _GAINS.items()},
})
"""Exercise 9.4's parameters (``grasp.PARAMETERS`` and the servo gains of :data:`SERVOS`),
each with the kind and physical range its answer is validated with before any trial."""

ANSWER = fields(PARAMETER_KINDS)
"""The kind of exercise 9.4's ``answer``: ``START`` with changes, each within its range (an
unknown key is named with the nearest known one)."""


def _mm(x: float) -> str:
    """A length or speed in millimetres, as the feedback prints it."""
    return fmt(1e3 * x, 3)


GATES = ("stable",)
"""Exercise 9.4's preconditions: required before any points count (they carry no weight)."""

AFTER_LIFT = ("slip", "penetration", "peak_force", "jitter")
"""Exercise 9.4's limits that count only once the cube was lifted and held: a cube that never
moves meets them all."""


def requirements(limits: Mapping[str, float] = LIMITS) -> list[tuple[str, str, float]]:
    """Exercise 9.4's requirements as ``(key, statement, weight)``, in the order they are
    checked: the simulation's stability is a precondition (weight 0, see :data:`GATES`); lift is
    the task; slip, penetration, force and jitter count only once the cube was lifted and held
    (:data:`AFTER_LIFT`).  Lift, slip and penetration, which the starting point fails, count double."""
    return [
        ("stable", "the simulation stays stable", 0.0),
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
    listed = requirements()
    lines += [f"  required before any points count: {statement}" for key, statement, _ in listed
              if key in GATES]
    lines += [f"  {fmt(weight)} × {statement} (the task)" for key, statement, weight in listed
              if key not in GATES and key not in AFTER_LIFT]
    lines += ["  counted only once the cube was lifted and held:"]
    lines += [f"    {fmt(weight)} × {statement}" for key, statement, weight in listed if key in AFTER_LIFT]
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

# the lift servo's gains: the capstone's ranges (≥ 0, kp ≤ 1e5 N/m, kv ≤ 1e4 N·s/m)
@checker("9.1", "A lift that holds its height", points=2,
         answers={"lift_kp": PARAMETER_KINDS["lift_kp"], "lift_kv": PARAMETER_KINDS["lift_kv"]})
def _lift(ex: Exercise) -> None:
    lifted = _trial({**START, "lift_kp": ex.value("lift_kp"), "lift_kv": ex.value("lift_kv")})
    ex.precondition(not lifted.unstable, "the simulation stays stable",
                    failure=f"MuJoCo reported {', '.join(lifted.unstable)}",
                    hint="under the Euler integrator a servo's kv above 2·mass/timestep diverges (section 6)")
    held = lifted.recording.t >= lifted.phases["hold"][0]
    error = SCRIPT["lift"]["lift"] - lifted.recording["hand"][held, 2]
    worst = np.abs(error).max()
    why = ("still on its way up when the hold began" if abs(error[0]) >= abs(error[-1])
           else "sagging under the cube")
    ex.require(worst <= 0.005, "the hand stays within 5 mm of its 0.12 m target during the whole hold",
               failure=f"it was up to {fmt(1e3 * worst, 3)} mm away, {why}",
               hint="the sag is m·g/kp; an overdamped servo settles with time constant ≈ kv/kp; "
                    "kv = 2·√(kp·m) is critically damped")


# -- § 4 · exercise 9.2 ----------------------------------------------------------------------------

RIG = MappingProxyType({**START, "cone": "elliptic", "noslip_iterations": 20, "lift_kp": 1e4, "lift_kv": 190})
"""The grip rig of chapter 09 §4: Coulomb-like friction (elliptic cone, noslip) and a very stiff
lift.  Exercise 9.2 grades on it with the pyramidal cone."""

PAD_TRAVEL = 0.010      # m: how far a finger closes before its pad touches the cube

# the rig's verdicts: "lifted without slipping" is a quarter of the capstone's 2 mm slip limit (exercise
# 9.2 grades against it on both sides); "slips" is that limit itself (§4's test of Coulomb's grip)
RIG_HOLDS, RIG_SLIPS = 0.0005, 0.002      # m


def rig_slip(grip: float, cone: str = "elliptic") -> float:
    """Slip (m) of the cube on the :data:`RIG` when each pad presses with ``grip`` newtons
    (``finger_kp`` = grip / the servo's 25 mm shortfall once the pad touches); ``cone`` replaces
    the rig's elliptic cone (chapter 09 §4 shows what the pyramidal one does)."""
    squeeze = SCRIPT["close"]["left"] - PAD_TRAVEL
    return _trial({**RIG, "cone": cone, "finger_kp": grip / squeeze}).slip


MAX_GRIP = 100.0   # N per pad: 50 × the cube's weight; Coulomb at μ = 0.5 would need a 50 g lift for it


@checker("9.2", "The minimum grip force", points=2,
         answers={"grip_min": number(0, MAX_GRIP, low_open=True, unit=" N",
                                     why="a normal force per pad, in newtons, is positive, and the 0.2 kg "
                                         "cube never needs 100 N")})
def _grip(ex: Exercise) -> None:
    grip = ex.value("grip_min")
    above, below = rig_slip(1.03 * grip, cone="pyramidal"), rig_slip(0.97 * grip, cone="pyramidal")
    # one requirement, both sides: any huge force holds the cube, any tiny one lets it slip
    holds, slips = above <= RIG_HOLDS, below > RIG_HOLDS
    if not holds:
        failure = f"with 3 % more it slipped {fmt(1e3 * above, 3)} mm: your force is too small"
        hint = ("Coulomb's 2μN ≥ m(g + a) is what the elliptic rig needs; the pyramidal one needs more "
                "(section 4): measure it with rig_slip(grip, cone='pyramidal')")
    else:
        failure = f"with 3 % less it slipped only {fmt(1e3 * below, 3)} mm: your force is more than the " \
                  "minimum"
        hint = "bisect between a grip that slips and one that holds, until the two are a few % apart"
    ex.require(holds and slips, "on the pyramidal rig, with 3 % more than grip_min per pad the cube slips at "
               f"most {_mm(RIG_HOLDS)} mm, and with 3 % less it slips more", failure=failure, hint=hint)


# -- § 5 · exercise 9.3 ----------------------------------------------------------------------------

def table_depth_for(solref: Sequence[float], seconds: float = 0.5) -> float:
    """Resting depth (m) of the cube on the table (fingers open) after ``seconds``, with
    ``solref`` on every geom, the default solimp and an elliptic cone: the mean ``-dist`` of
    its contacts."""
    resting, rest_data = build({**START, "cone": "elliptic", "solref": tuple(solref),
                                "solimp": solver.DEFAULT_SOLIMP})
    sim.run(resting, rest_data, duration=seconds)
    return float(-np.mean([c.dist for c in rest_data.contact[:rest_data.ncon]]))


# Exercise 9.3's band (m): below the 4.4 µm that 2·timestep at dampratio 1 gives, the shallowest rest a
# standard-format solref reaches at dampratio 1 while MuJoCo uses its timeconst as written
TABLE_BAND = (2e-6, 3e-6)
AT_REST = 1e-6     # m/s: a cube resting on the table moves by rounding (1e-12 m/s); a bouncing one by mm/s


def _resting(solref: Sequence[float]) -> tuple[float, float]:
    """:func:`table_depth_for` ``(solref)``, and the cube's largest speed (m/s) over the 20 steps
    after it: a cube that bounces instead of resting has no resting depth."""
    resting, rest_data = build({**START, "cone": "elliptic", "solref": tuple(solref),
                                "solimp": solver.DEFAULT_SOLIMP})
    sim.run(resting, rest_data, duration=0.5)
    depth = float(-np.mean([c.dist for c in rest_data.contact[:rest_data.ncon]] or [np.nan]))
    speed = 0.0
    for _ in range(20):
        mujoco.mj_step(resting, rest_data)
        speed = max(speed, float(np.abs(rest_data.joint("cube").qvel[:3]).max()))
    return depth, speed


@checker("9.3", "A solref for a target depth", points=2, answers={"table_solref": solref_kind()})
def _table(ex: Exercise) -> None:
    ref = np.asarray(ex.value("table_solref"), dtype=float)
    depth, speed = _resting(tuple(ref))
    low, high = TABLE_BAND
    in_band = speed <= AT_REST and low <= depth <= high
    if speed > AT_REST:
        failure = f"the cube is not at rest after 0.5 s: it still moves at {_mm(speed)} mm/s"
        hint = "a very soft contact is still sinking, and one with a dampratio far below 1 bounces"
    else:
        failure = f"it rests {fmt(1e3 * depth, 3)} mm deep"
        hint = "four corners share the weight: predict with rest_penetration(..., accel=g/4)"
    ex.require(in_band, f"the cube rests {_mm(low)}–{_mm(high)} mm deep in the table", failure=failure,
               hint=hint)
    used = solver.reference(tuple(ref), solver.DEFAULT_SOLIMP, timestep=START["timestep"])
    # any long timeconst is used as written: this counts only once the depth is right
    clamped = (f"timeconst {fmt(ref[0])} s is below 2·timestep, so MuJoCo raised it to 0.004 s"
               if used.clamped else "")
    later = "" if in_band else "counted only once the depth is right"
    ex.require(in_band and not used.clamped, "MuJoCo uses your timeconst as written",
               failure="; ".join(part for part in (clamped, later) if part),
               hint="the depth follows the stiffness 1/(dmax·timeconst·dampratio)², and MuJoCo raises only "
                    "the timeconst")


# -- § 7 · exercise 9.4, the capstone ----------------------------------------------------------------

_HINTS = {
    "stable": "§6 · under Euler a servo kv above 2·mass/timestep diverges: lower kv or use "
              "integrator='implicitfast'",
    "lift": "§3 · a position servo sags by m·g/kp and an overdamped one arrives late (chapter 03); "
            "or the cube slipped",
    "slip": "§4 · check the grip against Coulomb's minimum, then stop the creep: a larger impratio, or "
            "noslip, which reaches Coulomb's limit under the elliptic cone only (chapter 07)",
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
                   f"MuJoCo reported {', '.join(report.unstable)}: the trial's numbers mean nothing, so "
                   "nothing else is judged"),
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


@checker("9.4", "Lift the cube and hold it", points=10, answers={"answer": ANSWER})
def _capstone(ex: Exercise) -> None:
    params = ex.value("answer")
    try:
        report = _trial(params)
    except (ValueError, KeyError, TypeError) as exc:
        raise ExerciseFailed(f"the grader cannot run `answer`: {exc}") from None
    verdicts = _verdicts(report)
    lifted = verdicts["lift"][0]
    for key, statement, weight in requirements():
        passed, failure = verdicts[key]
        if key in GATES:
            ex.precondition(passed, statement, failure=failure, hint=_HINTS[key])
        elif key in AFTER_LIFT and not lifted:   # a cube left on the table meets every one of them
            ex.require(False, statement, weight=weight,
                       failure="not judged, because the cube was not lifted and held: this limit counts only "
                               "once it is")
        else:
            ex.require(passed, statement, failure=failure, hint=_HINTS[key], weight=weight)
