"""Checkers of chapter 05 (solver parameters), and the two experiments they share with the
chapter's lessons: :func:`settle` (the sphere of ``models/solver_sphere.xml`` released
touching the floor) and :func:`rest_block` (the block of ``models/solver_box.xml``).

Every exercise is graded by simulating the learner's parameters in a freshly loaded
course model, so many answers pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..display import fmt
from ..models import load
from ..recording import Recording, record
from ..solver import MAXIMP, MINIMP, reference, rest_penetration
from .answers import NUMBER, array, number
from .core import Exercise, checker

__all__ = ["FLAT_SOLIMP", "rest_block", "settle"]

FLAT_SOLIMP = (0.9, 0.9, 0.001, 0.5, 2.0)
"""A constant impedance d = 0.9: the contact of section 3 is a plain damped oscillator."""

BLOCK_TIMESTEP = 0.002  # s: solver_box's own step, at which Exercise 5.1 is graded
DEPTH_LIMIT = 20e-6     # m: Exercise 5.1's largest resting depth
PREDICT_SOLREF = (0.01, 1.0)                    # Exercise 5.2's block: solref,
PREDICT_SOLIMP = (0.95, 0.99, 0.002, 0.5, 2.0)  # solimp
PREDICT_TIMESTEP = 0.001                        # and timestep (s)
STOP_TORQUE, STOP_DEPTH = 2.0, 0.05   # N·m pushing the arm of Exercise 5.4, rad past its limit wanted

# solref: (timeconst ≤ 1 s, dampratio ≤ 100), or the direct format (−stiffness ≥ −1e7, −damping ≥ −1e5).
# A timeconst beyond 1 s is softer than any surface (the sphere or block sinks g·τ², metres, before
# it holds; the runs here last 1-3 s); a direct stiffness of 1e7 1/s² is a time constant of 0.3 ms,
# under every step here, and 2·√1e7 ≈ 6e3 the damping that goes with it.  The answers lie near
# (0.004-0.13 s, 0.4-1); the typical mistakes (a clamped 1 ms timeconst, a direct-format solref of
# (-2500, -100), dampratio 0.01 or 5) stay inside to be told so.
SOLREF = array(items=[number(-1e7, 1, why="solref[0] is a timeconst of at most 1 s, or a direct-format "
                                            "stiffness of at most 1e7"),
                      number(-1e5, 100, why="solref[1] is a dampratio of at most 100, or a direct-format "
                                              "damping of at most 1e5")])
# solimp: (dmin, dmax, width, midpoint, power).  Impedances and the midpoint are fractions, which
# MuJoCo clips to [0.0001, 0.9999]: values within [−1, 2] pass, to be told they are clamped; the
# width is a depth in m, within ±1 m for a 10 cm block; MuJoCo raises a power below 1 to 1, and
# beyond 100 the curve is a step.
_FRACTION = number(-1, 2, why="an impedance or midpoint is a fraction, which MuJoCo keeps in "
                               "[0.0001, 0.9999]")
SOLIMP = array(items=[_FRACTION, _FRACTION,
                      number(-1, 1, unit=" m", why="the width is a penetration depth, far below 1 m here"),
                      _FRACTION,
                      number(-100, 100, why="a power below 1 counts as 1, and beyond 100 the curve is "
                                            "a step")])


def settle(solref: Sequence[float], solimp: Sequence[float] = FLAT_SOLIMP, seconds: float = 0.25,
           timestep: float = 0.0005) -> Recording:
    """Release the sphere of ``solver_sphere`` (1 kg, r = 5 cm, frictionless) 1 nm deep and at
    rest, with ``solref`` (2 numbers) and ``solimp`` (5) on both geoms and the given timestep
    (s); returns the recording of ``"depth"``, its penetration (m, positive inside the floor;
    shape (T,)), over ``seconds``."""
    model, data = load("solver_sphere")
    model.opt.timestep = timestep
    model.geom_solref[:], model.geom_solimp[:] = solref, solimp
    data.qpos[2] = 0.05 - 1e-9
    return record(model, data, {"depth": lambda m, d: 0.05 - d.qpos[2]}, duration=seconds)


def rest_block(solref: Sequence[float], solimp: Sequence[float], timestep: float = BLOCK_TIMESTEP,
               seconds: float = 1.0) -> Recording:
    """Set the 2 kg block of ``solver_box`` down touching the floor, at rest, with ``solref``
    and ``solimp`` on both geoms and the given timestep (s); returns the recording of
    ``"depth"`` (m, positive inside the floor) and ``"vz"`` (vertical velocity, m/s), each of
    shape (T,)."""
    m, d = load("solver_box")
    m.opt.timestep = timestep
    m.geom_solref[:], m.geom_solimp[:] = solref, solimp
    d.qpos[2] = 0.05 - 1e-9                             # touching, at rest
    return record(m, d, {"depth": lambda m, d: 0.05 - d.qpos[2], "vz": lambda m, d: d.qvel[2]},
                  duration=seconds)


@lru_cache(maxsize=64)
def _rest_block(solref: tuple[float, float], solimp: tuple[float, ...], timestep: float = BLOCK_TIMESTEP
                ) -> Recording:
    """:func:`rest_block` for 1 s, cached (the fuzz tests re-grade the same values; read only)."""
    return rest_block(solref, solimp, timestep=timestep)


@lru_cache(maxsize=64)
def _settle(solref: tuple[float, float]) -> Recording:
    """:func:`settle` with the flat impedance for :data:`SETTLE_SECONDS`, cached (read only)."""
    return settle(solref, seconds=SETTLE_SECONDS)


@checker("5.1", "Rest with at most 20 µm penetration", points=3,
         answers={"block_solref": SOLREF, "block_solimp": SOLIMP})
def _barely_sinks(ex: Exercise) -> None:
    solref, solimp = tuple(ex.value("block_solref")), tuple(ex.value("block_solimp"))
    # "the value you write must be the one MuJoCo uses": gates, as MuJoCo's own defaults meet them
    mixed_signs = (solref[0] > 0) != (solref[1] > 0)
    ref = reference(solref, solimp, timestep=BLOCK_TIMESTEP)
    ex.precondition(not (mixed_signs or ref.clamped),
                    "block_solref's timeconst is at least 2·timestep (not clamped)",
                    failure=("a solref mixing signs (or holding a 0) is replaced by the default (0.02, 1)"
                             if mixed_signs else f"timeconst {fmt(ref.requested_timeconst)} s is silently "
                             f"raised to {fmt(ref.timeconst)} s"),
                    hint="MuJoCo replaces timeconst < 2·timestep by 2·timestep (section 5)")
    dmin, dmax, width, midpoint, power = solimp
    as_written = (min(dmin, dmax, midpoint) >= MINIMP and max(dmin, dmax, midpoint) <= MAXIMP
                  and width > 0 and power >= 1)
    ex.precondition(as_written, "MuJoCo uses block_solimp as written (not clamped)",
                    failure=f"solimp {fmt(solimp)} is clamped: MuJoCo keeps dmin, dmax and midpoint in "
                            f"[{fmt(MINIMP)}, {fmt(MAXIMP)}], a positive width and a power of at least 1",
                    hint="an impedance beyond 0.9999 does not exist: MuJoCo clips it before using it")
    rec = _rest_block(solref, solimp)
    final = rec["depth"][-1]
    resting = bool(np.isfinite(final) and final > 0 and abs(rec["vz"][-1]) < 1e-4)
    # at rest is the gate of the measurements: MuJoCo's default contact rests too
    ex.precondition(resting, "after 1 s the block is at rest on the floor",
                    failure=f"its depth is {fmt(1e6 * final)} µm and it moves at {fmt(rec['vz'][-1])} m/s",
                    hint="a very stiff, lightly damped contact can throw the block off or never settle")
    shallow = final <= DEPTH_LIMIT
    ex.require(shallow, "the block rests at most 20 µm deep",
               failure=f"it rests {fmt(1e6 * final)} µm deep",
               hint="depth ≈ (1-d)·(g/4)·timeconst²·dampratio²·(dmax/d)²: shrink timeconst "
                    "(down to 2·timestep) or raise d")
    # "no bounce" alone is met by any soft, overdamped contact: it counts for the shallow rest only
    over = rec["depth"].max() / final - 1
    ex.require(shallow and over <= 0.01,
               "no bounce: the depth never overshoots its final value by more than 1 %",
               failure=(f"it overshoots by {fmt(100 * over)} %" if over > 0.01 else
                        "it does not bounce, but it rests too deep (above): this counts for a shallow rest"),
               hint="dampratio ≥ 1 (positive solref) or damping ≥ 2·√stiffness (negative solref)")


@checker("5.2", "Predict the resting depth of a block on four contacts", points=2,
         answers={"block_depth": NUMBER})
def _predict_depth(ex: Exercise) -> None:
    measured = _rest_block(PREDICT_SOLREF, PREDICT_SOLIMP, timestep=PREDICT_TIMESTEP)["depth"][-1]
    ex.close("block_depth", measured, rtol=0.01, unit="m",
             hint="each corner row is sized with the block's inverse mass 1/m but carries only a quarter "
                  "of the weight",
             mistakes=_depth_mistakes())


@lru_cache(maxsize=1)
def _depth_mistakes() -> dict[float, str]:
    """Exercise 5.2's typical wrong depths (m) and their explanations (the same for every answer)."""
    dmax, tau = PREDICT_SOLIMP[1], PREDICT_SOLREF[0]
    return {rest_penetration(PREDICT_SOLREF, PREDICT_SOLIMP, timestep=PREDICT_TIMESTEP):
            "that is the depth of a single contact carrying the whole weight (a sphere): "
            "there are four corners",
            9.81 * (1 - dmax) * tau**2: "that is the constant-impedance formula for one contact; "
            "here d(r) varies and four contacts share the weight",
            9.81 / 4 * (1 - dmax) * tau**2: "the quarter load is right, but at this depth d(r) is "
            "still below dmax: use the full rest equation"}


