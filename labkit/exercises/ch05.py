"""Checkers of chapter 05 (solver parameters), and the experiments and model they share with
the chapter's lessons: :func:`settle` (the sphere of ``models/solver_sphere.xml`` released
touching the floor), :func:`rest_block` (the block of ``models/solver_box.xml``) and
:data:`TWO_LINK_ARM` (section 7's arm with a forearm, pushed into its shoulder limit).

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
from ..solver import DEFAULT_SOLIMP, MAXIMP, MINIMP, impedance, reference, rest_penetration
from .answers import NUMBER, array, number
from .core import Exercise, Param, checker

__all__ = ["FLAT_SOLIMP", "SETTLE_SOLIMP", "TWO_LINK_ARM", "rest_block", "settle"]

FLAT_SOLIMP = (0.9, 0.9, 0.001, 0.5, 2.0)
"""A constant impedance d = 0.9: the contact of section 3 is a plain damped oscillator."""

BLOCK_TIMESTEP = 0.002  # s: solver_box's own step, at which Exercise 5.1 is graded
BLOCK_DEPTH = 20e-6     # m: Exercise 5.1's published resting depth (±5 %)
PREDICT_SOLREF = (0.01, 1.0)                    # Exercise 5.2's published block: solref,
PREDICT_SOLIMP = (0.95, 0.99, 0.002, 0.5, 2.0)  # solimp,
PREDICT_TIMESTEP = 0.001                        # timestep (s),
PREDICT_CONE, PREDICT_FRICTION = "pyramidal", 0.5   # and a pyramidal cone with sliding friction 0.5
STOP_TORQUE, STOP_DEPTH = 2.0, 0.05   # N·m pushing the arm of Exercise 5.4, rad past its limit (published)
STOP_SOLIMP = (0.5, 0.95, 0.1, 0.5, 2.0)   # Exercise 5.4's solimplimit: 0.05 rad is its midpoint, d = 0.725

# the variants (the published numbers are the defaults).  5.1: 5-40 µm, which a constant impedance
# d = 0.9 and ζ = 1 reach with an unclamped timeconst (4.5-12.8 ms at the 2 ms step) without a bounce;
# a 5 µm step is more than twice the ±5 % band even at 40 µm, so no two variants accept one answer.
# 5.2: μ 0.2-0.9 (at μ = 1 a pyramid shares the load as the elliptic cone does, which is one of the
# mistakes) and timeconst 6-20 ms (unclamped at 1 ms); both change the depth by far more than the 1 %
# tolerance.  5.3 and 5.4: see their own parameters below.
BLOCK_DEPTH_PARAM = Param(BLOCK_DEPTH, 5e-6, 40e-6, 5e-6, unit="µm", scale=1e-6,
                          label="the depth the block rests at, ± 5 %")
PREDICT_FRICTION_PARAM = Param(PREDICT_FRICTION, 0.2, 0.9, 0.1,
                               label="the sliding friction of both geoms, on a pyramidal cone")
PREDICT_TIMECONST_PARAM = Param(PREDICT_SOLREF[0], 0.006, 0.02, 0.002, unit="ms", scale=1e-3,
                                label="the timeconst of solref = (timeconst, 1)")

TWO_LINK_ARM = """<mujoco model="two-link arm">
  <!-- solver_limit's arm (1 kg, 0.3 m, a vertical hinge limited at 90 degrees, no gravity) with a
       forearm on a free elbow: the limit row's inverse inertia is then no longer 1/M[0, 0] -->
  <option timestep="0.002" gravity="0 0 0"/>
  <compiler angle="degree"/>
  <worldbody>
    <body name="arm">
      <joint name="hinge" type="hinge" axis="0 0 1" range="0 90"/>  <!-- default solreflimit/solimplimit -->
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
      <body name="forearm" pos="0.3 0 0">
        <!-- unlimited and unactuated; its damping lets the forearm come to rest -->
        <joint name="elbow" type="hinge" axis="0 0 1" damping="0.5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="push" joint="hinge"/>  <!-- ctrl is the shoulder torque, N m -->
  </actuator>
  <keyframe>
    <key name="at_limit" qpos="1.5707963267948966 0"/>  <!-- the shoulder at its 90 degree limit, at rest -->
  </keyframe>
