"""Checkers of chapter 08 (kinematic drive) on ``models/hand.xml``, and the constants and
measurements the chapter shares with them: the requested pose :data:`PINCH`, the fist goal
:data:`CLOSE`, the relaxed start :data:`RELAXED`, :func:`arrival_times` and
:func:`finger_gaps`.  The checkers read nothing but the learner's answers.

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

__all__ = ["CLOSE", "FORWARD", "PINCH", "RELAXED", "arrival_times", "finger_gaps", "glove_targets",
           "projected_close", "reversed_channels"]

CLOSE = MappingProxyType({"index_mcp": 1.5, "index_pip": 1.6, "middle_mcp": 1.5, "middle_pip": 1.6,
                          "thumb_mcp": 1.4})
"""The fist: every flexion leader at its upper limit (rad); mimic joints follow."""

PINCH = MappingProxyType({"lift": 0.02, "index_mcp": 0.9, "index_dip": 0.64, "middle_mcp": 0.6,
                          "middle_pip": 1.2, "thumb_yaw": -0.2, "thumb_ip": 0.7})
"""Exercise 8.1's pose (rad, m for the lift): the joints a planner asks for, two of them mimics
(``index_dip`` = 0.8·``index_pip``, ``thumb_ip`` = ``thumb_mcp``)."""

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


@checker("8.1", "Glove commands for a requested pose", points=2, answers={"glove": GLOVE})
def _glove(ex: Exercise) -> None:
    glove = np.asarray(ex.value("glove"), dtype=float)
    got = glove_targets(glove)
    wrong = [n for n, want in PINCH.items() if not np.isclose(got[n], want, rtol=0, atol=1e-6)]
    ex.require(not wrong, "the driver maps `glove` to the requested pose",
               failure="wrong for: " + ", ".join(f"{n} ({fmt(got[n])}, not {fmt(PINCH[n])})" for n in wrong),
               hint="flexion channels run backwards (255 = open); a mimic joint has no channel: command its "
                    "leader, at (mimic's target)/ratio")


RELAXED = MappingProxyType({"index_mcp": 0.3, "index_pip": 0.4, "middle_mcp": 0.5, "middle_pip": 0.2,
                            "thumb_mcp": 0.6})
"""Exercise 8.2's starting pose (rad): a relaxed, half-open hand; the close goes to :data:`CLOSE`."""

SYNC_WINDOW = (0.85, 0.95)   # s: when every flexion leader of Exercise 8.2 must arrive


def arrival_times(slew: float | Mapping[str, float], start: Mapping[str, float] = RELAXED,
                  goal: Mapping[str, float] = CLOSE, limit: float = 4.0) -> dict[str, float]:
    """Seconds after the goal jumps from ``start`` to ``goal`` at which each joint named in
    ``goal`` first reaches it, for the hand's driver without projection and slew rates ``slew``
    (rad/s: one number for every hinge, or {joint: rate}; joints a mapping leaves out are not
    limited); a joint still short of its goal after ``limit`` seconds is reported as ``limit``."""
    model, data = load("hand")
    driver = kinematic.Driver(model, data, slew=slew, project=False)
    driver.reset(start)
    driver.set_goal(goal)
    arrived: dict[str, float] = {}
    for step in range(1, round(limit / driver.dt) + 1):
        driver.step()
        applied = driver.applied
        for name in goal:
            if name not in arrived and applied[name] == driver.goal[name]:
                arrived[name] = step * driver.dt
        if len(arrived) == len(goal):
            break
    return {name: arrived.get(name, limit) for name in goal}


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
    times = arrival_times(slew)
    early = [n for n, t in times.items() if not SYNC_WINDOW[0] <= t <= SYNC_WINDOW[1]]
    ex.require(not early, "every flexion leader arrives 0.85–0.95 s after the goal jumps",
               failure="; ".join(f"{n} after {fmt(times[n], unit='s')}" for n in early),
               hint="each joint moves at its own capped rate: it needs (its distance to go)/(its rate)")


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
    :func:`finger_gaps` (m, shape (3,)) and the most evaluations one step cost."""
    model, data = load("hand")
    tuned = kinematic.Driver(model, data, tolerance=float(tolerance), iterations=int(iterations))
    tuned.set_goal(CLOSE)
    runs = tuned.run(steps)
    return (max(r.penetration for r in runs), finger_gaps(model, data), max(r.evaluations for r in runs))


@lru_cache(maxsize=64)
def _graded_close(tolerance: float, iterations: int) -> tuple[float, np.ndarray, int]:
    """:func:`projected_close`, cached: the same answer is graded again without a rerun."""
    worst, gaps, most = projected_close(tolerance, iterations)
    gaps.flags.writeable = False        # shared between gradings: nobody may edit it
    return worst, gaps, most


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
    worst, gaps, most = _graded_close(ex.value("tolerance"), ex.value("iterations"))
    # the lesson: fingers that stop *at* the rod.  A zero tolerance keeps any penetration out
    # and zero iterations keep any step cheap: those two limits count only once the fingers touch
    touching = bool(np.all(np.abs(gaps) <= 1.5e-4))
    ex.require(touching, "every finger ends within 0.15 mm of the rod",
               failure=f"distances {fmt(gaps * 1000)} mm",
               hint="too few halvings stop a finger short of contact")
    later = "" if touching else "counted only once every finger ends within 0.15 mm of the rod"
    ex.require(touching and worst <= 1e-4, "penetration never exceeds 0.1 mm",
               failure=_joined(f"it reached {fmt(worst * 1000)} mm" if worst > 1e-4 else "", later),
               hint="the tolerance is the depth the fingers rest at")
    ex.require(touching and most <= 40, "no step costs more than 40 evaluations",
               failure=_joined(f"the worst step cost {most}" if most > 40 else "", later),
               hint="a blocked joint costs 1 + iterations trials; five can be blocked at once")
