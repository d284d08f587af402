"""Checkers of chapter 08 (kinematic drive) on ``models/hand.xml``, and the constants and
measurements the chapter shares with them: the requested pose :data:`PINCH` with its fingertip
point :data:`INDEX_TIP`, the fist goal :data:`CLOSE`, the relaxed start :data:`RELAXED`,
:func:`fingertips`, :func:`close_run` (with :func:`arrival_times` and :func:`tip_speeds`),
:func:`finger_gaps` and :func:`projected_close`.  The checkers read nothing but the learner's
answers.

Units: hinge joints in rad (rates rad/s), the lift slide in m; distances in m.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import mujoco
import numpy as np

from .. import kinematic
from ..display import fmt
from ..models import load
from .answers import AnswerError, Kind, array, integer, mapping, number
from .core import Exercise, checker

__all__ = ["CLOSE", "FORWARD", "INDEX_TIP", "PINCH", "RELAXED", "TIPS", "TIP_SPEED", "arrival_times",
           "close_run", "finger_gaps", "fingertips", "glove_targets", "projected_close", "reversed_channels",
           "tip_speeds"]

CLOSE = MappingProxyType({"index_mcp": 1.5, "index_pip": 1.6, "middle_mcp": 1.5, "middle_pip": 1.6,
                          "thumb_mcp": 1.4})
"""The fist: every flexion leader at its upper limit (rad); mimic joints follow."""

PINCH = MappingProxyType({"lift": 0.02, "index_mcp": 0.9, "middle_mcp": 0.6, "middle_dip": 0.96,
                          "thumb_yaw": -0.2, "thumb_ip": 0.7})
"""Exercise 8.1's pose (rad, m for the lift): the joints a planner asks for, two of them mimics
(``middle_dip`` = 0.8·``middle_pip``, ``thumb_ip`` = ``thumb_mcp``).  The index finger's middle
joint is not given: the planner asks for its fingertip at :data:`INDEX_TIP` instead."""

INDEX_TIP = (0.0489, 0.012, 0.1065)
"""Exercise 8.1's point (m, world frame) for the index fingertip (:func:`fingertips`), with the
rest of :data:`PINCH`: reached at ``index_pip`` ≈ 0.83 rad, a value only MuJoCo's kinematics tells."""

TIP_TOLERANCE = 5e-4   # m: about 0.01 rad of index_pip at the fingertip, under 2 glove counts; the
# point is given to 0.1 mm

FORWARD = ("lift", "thumb_yaw")
"""The channels that run forwards (0 = bottom of the range); every flexion is reversed (255 = open)."""


def reversed_channels(active: Sequence[str]) -> list[bool]:
    """For each channel named in ``active``: True if it runs backwards (a flexion)."""
    return [name not in FORWARD for name in active]


def glove_targets(commands: Sequence[float]) -> dict[str, float]:
    """The joint targets (rad, m for the lift) the hand's driver maps ``commands`` (0–255, one per
    channel in ``Driver.active`` order, flexions reversed) to: one per driven joint, mimic joints
    included."""
    model, data = load("hand")
    driver = kinematic.Driver(model, data)
    return driver.command(list(commands), reverse=reversed_channels(driver.active))


# the glove's own range: the driver clamps anything outside 0–255, so such a command hides a mistake
GLOVE = array(length=7, each=number(0, 255, why="every command must be within 0–255 (the driver clamps the "
                                    "rest); a pose inside the joint ranges needs nothing else"))


def glove_fingertip(targets: Mapping[str, float]) -> np.ndarray:
    """The index fingertip's world position (m) with the hand written at ``targets`` (rad, m)."""
    model, data = load("hand")
    kinematic.Driver(model, data).reset(dict(targets))
    return fingertips(model, data)[0]