</mujoco>"""
"""Section 7's two-link arm (and Exercise 5.4's): a motor pushes the shoulder into its limit while
the forearm swings freely on a damped elbow."""

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
               seconds: float = 1.0, *, cone: str = "elliptic", friction: float = 1.0) -> Recording:
    """Set the 2 kg block of ``solver_box`` down touching the floor, at rest, with ``solref``
    and ``solimp`` on both geoms, the given timestep (s), friction ``cone`` ("elliptic", the
    model's, or "pyramidal") and sliding ``friction`` on both geoms; returns the recording of
    ``"depth"`` (m, positive inside the floor) and ``"vz"`` (vertical velocity, m/s), each of
    shape (T,)."""
    import mujoco

    m, d = load("solver_box")
    m.opt.timestep = timestep
    m.opt.cone = getattr(mujoco.mjtCone, "mjCONE_" + cone.upper())
    m.geom_solref[:], m.geom_solimp[:] = solref, solimp
    m.geom_friction[:, 0] = friction
    d.qpos[2] = 0.05 - 1e-9                             # touching, at rest
    return record(m, d, {"depth": lambda m, d: 0.05 - d.qpos[2], "vz": lambda m, d: d.qvel[2]},
                  duration=seconds)


@lru_cache(maxsize=64)
def _rest_block(solref: tuple[float, float], solimp: tuple[float, ...], timestep: float = BLOCK_TIMESTEP,
                cone: str = "elliptic", friction: float = 1.0) -> Recording:
    """:func:`rest_block` for 1 s, cached (the fuzz tests re-grade the same values; read only)."""
    return rest_block(solref, solimp, timestep=timestep, cone=cone, friction=friction)


@lru_cache(maxsize=64)
def _settle(solref: tuple[float, float]) -> Recording:
    """:func:`settle` with :data:`SETTLE_SOLIMP` for :data:`SETTLE_SECONDS`, cached (read only)."""
    return settle(solref, SETTLE_SOLIMP, seconds=SETTLE_SECONDS)


@checker("5.1", "A block that rests at a given depth on its four corners", points=3,
         answers={"block_solref": SOLREF, "block_solimp": SOLIMP}, params={"depth": BLOCK_DEPTH_PARAM})
def _barely_sinks(ex: Exercise) -> None:
    depth = ex.param("depth")
    asked = BLOCK_DEPTH_PARAM.show(depth)
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
    at_depth = abs(final - depth) <= 0.05 * depth
    failure = f"it rests {fmt(1e6 * final)} µm deep"
    # the same parameters on one contact carrying the whole weight (a sphere: section 4's presets)
    if abs(rest_penetration(solref, solimp, timestep=BLOCK_TIMESTEP) / depth - 1) <= 0.05:
        failure += (f"; {asked} is where these parameters rest a sphere, one contact carrying the whole "
                    "weight: the block stands on four")
    ex.require(at_depth, f"the block rests {asked} (±5 %) deep", failure=failure,
               hint="how much of the weight does each corner row carry, and with which inverse mass "
                    "does the engine size it (section 4)?")
    # "no bounce" alone is met by any soft, overdamped contact: it counts for the asked depth only
    over = rec["depth"].max() / final - 1
    ex.require(at_depth and over <= 0.01,
               "no bounce: the depth never overshoots its final value by more than 1 %",
               failure=(f"it overshoots by {fmt(100 * over)} %" if over > 0.01 else
                        f"it does not bounce, but it does not rest {asked} deep (above): this counts "
                        "at the asked depth"),
               hint="dampratio ≥ 1 (positive solref) or damping ≥ 2·√stiffness (negative solref)")


def _predicted_depth(friction: float = PREDICT_FRICTION, timeconst: float = PREDICT_SOLREF[0]) -> float:
    """Exercise 5.2's resting depth (m) by the rest equation: four corners, each a condim-3 pyramid."""
    return rest_penetration((timeconst, PREDICT_SOLREF[1]), PREDICT_SOLIMP, timestep=PREDICT_TIMESTEP,
                            accel=9.81 / 4 * _pyramid_share(friction))


def _predict_apart(values: dict[str, float]) -> bool:
    """A variant of 5.2 whose depth lies at least 5 % from the published one (5 times the tolerance):
    friction and timeconst can offset each other."""
    return abs(_predicted_depth(values["friction"], values["timeconst"]) / _predicted_depth() - 1) >= 0.05


@checker("5.2", "Predict the resting depth of a block on four pyramidal contacts", points=2,
         answers={"block_depth": NUMBER},
         params={"friction": PREDICT_FRICTION_PARAM, "timeconst": PREDICT_TIMECONST_PARAM},
         valid=_predict_apart)
def _predict_depth(ex: Exercise) -> None:
    friction, timeconst = ex.param("friction"), ex.param("timeconst")
    measured = _rest_block((timeconst, PREDICT_SOLREF[1]), PREDICT_SOLIMP, timestep=PREDICT_TIMESTEP,
                           cone=PREDICT_CONE, friction=friction)["depth"][-1]
    ex.close("block_depth", measured, rtol=0.01, unit="m",
             hint="two lessons meet here: how the block's weight is shared among its corner rows "
                  "(section 4), and how a pyramidal contact shares its normal load among its edges "
                  "(section 9)",
             mistakes=_depth_mistakes(friction, timeconst))


def _pyramid_share(mu: float = PREDICT_FRICTION) -> float:
    """A condim-3 pyramidal contact's factor on |a0| in the rest equation: μ²(1 + μ²)/2 (impratio 1)."""
    return mu**2 * (1 + mu**2) / 2


@lru_cache(maxsize=64)
def _depth_mistakes(friction: float = PREDICT_FRICTION, tau: float = PREDICT_SOLREF[0]) -> dict[float, str]:
    """Exercise 5.2's typical wrong depths (m) and their explanations, for sliding friction
    ``friction`` and timeconst ``tau`` (s) (the same for every answer)."""
    dmax, g = PREDICT_SOLIMP[1], 9.81

    def rest(accel: float) -> float:
        return rest_penetration((tau, PREDICT_SOLREF[1]), PREDICT_SOLIMP, timestep=PREDICT_TIMESTEP,
                                accel=accel)

    share = _pyramid_share(friction)
    return {rest(g): "that is the depth of a single frictionless contact carrying the whole weight "
            "(a sphere)",
            rest(g / 4): f"that is the block on four elliptic contacts: a pyramidal contact with "
            f"μ = {fmt(friction)} shares its load differently",
            rest(g * share): "that is a single pyramidal contact carrying the whole weight: "
            "there are four corners",
            g / 4 * share * (1 - dmax) * tau**2: "that is the constant-impedance formula: at this "
            "depth d(r) is still below dmax, so use the full rest equation"}


SETTLE_DEPTH = 0.001   # m: both contacts of Exercise 5.3 must rest this deep (±5 %; published)
SETTLE_SECONDS = 1.0   # s: long enough for a 0.1 s time constant to die out (e^-10)
SETTLE_SOLIMP = DEFAULT_SOLIMP
"""Exercise 5.3's impedance, MuJoCo's default: it rises from 0.9 to 0.95 over the first 1 mm, so the
transient is not section 3's linear oscillator and its overshoot has to be measured."""

# 0.4-1.8 mm: inside and beyond the impedance's 1 mm width (d from 0.916 to dmax = 0.95); at every depth
# a dampratio in 0.45-1.25 overshoots 20-30 % and another does not overshoot, and the critical contact
# reaches 90 % within 0.14 s; a 0.2 mm step is more than twice the ±5 % band even at 1.8 mm
SETTLE_DEPTH_PARAM = Param(SETTLE_DEPTH, 0.0004, 0.0018, 0.0002, unit="mm", scale=1e-3,
                           label="the depth both contacts rest at, ± 5 %")


@checker("5.3", "No overshoot and a 25 % overshoot, both at a given depth", points=3,
         answers={"solref_critical": SOLREF, "solref_bouncy": SOLREF}, params={"depth": SETTLE_DEPTH_PARAM})
def _critical_or_bouncy(ex: Exercise) -> None:
    target = ex.param("depth")
    asked = SETTLE_DEPTH_PARAM.show(target)
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
    deep = {name: abs(depth - target) <= 0.05 * target
            for name, depth in (("solref_critical", crit[-1]), ("solref_bouncy", bouncy[-1]))}
    # the critical contact's transient is judged at the asked depth: "at most 1 % overshoot" alone is
    # met by any overdamped contact, "90 % within 0.2 s" by any stiff one
    elsewhere = f"its transient counts at the asked depth, and it does not rest {asked} deep (below)"
    ex.require(deep["solref_critical"] and crit_over <= 0.01, "solref_critical overshoots by at most 1 %",
               failure=(f"it overshoots {fmt(100 * crit_over)} %" if crit_over > 0.01 else
                        off if not crit[-1] > 0 else elsewhere),
               hint="with this solimp the impedance rises along the transient, so dampratio 1 is not "
                    "the edge of overshoot it is for a flat impedance: measure with settle(solref, solimp)")
    reach = runs["solref_critical"].crossings("depth", 0.9 * crit[-1])
    fast = crit[-1] > 0 and len(reach) > 0 and reach[0] <= 0.2
    ex.require(deep["solref_critical"] and fast, "solref_critical reaches 90 % of its depth within 0.2 s",
               failure=(f"it gets there after {fmt(reach[0], unit='s')}" if len(reach) > 0 and not fast
                        else "it never gets there" if not fast else elsewhere),
               hint="an over-damped contact creeps in slowly: a critically damped one needs about "
                    "3.9 timeconst to reach 90 %")
    ex.require(0.2 <= bounce_over <= 0.3, "solref_bouncy overshoots by 20-30 %",
               failure=f"it overshoots {fmt(100 * bounce_over)} %" if bouncy[-1] > 0 else off,
               hint="exp(-π·ζ/√(1-ζ²)) is the overshoot of a constant impedance; this one is not: "
                    "keep timeconst·dampratio and measure the overshoot with settle(solref, solimp)")
    for name, depth in (("solref_critical", crit[-1]), ("solref_bouncy", bouncy[-1])):
        ex.require(deep[name], f"{name} rests {asked} (±5 %) deep",
                   failure=f"it rests {fmt(1e3 * depth)} mm deep",
                   hint="which impedance does the row have at the resting depth (the solimp width)? "
                        "The depth fixes the product timeconst·dampratio, the overshoot fixes dampratio")


# 5.4: stop depths 0.02-0.08 rad, all inside solimplimit's 0.1 rad width (d from 0.54 to 0.91), where
# assuming d = dmax is a mistake (beyond the width it would be right), and torques of 1-3 N·m; the arm
# comes to rest at every pair within 3 s.  A 0.01 rad step is more than twice the ±5 % band at 0.08 rad.
STOP_DEPTH_PARAM = Param(STOP_DEPTH, 0.02, 0.08, 0.01, unit="rad", label="how far past its limit the "
                         "shoulder rests, ± 5 %")
STOP_TORQUE_PARAM = Param(STOP_TORQUE, 1.0, 3.0, 0.5, unit="N·m", label="the motor's torque at the shoulder")


@lru_cache(maxsize=1)
def _shoulder_invweight() -> float:
    """dof_invweight0 of :data:`TWO_LINK_ARM`'s shoulder (rad/s² per N·m): the limit row's a0 per torque."""
    return float(load(TWO_LINK_ARM)[0].dof_invweight0[0])


def _stop_apart(values: dict[str, float]) -> bool:
    """A variant of 5.4 in which the published limit_solref rests at least 10 % from the asked depth
    (twice the tolerance): a larger torque and a deeper stop can offset each other."""
    impedance_at = float(impedance(STOP_SOLIMP, STOP_DEPTH))
    published = impedance_at / STOP_SOLIMP[1] * np.sqrt(STOP_DEPTH / ((1 - impedance_at) * STOP_TORQUE
                                                                      * _shoulder_invweight()))
    rests = rest_penetration((published, 1.0), STOP_SOLIMP, timestep=0.002,
                             accel=values["torque"] * _shoulder_invweight())
    return abs(rests / values["depth"] - 1) >= 0.1


@lru_cache(maxsize=64)
def _stop(solref: tuple[float, float], torque: float = STOP_TORQUE) -> np.ndarray:
    """How far (rad) the shoulder of :data:`TWO_LINK_ARM` is past its limit over the last 0.5 s of
    3 s pushed by ``torque`` (N·m), with ``jnt_solref = solref`` and :data:`STOP_SOLIMP`
    (cached, read only)."""
    stop, stop_data = load(TWO_LINK_ARM, keyframe="at_limit")
    stop.jnt_solref[0], stop.jnt_solimp[0] = solref, STOP_SOLIMP
    rec = record(stop, stop_data, {"hinge": stop_data.joint("hinge").qpos}, duration=3.0, ctrl=[torque])
    beyond = np.ravel(rec["hinge"])[rec.t >= rec.t[-1] - 0.5] - stop.jnt_range[0, 1]
    beyond.setflags(write=False)
    return beyond


@lru_cache(maxsize=64)
def _stop_mistakes(torque: float = STOP_TORQUE, depth: float = STOP_DEPTH) -> dict[str, float]:
    """Exercise 5.4's typical wrong timeconsts (s, at dampratio 1), by the mistake behind each, for
    a motor torque ``torque`` (N·m) and a stop ``depth`` (rad)."""
    import mujoco

    arm, arm_data = load(TWO_LINK_ARM, keyframe="at_limit")
    mujoco.mj_forward(arm, arm_data)
    dmax, d = STOP_SOLIMP[1], float(impedance(STOP_SOLIMP, depth))
    a_inertia = torque / arm_data.M[0]                  # τ/M[0, 0]: as if the forearm were welded on
    a_engine = torque * arm.dof_invweight0[0]
    # the rest equation K·d²·δ = (1 - d)·a0 with K = 1/(dmax·τ)²: τ = (d/dmax)·√(δ/((1 - d)·a0))
    return {"M[0, 0]": d / dmax * np.sqrt(depth / ((1 - d) * a_inertia)),
            "dmax": np.sqrt(depth / ((1 - dmax) * a_engine))}


@checker("5.4", "Soften a joint limit to a given stop depth", points=2, answers={"limit_solref": SOLREF},
         params={"depth": STOP_DEPTH_PARAM, "torque": STOP_TORQUE_PARAM}, valid=_stop_apart)
def _soft_stop(ex: Exercise) -> None:
    # at rest: every sample of the last 0.5 s in the band, so a swing that passes through it does not count
    depth, torque = ex.param("depth"), ex.param("torque")
    asked = STOP_DEPTH_PARAM.show(depth)
    solref = tuple(ex.value("limit_solref"))
    ex.precondition(solref[0] > 0 and solref[1] > 0,
                    "`limit_solref` uses the positive (timeconst, dampratio) format",
                    failure=f"got {fmt(solref)}", hint="both numbers positive")
    beyond = _stop(solref, torque)
    if not np.all(np.isfinite(beyond)):
        failure = "the simulation does not stay finite"
    elif np.ptp(beyond) <= 0.01 * max(depth, abs(beyond[-1])):
        failure = f"it rests {fmt(beyond[-1])} rad past it"
    else:
        failure = (f"it has not settled: in the last 0.5 s it moves between {fmt(beyond.min())} and "
                   f"{fmt(beyond.max())} rad past it")
    wrong = _stop_mistakes(torque, depth)
    timeconst = solref[0] * solref[1]                  # K depends on timeconst·dampratio only
    if abs(timeconst / wrong["M[0, 0]"] - 1) < 0.01:
        failure += ("; your timeconst treats the shoulder's inverse inertia as 1/M[0, 0], as if the forearm "
                    "were welded on")
    elif abs(timeconst / wrong["dmax"] - 1) < 0.01:
        failure += f"; your timeconst assumes d = dmax, but {asked} lies inside solimplimit's width"
    ex.require(bool(np.all(np.abs(beyond - depth) <= 0.05 * depth)),
               f"the arm rests {asked} (±5 %) past its limit", failure=failure,
               hint="the limit row's a0 is the shoulder's acceleration per torque with the forearm free, and "
                    f"{asked} is not beyond the width of this solimplimit (sections 4 and 7)")