SETTLE_DEPTH = 0.001   # m: both contacts of Exercise 5.3 must rest this deep (±5 %)
SETTLE_SECONDS = 1.0   # s: long enough for a 0.1 s time constant to die out (e^-10)


@checker("5.3", "A critically damped and an under-damped contact, 1 mm deep", points=3,
         answers={"solref_critical": SOLREF, "solref_bouncy": SOLREF})
def _critical_or_bouncy(ex: Exercise) -> None:
    solrefs = {name: tuple(ex.value(name)) for name in ("solref_critical", "solref_bouncy")}
    for name, solref in solrefs.items():
        ex.precondition(solref[0] > 0 and solref[1] > 0,
                        f"`{name}` uses the positive (timeconst, dampratio) format",
                        failure=f"got {fmt(solref)}", hint="both numbers positive")
    runs = {name: _settle(solref) for name, solref in solrefs.items()}
    crit, bouncy = runs["solref_critical"]["depth"], runs["solref_bouncy"]["depth"]
    # an overshoot is measured against a final depth inside the floor (a sphere thrown off has none)
    crit_over = crit.max() / crit[-1] - 1 if crit[-1] > 0 else float("nan")
    bounce_over = bouncy.max() / bouncy[-1] - 1 if bouncy[-1] > 0 else float("nan")
    off = "the sphere does not rest on the floor"
    deep = {name: abs(depth - SETTLE_DEPTH) <= 0.05 * SETTLE_DEPTH
            for name, depth in (("solref_critical", crit[-1]), ("solref_bouncy", bouncy[-1]))}
    # the critical contact's transient is judged at the asked depth: "at most 1 % overshoot" alone is
    # met by any overdamped contact, "90 % within 0.2 s" by any stiff one
    elsewhere = "its transient counts at the asked depth, and it does not rest 1 mm deep (below)"
    ex.require(deep["solref_critical"] and crit_over <= 0.01, "solref_critical overshoots by at most 1 %",
               failure=(f"it overshoots {fmt(100 * crit_over)} %" if crit_over > 0.01 else
                        off if not crit[-1] > 0 else elsewhere),
               hint="dampratio 1 is critical damping")
    reach = runs["solref_critical"].crossings("depth", 0.9 * crit[-1])
    fast = crit[-1] > 0 and len(reach) > 0 and reach[0] <= 0.2
    ex.require(deep["solref_critical"] and fast, "solref_critical reaches 90 % of its depth within 0.2 s",
               failure=(f"it gets there after {fmt(reach[0], unit='s')}" if len(reach) > 0 and not fast
                        else "it never gets there" if not fast else elsewhere),
               hint="an over-damped contact creeps in slowly: a critically damped one needs about "
                    "3.9 timeconst to reach 90 %")
    ex.require(0.2 <= bounce_over <= 0.3, "solref_bouncy overshoots by 20-30 %",
               failure=f"it overshoots {fmt(100 * bounce_over)} %" if bouncy[-1] > 0 else off,
               hint="the overshoot depends on dampratio alone: exp(-π·ζ/√(1-ζ²)) for ζ < 1")
    for name, depth in (("solref_critical", crit[-1]), ("solref_bouncy", bouncy[-1])):
        ex.require(deep[name], f"{name} rests 1 mm (±5 %) deep",
                   failure=f"it rests {fmt(1e3 * depth)} mm deep",
                   hint="with a constant impedance d the resting depth is (1-d)·g·(timeconst·dampratio)²: "
                        "the depth fixes the product timeconst·dampratio, the overshoot fixes dampratio")