@checker("8.1", "Glove commands for a requested pose", points=2, answers={"glove": GLOVE})
def _glove(ex: Exercise) -> None:
    glove = np.asarray(ex.value("glove"), dtype=float)
    got = glove_targets(glove)
    wrong = [n for n, want in PINCH.items() if not np.isclose(got[n], want, rtol=0, atol=1e-6)]
    ex.require(not wrong, "the driver maps `glove` to the requested joints",
               failure="wrong for: " + ", ".join(f"{n} ({fmt(got[n])}, not {fmt(PINCH[n])})" for n in wrong),
               hint="flexion channels run backwards (255 = open); a mimic joint has no channel: command its "
                    "leader, at (mimic's target)/ratio")
    miss = float(np.linalg.norm(glove_fingertip(got) - INDEX_TIP))
    ex.require(miss <= TIP_TOLERANCE, "the index fingertip is at INDEX_TIP",
               failure=f"it is {fmt(miss * 1000, 3)} mm away",
               hint="the point fixes index_pip, and no formula on the page gives it: write candidate "
                    "poses and measure where the fingertip lands (fingertips(model, data)[0])")


RELAXED = MappingProxyType({"index_mcp": 0.3, "index_pip": 0.4, "middle_mcp": 0.5, "middle_pip": 0.2,
                            "thumb_mcp": 0.6})
"""Exercise 8.2's starting pose (rad): a relaxed, half-open hand; the close goes to :data:`CLOSE`."""

TIPS = MappingProxyType({"index": ("index_dist", (0.02, 0.0, 0.0)),
                         "middle": ("middle_dist", (0.022, 0.0, 0.0)),
                         "thumb": ("thumb_dist", (-0.028, 0.0, 0.0))})
"""Each fingertip: the distal body, and the far end of its collision capsule's axis in that body's
frame (m), as ``models/hand.xml`` writes the capsule's ``fromto``."""

TIP_SPEED = (0.27, 0.30)   # m/s: exercise 8.2's band for the fastest fingertip (a limit, and close to it)
SYNC_STEPS = 2             # exercise 8.2: every flexion leader arrives within this many steps of the first


