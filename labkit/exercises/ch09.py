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

from .. import grasp, models, sim, solver
from ..display import figure, fmt
from ..models import load
from .answers import Kind, array, choice, fields, integer, number
from .ch07 import solref_kind
from .core import Exercise, ExerciseFailed, Param, checker

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "AFTER_LIFT",
    "ANSWER",
    "CUBE_MASS",
    "GATES",
    "HOLD_BAND",
    "LIMITS",
    "LIMIT_NOTES",
    "PARAMETER_KINDS",
    "PARTS",
    "RIG",
    "RIG_HOLDS",
    "RIG_SLIPS",
    "SAG",
    "SCRIPT",
    "SERVOS",
    "SHELF",
    "START",
    "TABLE_BAND",
    "TABLE_DEPTH",
    "build",
    "lift_target",
    "limits_text",
    "panels",
    "requirements",
    "rig_slip",
    "run",
    "table_band",
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

CUBE_MASS = 0.2             # kg: the cube of models/capstone_gripper.xml (exercise 9.4, published)

# Exercise 9.4's shelf (m): the cube is held no higher than it, on average over the hold, and at
# most SAG below it throughout.  Published: the script's own 120 mm target, and the 20 mm of sag
# that the lift limit allows below it (LIMITS["min_lift"] = SHELF - SAG)
SHELF = SCRIPT["lift"]["lift"]
SAG = round(SHELF - LIMITS["min_lift"], 12)
LIFT_RANGE = (0.0, 0.2)     # m: the lift servo's ctrlrange in models/capstone_gripper.xml

MIN_TIMESTEP = 0.0005       # s: a smaller step would make the graded trial too slow
MAX_TIMESTEP = 0.01         # s: 5 × the model's 2 ms; see PARAMETER_KINDS
MAX_NOSLIP = 1000           # noslip iterations per step: more would make the graded trial too slow


def build(params: Mapping[str, Any], cube_mass: float = CUBE_MASS) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The capstone model with ``params`` applied (keys: ``grasp.PARAMETERS``, the servo groups
    of :data:`SERVOS`; a ``lift_target`` is the script's, see :func:`run`, and is ignored here),
    and a fresh MjData.  ``cube_mass`` (kg): the cube's mass (its inertia follows, as the
    compiler computes it from the geom); the file's is :data:`CUBE_MASS`.  Raises ``ValueError``
    naming a wrong entry."""
    params = {key: value for key, value in params.items() if key != "lift_target"}
    timestep = params.get("timestep", 0.002)
    if not isinstance(timestep, int | float) or isinstance(timestep, bool) or timestep < MIN_TIMESTEP:
        raise ValueError("choose a timestep of at least 0.5 ms: the graded trial would take too long")
    noslip = params.get("noslip_iterations", 0)
    if isinstance(noslip, int | float) and noslip > MAX_NOSLIP:
        raise ValueError(f"choose at most {MAX_NOSLIP} noslip_iterations: the graded trial would take "
                         "too long")
    if cube_mass == CUBE_MASS:
        model, data = load("capstone_gripper")
    else:
        if not (isinstance(cube_mass, int | float) and 0 < cube_mass < float("inf")):
            raise ValueError(f"the cube's mass is a positive number of kilograms, not {cube_mass!r}")
        edited = models.spec("capstone_gripper")
        edited.geom("cube").mass = float(cube_mass)
        model, data = load(edited)
    return grasp.configure(model, params, servos=SERVOS), data


def lift_target(params: Mapping[str, Any]) -> float:
    """The lift servo's target (m) in the trial of ``params``: its ``lift_target`` if it has one,
    else the script's 0.12 m.  Raises ``ValueError`` for one outside the lift's 0–0.2 m range."""
    target = params.get("lift_target", SCRIPT["lift"]["lift"])
    low, high = LIFT_RANGE
    if not (isinstance(target, int | float) and not isinstance(target, bool) and low <= target <= high):
        raise ValueError(f"choose a lift_target of {fmt(low)}–{fmt(high)} m (the lift's control range), "
                         f"not {target!r}")
    return float(target)


def run(params: Mapping[str, Any], cube_mass: float = CUBE_MASS) -> grasp.GraspReport:
    """Run the graded trial (:data:`SCRIPT` on :data:`PARTS`) with ``params`` on a cube of
    ``cube_mass`` kg (exercise 9.4 grades on its own mass, ``labkit.given("9.4").cube_mass``);
    returns a ``grasp.GraspReport``.  A ``lift_target`` in ``params`` (m) replaces the script's
    0.12 m (exercise 9.4 holds the cube at its own shelf, ``labkit.given("9.4").shelf``)."""
    script = {**SCRIPT, "lift": {"lift": lift_target(params)}}
    return grasp.trial(*build(params, cube_mass), **PARTS, **script)


@lru_cache(maxsize=64)
def _cached_trial(key: str, cube_mass: float = CUBE_MASS) -> grasp.GraspReport:
    return run(json.loads(key), cube_mass)


def _trial(params: Mapping[str, Any], cube_mass: float = CUBE_MASS) -> grasp.GraspReport:
    """:func:`run`, cached on the parameters as JSON data and the cube's mass: the checkers
    grade the same parameters again (the same answer, START's variants, the 9.2 rig) without
    rerunning a trial.  The report is shared: only read it."""
    return _cached_trial(json.dumps(dict(params), sort_keys=True), float(cube_mass))


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
    "lift_target": number(*LIFT_RANGE, unit=" m", why="the lift servo's control range in "
                          "models/capstone_gripper.xml is 0–0.2 m"),
})
"""Exercise 9.4's parameters (``grasp.PARAMETERS``, the servo gains of :data:`SERVOS` and the
lift's target, ``lift_target``: the script's 0.12 m when left out), each with the kind and
physical range its answer is validated with before any trial."""

ANSWER = fields(PARAMETER_KINDS)
"""The kind of exercise 9.4's ``answer``: ``START`` with changes, each within its range (an
unknown key is named with the nearest known one)."""


def _mm(x: float) -> str:
    """A length or speed in millimetres, as the feedback prints it."""
    return fmt(1e3 * x, 3)


def _floor(shelf: float, sag: float) -> float:
    """The lowest the cube may be during the hold (m): ``sag`` below the ``shelf``."""
    return round(shelf - sag, 12)


GATES = ("stable", "shelf")
"""Exercise 9.4's preconditions: required before any points count (they carry no weight).  The
shelf's holds by construction at the published numbers: a lift servo aimed at the script's
0.12 m settles below it, m·g/kp under the cube's weight."""