@lru_cache(maxsize=64)
def _stop(solref: tuple[float, float]) -> np.ndarray:
    """How far (rad) the arm of ``solver_limit`` is past its limit over the last 0.5 s of 3 s
    pushed by :data:`STOP_TORQUE` with ``jnt_solref = solref`` (cached, read only)."""
    stop, stop_data = load("solver_limit", keyframe="at_limit")
    stop.jnt_solref[0] = solref
    rec = record(stop, stop_data, {"hinge": stop_data.joint("hinge").qpos}, duration=3.0, ctrl=[STOP_TORQUE])
    beyond = np.ravel(rec["hinge"])[rec.t >= rec.t[-1] - 0.5] - stop.jnt_range[0, 1]
    beyond.setflags(write=False)
    return beyond


@checker("5.4", "Soften a joint limit to a given stop depth", points=2, answers={"limit_solref": SOLREF})
def _soft_stop(ex: Exercise) -> None:
    # at rest: every sample of the last 0.5 s in the band, so a swing that passes through it does not count
    beyond = _stop(tuple(ex.value("limit_solref")))
    if not np.all(np.isfinite(beyond)):
        failure = "the simulation does not stay finite"
    elif np.ptp(beyond) <= 0.01 * max(STOP_DEPTH, abs(beyond[-1])):
        failure = f"it rests {fmt(beyond[-1])} rad past it"
    else:
        failure = (f"it has not settled: in the last 0.5 s it moves between {fmt(beyond.min())} and "
                   f"{fmt(beyond.max())} rad past it")
    ex.require(bool(np.all(np.abs(beyond - STOP_DEPTH) <= 0.05 * STOP_DEPTH)),
               "the arm rests 0.05 rad (±5 %) past its limit", failure=failure,
               hint="the limit row's a0 is the motor's angular acceleration τ/I = τ·dof_invweight0, not g")