def fingertips(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """World positions (m) of the three fingertips of :data:`TIPS` (index, middle, thumb), from
    ``data.xpos``/``data.xmat`` as the last ``mj_kinematics`` left them.  Shape (3, 3).

    Example: ``fingertips(*labkit.load("hand"))[0]`` → the index fingertip of the open hand.
    """
    out = []
    for body, point in TIPS.values():
        b = model.body(body).id
        out.append(data.xpos[b] + data.xmat[b].reshape(3, 3) @ np.asarray(point))
    return np.array(out)


def close_run(slew: float | Mapping[str, float], start: Mapping[str, float] = RELAXED,
              goal: Mapping[str, float] = CLOSE, limit: float = 4.0) -> tuple[dict[str, float], np.ndarray]:
    """Drive the hand's driver without projection from ``start`` towards ``goal`` (rad) with slew
    rates ``slew`` (rad/s: one number for every hinge, or {joint: rate}; joints a mapping leaves out
    are not limited).  Returns the seconds after the goal jumps at which each joint named in ``goal``
    first reaches it (``limit`` if it is still short after ``limit`` seconds), and the peak speed (m/s)
    of each fingertip (:func:`fingertips`: index, middle, thumb; shape (3,)), the largest distance it
    moves in one step divided by the step."""
    model, data = load("hand")
    driver = kinematic.Driver(model, data, slew=slew, project=False)
    driver.reset(start)
    driver.set_goal(goal)
    arrived: dict[str, float] = {}
    tips, peak = fingertips(model, data), np.zeros(len(TIPS))
    for step in range(1, round(limit / driver.dt) + 1):
        driver.step()
        now = fingertips(model, data)
        peak = np.maximum(peak, np.linalg.norm(now - tips, axis=1) / driver.dt)
        tips, applied = now, driver.applied
        for name in goal:
            if name not in arrived and applied[name] == driver.goal[name]:
                arrived[name] = step * driver.dt
        if len(arrived) == len(goal):
            break
    return {name: arrived.get(name, limit) for name in goal}, peak


def arrival_times(slew: float | Mapping[str, float], start: Mapping[str, float] = RELAXED,
                  goal: Mapping[str, float] = CLOSE, limit: float = 4.0) -> dict[str, float]:
    """Seconds after the goal jumps from ``start`` to ``goal`` at which each joint named in
    ``goal`` first reaches it, for the hand's driver without projection and slew rates ``slew``
    (see :func:`close_run`); a joint still short of its goal after ``limit`` seconds is reported
    as ``limit``."""
    return close_run(slew, start, goal, limit)[0]


def tip_speeds(slew: float | Mapping[str, float], start: Mapping[str, float] = RELAXED,
               goal: Mapping[str, float] = CLOSE) -> dict[str, float]:
    """Peak speed (m/s) of each fingertip (index, middle, thumb) while the driver without
    projection closes from ``start`` to ``goal`` with slew rates ``slew`` (see :func:`close_run`):
    exercise 8.2's measurement.

    Example: ``max(tip_speeds(5.0).values())`` → m/s of the fastest fingertip at 5 rad/s.
    """
    return dict(zip(TIPS, close_run(slew, start, goal)[1].tolist(), strict=True))


MAX_SLEW = 1000.0   # rad/s: a joint crosses its whole range (≤ 1.6 rad) within one 2 ms step at this rate


def _slew(value: Any) -> dict[str, float]:
    """Exercise 8.2's answer as data: {flexion leader: rate}, one positive rate (rad/s, at most
    :data:`MAX_SLEW`) for each leader of :data:`CLOSE` (AnswerError otherwise)."""
    rate = number(0, MAX_SLEW, low_open=True, unit=" rad/s",
                  why="a slew rate is a speed in rad/s and must be positive; above 1000 rad/s it limits "
                      "nothing (a joint crosses its range in one step)")
    slew = mapping(rate).convert(value)
    if set(slew) != set(CLOSE):
        raise AnswerError(f"the answer names {sorted(slew)}: give one rate (rad/s) for each flexion leader, "
                          f"{sorted(CLOSE)} (mimic joints follow their leaders)")
    return slew


@checker("8.2", "Slew rates for a synchronized close", points=2,
         answers={"gentle_slew": Kind("a dict of slew rates", _slew)})
def _synchronized(ex: Exercise) -> None:
    slew = ex.value("gentle_slew")
    times, peak = close_run(slew)
    first, dt = min(times.values()), load("hand")[0].opt.timestep
    late = [n for n, t in times.items() if t > first + SYNC_STEPS * dt * (1 + 1e-9)]
    fastest = float(peak.max())
    fast_enough = TIP_SPEED[0] <= fastest <= TIP_SPEED[1]
    # one requirement: rates that synchronize the joints alone (any close time will do) are the
    # distance/rate formula; the fingertip speed is what has to be measured
    ex.require(not late and fast_enough,
               f"every flexion leader arrives together, and the fastest fingertip moves at "
               f"{TIP_SPEED[0]:g}–{TIP_SPEED[1]:g} m/s",
               failure="; ".join(([f"{n} arrives {fmt(times[n] - first, unit='s')} after the first"
                                   for n in late])
                                 + ([] if fast_enough else [f"the fastest fingertip peaks at "
                                                            f"{fmt(fastest, 3, 'm/s')}"])),
               hint="each joint covers its own distance at its own rate; with every rate scaled by one "
                    "factor the fingertips follow the same path, and their speed scales with that factor",
               weight=2)


FINGERS = ("index", "middle", "thumb")


def finger_gaps(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """Distance (m) from each finger (index, middle, thumb: the nearest of the geoms whose name
    starts with the finger's name) to the rod, as ``mj_geomDistance`` measures it (negative:
    overlap; 0.05 when farther than 5 cm).  Shape (3,)."""
    rod, out = model.geom("rod").id, []
    for finger in FINGERS:
        geoms = [g for g in range(model.ngeom) if model.geom(g).name.startswith(finger)]
        out.append(min(mujoco.mj_geomDistance(model, data, g, rod, 0.05, np.zeros(6)) for g in geoms))
    return np.array(out)


MAX_ITERATIONS = 64
MAX_TOLERANCE = 0.01   # m: a hundred times the 0.1 mm limit; a finger resting that deep is inside the rod


def projected_close(tolerance: float, iterations: int, steps: int = 300) -> tuple[float, np.ndarray, int]:
    """Close the hand on the rod at 5 rad/s for ``steps`` steps with projection (``tolerance``
    m, ``iterations`` halvings); return the worst penetration of any step (m), the final
    :func:`finger_gaps` (m, shape (3,)) and the most evaluations one step cost.  Runs are cached:
    exercise 8.3's grader reuses the closes a notebook has already run.

    Example: ``worst, gaps, most = projected_close(5e-4, 12)`` → the G20 notes' projection.
    """
    worst, gaps, most = _graded_close(float(tolerance), int(iterations), int(steps))
    return worst, gaps.copy(), most


@lru_cache(maxsize=128)
def _graded_close(tolerance: float, iterations: int, steps: int = 300) -> tuple[float, np.ndarray, int]:
    """The close of :func:`projected_close`, cached; its gaps are read-only (shared between calls)."""
    model, data = load("hand")
    tuned = kinematic.Driver(model, data, tolerance=tolerance, iterations=iterations)
    tuned.set_goal(CLOSE)
    runs = tuned.run(steps)
    gaps = finger_gaps(model, data)
    gaps.flags.writeable = False        # shared between gradings: nobody may edit it
    return max(r.penetration for r in runs), gaps, max(r.evaluations for r in runs)


GAP = 2e-5            # m: exercise 8.3's band, |distance to the rod| for every finger at the end
DEPTH = 5e-5          # m: exercise 8.3's limit on the penetration of any step


def _meets(tolerance: float, iterations: int) -> tuple[bool, bool]:
    """Exercise 8.3's two requirements for one pair: every finger ends within GAP of the rod, and
    no step penetrates deeper than DEPTH."""
    worst, gaps, _ = projected_close(tolerance, iterations)
    return bool(np.all(np.abs(gaps) <= GAP)), worst <= DEPTH


def _joined(*parts: str) -> str:
    """The non-empty ``parts``, as one failure message."""
    return "; ".join(part for part in parts if part)


@checker("8.3", "Tolerance and iterations for a projection budget", points=3,
         answers={"tolerance": number(0, MAX_TOLERANCE, unit=" m",
                                      why="it is a penetration depth in metres, ≥ 0, and far below a "
                                          "finger's thickness"),
                  "iterations": integer(0, MAX_ITERATIONS,
                                        why=f"choose a whole number from 0 to {MAX_ITERATIONS} (a blocked "
                                            "joint costs 1 + iterations trials per step)")})
def _projection(ex: Exercise) -> None:
    tolerance, iterations = ex.value("tolerance"), ex.value("iterations")
    worst, gaps, _ = projected_close(tolerance, iterations)
    touching, shallow = _meets(tolerance, iterations)
    # the lesson: fingers that stop *at* the rod.  A zero tolerance keeps any penetration out:
    # the other two requirements count only once the fingers touch
    ex.require(touching, f"every finger ends within {GAP * 1000:g} mm of the rod",
               failure=f"distances {fmt(gaps * 1000)} mm",
               hint="too few halvings stop a finger short of contact; the tolerance is the depth the "
                    "fingers rest at")
    later = "" if touching else f"counted only once every finger ends within {GAP * 1000:g} mm of the rod"
    ex.require(touching and shallow, f"penetration never exceeds {DEPTH * 1000:g} mm",
               failure=_joined(f"it reached {fmt(worst * 1000)} mm" if worst > DEPTH else "", later),
               hint="the tolerance is the depth the fingers rest at")
    # every halving costs one trial per blocked joint and step: the cheapest pair that works is
    # the fewest iterations at the chosen tolerance, which only the close itself can tell
    fewer = next((n for n in range(iterations) if all(_meets(tolerance, n))), None) \
        if touching and shallow else None
    ex.require(touching and shallow and fewer is None,
               "no smaller `iterations` meets both at your tolerance",
               failure=_joined(f"iterations = {fewer} already does, at fewer evaluations per step"
                               if fewer is not None else "", "" if touching and shallow else
                               "counted only once the other two requirements hold"),
               hint="the resolution bound of §6 is a worst case; close the hand with fewer halvings "
                    "and measure the distances")