AFTER_LIFT = ("slip", "penetration", "peak_force", "jitter")
"""Exercise 9.4's limits that count only once the cube was lifted and held: a cube that never
moves meets them all."""


def requirements(limits: Mapping[str, float] = LIMITS, shelf: float = SHELF,
                 sag: float = SAG) -> list[tuple[str, str, float]]:
    """Exercise 9.4's requirements as ``(key, statement, weight)``, in the order they are
    checked: the simulation's stability is a precondition (weight 0, see :data:`GATES`); lift is
    the task: at least ``shelf - sag`` up throughout the hold (m; published: LIMITS' min_lift),
    and no higher than ``shelf`` on average, a precondition; slip, penetration, force and jitter
    count only once the cube was lifted and held (:data:`AFTER_LIFT`).  Lift, slip and
    penetration, which the starting point fails, count double."""
    return [
        ("stable", "the simulation stays stable", 0.0),
        ("lift", f"the cube stays at least {_mm(_floor(shelf, sag))} mm up during the hold", 2.0),
        ("shelf", f"on average over the hold the cube is at most {_mm(shelf)} mm up", 0.0),
        ("slip", f"the cube slips at most {_mm(limits['max_slip'])} mm relative to the fingers", 2.0),
        ("penetration", f"no contact overlaps more than {_mm(limits['max_penetration'])} mm", 2.0),
        ("peak_force", f"no finger presses harder than {fmt(limits['max_peak_force'])} N", 1.0),
        ("jitter", f"the cube shakes by at most {_mm(limits['max_jitter'])} mm/s RMS during the hold", 1.0),
    ]


def limits_text(shelf: float = SHELF, sag: float = SAG) -> str:
    """The limits and exercise 9.4's requirements with their weights, as a table to print;
    ``shelf`` and ``sag`` (m): the variant's numbers (default: the published ones)."""
    lines = [f"{'limit':16s} {'value':>6s} {'unit':4s}  bounds"]
    for key, value in LIMITS.items():
        unit, note = LIMIT_NOTES[key]
        lines.append(f"{key:16s} {fmt(value):>6s} {unit:4s}  {note}")
    lines += ["", "exercise 9.4 requires (weight):"]
    listed = requirements(LIMITS, shelf, sag)
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


def panels(reports: Sequence[grasp.GraspReport], labels: Sequence[str], shelf: float = SHELF,
           sag: float = SAG) -> Figure:
    """Slip, penetration and the cube's height (mm) against time (s) for several trials, one
    panel each, with the :data:`LIMITS` dashed and the ends of the close and lift phases dotted.

    reports: ``grasp.GraspReport`` s of the same script (the first one's phases are drawn);
    labels: one legend entry per report; shelf, sag (m): the height panel's limit is ``sag``
    below the ``shelf`` (exercise 9.4's own, ``labkit.given("9.4")``; published: min_lift).
    Returns a matplotlib Figure with three Axes.

    Example: ``panels([run(START)], ["start"])``.
    """
    fig, axes = figure(size=(9.6, 2.8), ncols=3)
    edges = (reports[0].phases["close"][1], reports[0].phases["lift"][1])
    drawn = {**LIMITS, "min_lift": _floor(shelf, sag)}
    for ax, (signal, limit, label) in zip(axes, _PANELS, strict=True):
        for report, name in zip(reports, labels, strict=True):
            ax.plot(report.recording.t, 1e3 * report.recording[signal], label=name)
        ax.axhline(1e3 * drawn[limit], color="k", ls="--", lw=1)
        for edge in edges:
            ax.axvline(edge, color="gray", ls=":", lw=1)
        ax.set(xlabel="time [s]", ylabel=label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    return fig


# -- § 3 · exercise 9.1 ----------------------------------------------------------------------------

HOLD_BAND = 0.005      # m: exercise 9.1's hand stays this close to its target during the hold (published)

# the variants: 0.5–2 mm, all below the published answer's sag, half the 5 mm band (2.45 mm at the
# chapter's former 800 N/m), so it never passes; 0.5 mm needs kp ≈ 8000 N/m (sag 0.25 mm), critically
# damped at kv ≈ 170 N·s/m, far below Euler's 2·m/h = 700 N·s/m for the lift's 0.7 kg
HOLD_PARAM = Param(HOLD_BAND, 0.0005, HOLD_BAND, 0.00025, unit="mm", scale=1e-3, gap=0.003,
                   label="how far the hand may be from its 0.12 m target at any time of the hold")


# the lift servo's gains: the capstone's ranges (≥ 0, kp ≤ 1e5 N/m, kv ≤ 1e4 N·s/m)
@checker("9.1", "A lift that holds its height", points=2,
         answers={"lift_kp": PARAMETER_KINDS["lift_kp"], "lift_kv": PARAMETER_KINDS["lift_kv"]},
         params={"band": HOLD_PARAM})
def _lift(ex: Exercise) -> None:
    band = ex.param("band")
    lifted = _trial({**START, "lift_kp": ex.value("lift_kp"), "lift_kv": ex.value("lift_kv")})
    ex.precondition(not lifted.unstable, "the simulation stays stable",
                    failure=f"MuJoCo reported {', '.join(lifted.unstable)}",
                    hint="under the Euler integrator a servo's kv above 2·mass/timestep diverges (section 6)")
    held = lifted.recording.t >= lifted.phases["hold"][0]
    error = SCRIPT["lift"]["lift"] - lifted.recording["hand"][held, 2]
    worst = np.abs(error).max()
    # settled (the end as far off as the worst): a sag; else it was still closing in at the start
    why = ("sagging under the cube" if abs(error[-1]) >= 0.9 * worst
           else "still on its way up when the hold began")
    ex.require(worst <= band, f"the hand stays within {HOLD_PARAM.show(band)} of its "
               f"{fmt(SCRIPT['lift']['lift'])} m target during the whole hold",
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


def rig_slip(grip: float, cone: str = "elliptic", friction: float = START["friction"]) -> float:
    """Slip (m) of the cube on the :data:`RIG` when each pad presses with ``grip`` newtons
    (``finger_kp`` = grip / the servo's 25 mm shortfall once the pad touches); ``cone`` replaces
    the rig's elliptic cone (chapter 09 §4 shows what the pyramidal one does), ``friction`` the
    sliding friction of every geom (START's 0.5; exercise 9.2 gives each student their own)."""
    squeeze = SCRIPT["close"]["left"] - PAD_TRAVEL
    return _trial({**RIG, "cone": cone, "friction": friction, "finger_kp": grip / squeeze}).slip


MAX_GRIP = 100.0   # N per pad: 50 × the cube's weight; even at the rig's least μ, 0.2, it holds 20 g

# the variants: μ = 0.2–0.9 (a slippery plastic to rubber), at least 0.1 from START's 0.5.  The
# pyramidal rig's minimum is twice Coulomb's m(g + a)/(2μ) on this whole range (measured to 1 %),
# so it scales as 1/μ: neighbours' answers differ by ≥ 11 %, beyond the ±3 % bracket.  Not μ = 1:
# its minimum, 2·m(g + a)/(2·1), is Coulomb's grip at START's μ = 0.5, §4's elliptic answer
RIG_FRICTION_PARAM = Param(START["friction"], 0.2, 0.9, 0.1,
                           label="the sliding friction of every geom of the rig")


@checker("9.2", "The minimum grip force", points=2,
         answers={"grip_min": number(0, MAX_GRIP, low_open=True, unit=" N",
                                     why="a normal force per pad, in newtons, is positive, and the 0.2 kg "
                                         "cube never needs 100 N")},
         params={"friction": RIG_FRICTION_PARAM})
def _grip(ex: Exercise) -> None:
    grip, friction = ex.value("grip_min"), ex.param("friction")
    above = rig_slip(1.03 * grip, cone="pyramidal", friction=friction)
    below = rig_slip(0.97 * grip, cone="pyramidal", friction=friction)
    # one requirement, both sides: any huge force holds the cube, any tiny one lets it slip
    holds, slips = above <= RIG_HOLDS, below > RIG_HOLDS
    if not holds:
        failure = f"with 3 % more it slipped {fmt(1e3 * above, 3)} mm: your force is too small"
        hint = ("Coulomb's 2μN ≥ m(g + a) is what the elliptic rig needs; the pyramidal one needs more "
                f"(section 4): measure it with rig_slip(grip, cone='pyramidal', "
                f"friction={fmt(friction)})")
    else:
        failure = f"with 3 % less it slipped only {fmt(1e3 * below, 3)} mm: your force is more than the " \
                  "minimum"
        hint = "bisect between a grip that slips and one that holds, until the two are a few % apart"
    ex.require(holds and slips, f"on the pyramidal rig at friction {fmt(friction)}, with 3 % more than "
               f"grip_min per pad the cube slips at most {_mm(RIG_HOLDS)} mm, and with 3 % less it slips "
               "more", failure=failure, hint=hint)


# -- § 5 · exercise 9.3 ----------------------------------------------------------------------------

def table_depth_for(solref: Sequence[float], seconds: float = 0.5) -> float:
    """Resting depth (m) of the cube on the table (fingers open) after ``seconds``, with
    ``solref`` on every geom, the default solimp and an elliptic cone: the mean ``-dist`` of
    its contacts."""
    resting, rest_data = build({**START, "cone": "elliptic", "solref": tuple(solref),
                                "solimp": solver.DEFAULT_SOLIMP})
    sim.run(resting, rest_data, duration=seconds)
    return float(-np.mean([c.dist for c in rest_data.contact[:rest_data.ncon]]))


# Exercise 9.3's target depth (m) and its band, ± TABLE_SPREAD of it: the band lies below the 4.4 µm
# that 2·timestep at dampratio 1 gives, the shallowest rest a standard-format solref reaches at
# dampratio 1 while MuJoCo uses its timeconst as written.  ± 20 %: the depth follows
# (timeconst·dampratio)², so the band asks for that product within ± 10 %
TABLE_DEPTH, TABLE_SPREAD = 2.5e-6, 0.2
TABLE_BAND = (2e-6, 3e-6)          # the published band, TABLE_DEPTH ± 20 %
AT_REST = 1e-6     # m/s: a cube resting on the table moves by rounding (1e-12 m/s); a bouncing one by mm/s

# the variants: 1.5–1.8 µm and 3.2–3.5 µm, whose bands all miss the published answer's 2.5 µm.
# The deepest band ends at 4.2 µm, still below dampratio 1's 4.37 µm floor, so every variant needs
# a dampratio below 1 (the lesson).  Below about 0.5 the stiff contact no longer comes to rest
# within the 0.5 s at this step (1.5 µm at 5 ms and 0.47 bounces), which bounds the shallow side:
# at 1.5 µm, timeconst·dampratio = 2.34 ms is still reached at rest from 4 to 4.7 ms
TABLE_PARAM = Param(TABLE_DEPTH, 1.5e-6, 3.5e-6, 0.1e-6, unit="µm", scale=1e-6, gap=0.65e-6,
                    label="the depth the cube should rest at, ± 20 %")


def table_band(depth: float = TABLE_DEPTH) -> tuple[float, float]:
    """Exercise 9.3's band (m) around the target ``depth`` (m): ± 20 %."""
    return depth * (1 - TABLE_SPREAD), depth * (1 + TABLE_SPREAD)


@lru_cache(maxsize=64)
def _resting(solref: tuple[float, ...]) -> tuple[float, float]:
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


def _um(x: float) -> str:
    """A depth in micrometres, as exercise 9.3's feedback prints it."""
    return fmt(1e6 * x, 3)


@checker("9.3", "A solref for a target depth", points=2, answers={"table_solref": solref_kind()},
         params={"depth": TABLE_PARAM})
def _table(ex: Exercise) -> None:
    ref = np.asarray(ex.value("table_solref"), dtype=float)
    depth, speed = _resting(tuple(float(x) for x in ref))
    low, high = table_band(ex.param("depth"))
    in_band = speed <= AT_REST and low <= depth <= high
    if speed > AT_REST:
        failure = f"the cube is not at rest after 0.5 s: it still moves at {_mm(speed)} mm/s"
        hint = "a very soft contact is still sinking, and one with a dampratio far below 1 bounces"
    else:
        failure = f"it rests {_um(depth)} µm deep"
        hint = "four corners share the weight: predict with rest_penetration(..., accel=g/4)"
    ex.require(in_band, f"the cube rests {_um(low)}–{_um(high)} µm deep in the table", failure=failure,
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
            "or the cube slipped out of the fingers (§4)",
    "slip": "§4 · check the grip against Coulomb's minimum, then stop the creep: a larger impratio, or "
            "noslip, which reaches Coulomb's limit under the elliptic cone only (chapter 07)",
    "penetration": "§5 · an impact overshoots by v·τ/e and a squeeze follows chapter 05's rest rule: shorter "
                   "timeconst, higher dmin/dmax, a better damped approach",
    "peak_force": "§1 · the grip is finger_kp × 25 mm; a fast, stiff impact adds a spike on top "
                  "(chapters 03 and 05)",
    "jitter": "§6 · an undamped finger servo rings at √(2kp/(2m_f + m_c))/2π: give the fingers kv "
              "(chapter 04)",
}


def _hints(params: Mapping[str, Any], cube_mass: float, shelf: float) -> dict[str, str]:
    """:data:`_HINTS`, with Coulomb's minimum grip for this cube, this answer's friction and its
    lift where the lift or the grip failed (the cube's weight is the variant's), and where the
    lift should aim when the cube was held above the ``shelf`` or did not reach it."""
    friction = params.get("friction", START["friction"])
    mu = float(np.ravel(friction)[0])
    target = lift_target(params)
    needed = cube_mass * (9.81 + 6 * target / SCRIPT["lift_ramp"] ** 2)   # N: m(g + a), a = 6h/T²
    coulomb = (f"; your {fmt(cube_mass)} kg cube needs 2μN ≥ m(g + a) = {fmt(needed, 3)} N: at your "
               f"μ = {fmt(mu)}, N ≥ {fmt(needed / (2 * mu), 3)} N per pad, and no finger may press "
               f"harder than {fmt(LIMITS['max_peak_force'])} N")
    aim = (f"; your lift aims at {_mm(target)} mm and your shelf is at {_mm(shelf)} mm: set "
           "`lift_target` in `answer`" if target != shelf else "")
    return {**_HINTS, "lift": _HINTS["lift"] + coulomb + aim, "slip": _HINTS["slip"] + coulomb,
            "shelf": "§3 · a servo settles m·g/kp below its target: aim the lift no higher than the "
                     f"shelf{aim}"}


def _verdicts(report: grasp.GraspReport, shelf: float = SHELF,
              sag: float = SAG) -> dict[str, tuple[bool, str]]:
    """Whether ``report`` meets each limit, and the failure message if it does not (the lift's
    limit and the shelf are exercise 9.4's numbers, see :func:`requirements`)."""
    lim = {**LIMITS, "min_lift": _floor(shelf, sag)}
    held = report.recording["height"][report.recording.t >= report.phases["hold"][0] - 1e-9]
    mean = float(held.mean())
    return {
        "stable": (not report.unstable,
                   f"MuJoCo reported {', '.join(report.unstable)}: the trial's numbers mean nothing, so "
                   "nothing else is judged"),
        "lift": (report.lift >= lim["min_lift"],
                 f"at its lowest it was {_mm(report.lift)} mm up, "
                 f"{_mm(lim['min_lift'] - report.lift)} mm short of the {_mm(lim['min_lift'])} mm limit"),
        "shelf": (mean <= shelf,
                  f"on average it was {_mm(mean)} mm up, {_mm(mean - shelf)} mm above the "
                  f"{_mm(shelf)} mm shelf"),
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


# the variants: cubes of 1.4–2.4 kg (a dense metal part), at least 1.2 kg above the model's 0.2 kg.
# The published answer (6 N per pad at μ = 1, Coulomb's capacity 2μN = 12 N) holds any cube up to
# 1.1 kg, so lighter variants would accept it; from 1.2 kg it drops the cube and scores 0.  Every
# variant stays solvable within the 15 N force limit: Coulomb asks 2μN ≥ m(g + 6h/T²), 26 N for
# 2.4 kg at the highest shelf (the chapter's answer: μ = 2 and 1.5 × that, 9.9 N per pad, peak
# 10.7 N), and the lift's sag m·g/kp is what the shelf below asks for
MASS_PARAM = Param(CUBE_MASS, CUBE_MASS, 2.4, 0.1, unit="kg", gap=1.2, label="the mass of the cube to lift")

# The mass alone is one-sided: an answer made for a heavier cube also lifts a lighter one (a
# classmate's answer earned full marks on 113 of the 121 ordered pairs of masses).  The shelf
# makes the task two-sided: the cube is held between shelf - sag and the shelf, so an answer
# aimed at another shelf fails, above or below.  Shelves of 40–200 mm (the lift's ctrlrange
# ends at 200 mm), 10 mm apart, with a sag of 4–8 mm (the published 20 mm would let neighbours
# accept each other): two neighbouring windows lie 2 mm or more apart, and the chapter's answer
# (its lift sagging a quarter of the allowance, m·g/kp = sag/4) misses a neighbour's window by
# at least 2.9 mm on any cube of the grid, measured.  The 4 mm window leaves that answer's 1 mm
# sag room for the 0.45 mm it slips at most; its kp = 4·m·g/sag is 2.4e4 N/m for 2.4 kg at
# 4 mm, critically damped at 540 N·s/m, below Euler's 2·m/h = 700 N·s/m for the 0.7 kg hand
# (it passes every one of the 880 variants, 1.2 mm under the shelf at the closest).  The
# published 120 mm and 20 mm are the script's target and the sag its lift limit allows: there
# "at most the shelf" holds by itself, as a servo settles below its target
SHELF_PARAM = Param(SHELF, 0.04, LIFT_RANGE[1], 0.01, unit="mm", scale=1e-3,
                    label="the shelf: the cube is held no higher than this, on average over the hold")
SAG_PARAM = Param(SAG, 0.004, SAG, 0.001, unit="mm", scale=1e-3, gap=0.012,
                  label="how far below the shelf the cube may hang at any time of the hold")


@checker("9.4", "Lift the cube and hold it", points=10, answers={"answer": ANSWER},
         params={"cube_mass": MASS_PARAM, "shelf": SHELF_PARAM, "sag": SAG_PARAM})
def _capstone(ex: Exercise) -> None:
    params = ex.value("answer")
    mass, shelf, sag = ex.param("cube_mass"), ex.param("shelf"), ex.param("sag")
    try:
        report = _trial(params, mass)
    except (ValueError, KeyError, TypeError) as exc:
        raise ExerciseFailed(f"the grader cannot run `answer`: {exc}") from None
    verdicts, hints = _verdicts(report, shelf, sag), _hints(params, mass, shelf)
    lifted = verdicts["lift"][0]
    for key, statement, weight in requirements(shelf=shelf, sag=sag):
        passed, failure = verdicts[key]
        if key in GATES:
            ex.precondition(passed, statement, failure=failure, hint=hints[key])
        elif key in AFTER_LIFT and not lifted:   # a cube left on the table meets every one of them
            ex.require(False, statement, weight=weight,
                       failure="not judged, because the cube was not lifted and held: this limit counts only "
                               "once it is")
        else:
            ex.require(passed, statement, failure=failure, hint=hints[key], weight=weight)
