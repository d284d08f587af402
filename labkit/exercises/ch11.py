"""Checkers of chapter 11 (auditing a real robot), and the experiments they share with the
chapter's lessons.  Every model comes from the real-model corpus (:mod:`labkit.corpus`):

- :func:`humanoid`, :func:`overlaps`, :func:`rest_speed`: dm_control's CMU humanoid walker, its
  root hung from a free joint, a slide joint or (as the file has it) welded to the world, the
  body pairs that overlap at the start pose, and how fast its joints move at rest
  (section 3, Exercise 11.1 in the :data:`CROSS_LEGGED` pose, its lower back twisted by
  :func:`cross_legged`).
- :func:`pendulum`, :func:`limit_row`, :func:`fall`: gymnasium's inverted pendulum with another
  timestep or joint-limit time constant, the limit's row in ``efc_KBIP``, and how far the pole
  passes its limit when it falls (section 5, Exercise 11.2).
- :func:`standing`, :func:`clamped_rows`: dm_control's suite humanoid standing on the floor (its
  floor's time constant may be another), and the constraint rows whose time constant MuJoCo
  raised (section 5, Exercise 11.3).

The checkers read nothing but the learner's answers and the variant's numbers, and judge them
in MuJoCo: they apply the excludes and count the overlaps left, or compare ``efc_KBIP`` with and
without ``refsafe``.
Units: metres, seconds, radians.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import corpus
from ..auditing.checks import OVERLAP
from ..display import fmt
from ..models import load, spec
from .answers import AnswerError, Kind, number
from .core import Exercise, Param, checker

if TYPE_CHECKING:
    import mujoco

__all__ = ["ARM", "BODY_PAIRS", "CROSS_LEGGED", "FALL_FROM", "HALF_STEP", "HUMANOID", "OVERLAP",
           "PENDULUM", "STANDING", "clamped_rows", "cross_legged", "fall", "fall_angles", "humanoid",
           "joint_speeds", "limit_row", "overlaps", "pendulum", "rest_speed", "standing"]

HUMANOID = "dm_control/walkers/humanoid_CMU_V2020"
"""The CMU humanoid walker of dm_control: 31 bodies, no free joint in the file."""

ARM = "dm_control/kinova/jaco_arm"
"""The Kinova Jaco arm of dm_control: six hinges, its base welded to the world."""

PENDULUM = "gymnasium/inverted_pendulum"
"""gymnasium's InvertedPendulum: a cart on a rail and a pole on a hinge, timestep 0.02 s."""

STANDING = "dm_control/suite/humanoid"
"""dm_control's suite humanoid: its body geoms ask for solref 0.015 s, its floor for 0.02 s."""

CROSS_LEGGED = {"lfemurrx": -1.6, "rfemurrx": -1.6, "ltibiarx": 1.6, "rtibiarx": 1.6,
                "lfemurrz": -0.6, "rfemurrz": 0.6}
"""Exercise 11.1's pose of :data:`HUMANOID` (rad, by joint): thighs raised, knees bent, the
shins crossed through each other, every angle inside its joint's range."""

HALF_STEP = 0.01
"""s: Exercise 11.2's published new step: half the file's 0.02 s timestep."""

FILE_STEP = 0.02
"""s: the timestep of :data:`PENDULUM`'s file."""

FILE_TIMECONST = 0.02
"""s: the ``solreflimit`` time constant of :data:`PENDULUM`'s joints (MuJoCo's default)."""

FEET_TIMECONST = 0.015
"""s: the solref time constant of :data:`STANDING`'s body geoms, its feet among them (solmix 1)."""

FLOOR_TIMECONST = 0.02
"""s: the solref time constant of :data:`STANDING`'s floor (solmix 1)."""

FALL_FROM = 0.1
"""rad: where the pole starts its fall onto the hinge limit (:func:`fall`)."""

ROOTS = ("free", "jointed", "world")
"""How :func:`humanoid` hangs the root: a free joint, a slide joint, or welded to the world."""


# -- section 3: the humanoid's start overlaps (Exercise 11.1) --------------------------------------

def humanoid(root: str = "world", *, pose: Mapping[str, float] | None = None,
             exclude: Sequence[Sequence[str]] = (), filterparent: bool = True
             ) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """:data:`HUMANOID` with its root hung as ``root`` (one of :data:`ROOTS`: ``"free"`` adds a
    free joint, ``"jointed"`` a vertical slide joint, ``"world"`` leaves it welded to the world
    as the file does), ``pose`` (joint name → angle, rad) written into qpos, an ``<exclude>``
    for each ``(body1, body2)`` of ``exclude``, and the parent filter on or off; ``mj_forward``
    has run, so ``data.contact`` holds the start pose's contacts."""
    import mujoco

    if root not in ROOTS:
        raise ValueError(f"root is one of {ROOTS}, not {root!r}")
    edited = spec(corpus.path(HUMANOID))
    body = edited.body("root")
    if root == "free":
        body.add_freejoint()
    elif root == "jointed":
        body.add_joint(type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 0, 1],
                       limited=mujoco.mjtLimited.mjLIMITED_FALSE)
    for body1, body2 in exclude:
        edited.add_exclude(bodyname1=body1, bodyname2=body2)
    if not filterparent:
        edited.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
    model, data = load(edited)
    for joint, angle in (pose or {}).items():
        data.joint(joint).qpos[0] = angle
    mujoco.mj_forward(model, data)
    return model, data


def overlaps(model: mujoco.MjModel, data: mujoco.MjData, depth: float = OVERLAP
             ) -> dict[tuple[str, str], float]:
    """The body pairs (names, sorted) whose geoms overlap by more than ``depth`` (m) in
    ``data.contact``, each with its deepest penetration (m); contacts MuJoCo marks excluded
    (``contact.exclude`` ≠ 0: in the gap, or with no dof between them) are left out."""
    deepest: dict[tuple[str, str], float] = {}
    for contact in data.contact[:data.ncon]:
        if contact.exclude or -contact.dist <= depth:
            continue
        b1, b2 = (model.body(int(model.geom_bodyid[g])).name for g in contact.geom)
        pair = (min(b1, b2), max(b1, b2))
        deepest[pair] = max(deepest.get(pair, 0.0), -float(contact.dist))
    return deepest


def joint_speeds(model: mujoco.MjModel, data: mujoco.MjData, duration: float = 1.0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Times (s) and the largest hinge speed (rad/s) at each step, over ``duration`` seconds
    started at rest from the pose in ``data``, with gravity switched off so that only the
    model's own forces move it (the model's gravity is put back afterwards)."""
    import mujoco

    hinges = [int(model.jnt_dofadr[j]) for j in range(model.njnt)
              if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    gravity = model.opt.gravity.copy()
    model.opt.gravity[:] = 0.0
    data.qvel[:] = 0.0
    times, speeds = [], []
    try:
        for _ in range(round(duration / model.opt.timestep)):
            mujoco.mj_step(model, data)
            times.append(data.time)
            speeds.append(float(np.abs(data.qvel[hinges]).max()))
    finally:
        model.opt.gravity[:] = gravity
    return np.array(times), np.array(speeds)


def rest_speed(model: mujoco.MjModel, data: mujoco.MjData, duration: float = 1.0) -> float:
    """The largest hinge speed (rad/s) of :func:`joint_speeds` over the whole run."""
    return float(joint_speeds(model, data, duration)[1].max())


def cross_legged(twist: float = 0.0) -> dict[str, float]:
    """Exercise 11.1's pose: :data:`CROSS_LEGGED` with the lower back twisted by ``twist`` rad
    (the joint ``lowerbackrz``, range ±0.52 rad; 0: the pose as published).

    Example: ``humanoid(pose=cross_legged(0.3))``.
    """
    return {**CROSS_LEGGED, "lowerbackrz": float(twist)} if twist else dict(CROSS_LEGGED)


# Exercise 11.1's variants: the lower back's twist.  Untwisted, it overlaps both hip bodies; a
# twist of 0.2 rad or more either way swings it clear of one of them (no contact at all) and 12 mm
# or more into the other, far from the 1 mm threshold, so the filter's pairs lose one of the two
# (which one depends on the sign: two answers, neither the published one), and the real
# collisions change too (a thigh meets the lower back)
TWIST = Param(0.0, -0.5, 0.5, 0.1, unit="rad", gap=0.2,
              label="the twist of the lower back: its joint lowerbackrz")


@cache
def _cross_legged(twist: float = 0.0) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """The start overlaps of the cross-legged humanoid twisted by ``twist`` rad, as the file has
    it and with a free root."""
    return (overlaps(*humanoid("world", pose=cross_legged(twist))),
            overlaps(*humanoid("free", pose=cross_legged(twist))))


@cache
def _body_names() -> frozenset[str]:
    model, _ = corpus.load(HUMANOID)
    return frozenset(model.body(b).name for b in range(model.nbody))


MAX_PAIRS = 500
"""The most pairs an answer may list (the humanoid has 31 bodies: 465 pairs)."""


def _body_pairs(value: Any) -> list[list[str]]:
    """A list (tuple or set) of pairs, each two body names, as JSON data."""
    if not isinstance(value, list | tuple | set | frozenset):
        raise AnswerError(f"the answer should be a list of [body1, body2] pairs, got "
                          f"{type(value).__name__}")
    if len(value) > MAX_PAIRS:
        raise AnswerError(f"the answer lists {len(value)} pairs; at most {MAX_PAIRS} are read")
    pairs = []
    for index, pair in enumerate(sorted(value, key=str) if isinstance(value, set | frozenset)
                                 else value):
        if (not isinstance(pair, list | tuple) or len(pair) != 2
                or not all(isinstance(name, str) and 0 < len(name) <= 100 for name in pair)):
            raise AnswerError(f"the answer's entry {index}: a pair is two body names, like "
                              f"['root', 'lfemur'], got {str(pair)[:40]!r}")
        pairs.append([pair[0], pair[1]])
    return pairs


BODY_PAIRS = Kind("a list of [body1, body2] pairs", _body_pairs)
"""Exercise 11.1's answer kind: pairs of body names, as ``<exclude body1 body2>`` takes them."""


def _listed(pairs: Sequence[tuple[str, str]] | set[tuple[str, str]]) -> str:
    return ", ".join(f"{a}–{b}" for a, b in sorted(pairs))


@checker("11.1", "Exclude what the parent filter would have dropped", points=3,
         answers={"exclude_pairs": BODY_PAIRS},
         params={"twist": TWIST})
def _exclude_pairs(ex: Exercise) -> None:
    chosen = {(min(a, b), max(a, b)) for a, b in ex.value("exclude_pairs")}
    unknown = sorted({n for pair in chosen for n in pair} - _body_names())
    ex.precondition(not unknown and all(a != b for a, b in chosen),
                    "every pair names two different bodies of the humanoid",
                    failure=f"not a body of {HUMANOID}: {', '.join(unknown)}" if unknown else
                    "a pair names one body twice", hint="the names are model.body(i).name")
    pose = cross_legged(ex.param("twist"))
    welded, free = _cross_legged(ex.param("twist"))
    left = set(overlaps(*humanoid("world", pose=pose, exclude=sorted(chosen)))) - set(free)
    hidden, needless = chosen & set(free), chosen - set(welded)
    problems = []
    if left:
        problems.append(f"overlaps that a free root would not have are left: {_listed(left)}")
    if hidden:
        problems.append(f"you excluded {_listed(hidden)}, which collide with a free root too: "
                        "that is the pose, and the exclude hides a real collision")
    if needless:
        problems.append(f"excluded needlessly, no overlap at the start: {_listed(needless)}")
    ex.require(not problems, "no overlap is left that the parent filter would have dropped, "
               "and nothing else is excluded", failure="; ".join(problems),
               hint="compare the contacts of the humanoid as it is with those of the humanoid "
                    "whose root hangs from a free joint (humanoid('free', pose=cross_legged(twist)))")


# -- section 5: the inverted pendulum's clamped limit (Exercise 11.2) ------------------------------

def pendulum(timestep: float | None = None, timeconst: float | None = None
             ) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """:data:`PENDULUM` at ``timestep`` (s) with the ``solreflimit`` time constant of both its
    joint limits (the cart's slider and the pole's hinge) set to ``timeconst`` (s; damping
    ratio 1, as in the file); None keeps the file's."""
    edited = spec(corpus.path(PENDULUM))
    if timestep is not None:
        edited.option.timestep = timestep
    if timeconst is not None:
        for joint in edited.joints:
            joint.solref_limit = [timeconst, 1.0]
    return load(edited)


def limit_row(model: mujoco.MjModel, data: mujoco.MjData, past: float = 0.01) -> np.ndarray:
    """``efc_KBIP`` (4,) of the hinge's limit row with the pole ``past`` rad beyond its upper
    limit, at rest: stiffness K (1/s²), damping B (1/s), impedance I and P, as MuJoCo uses them."""
    import mujoco

    mujoco.mj_resetData(model, data)
    hinge = model.joint("hinge")
    data.qpos[hinge.qposadr[0]] = hinge.range[1] + past
    mujoco.mj_forward(model, data)
    limit = mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
    rows = [r for r in range(data.nefc) if data.efc_type[r] == limit and data.efc_id[r] == hinge.id]
    if len(rows) != 1:
        raise RuntimeError(f"expected one limit row of the hinge, found {len(rows)}")
    return data.efc_KBIP[rows[0]].copy()


def fall_angles(model: mujoco.MjModel, data: mujoco.MjData, duration: float = 3.0
                ) -> tuple[np.ndarray, np.ndarray]:
    """Let the pole fall from :data:`FALL_FROM` rad onto its upper limit (the cart free, no
    control) for ``duration`` s; return the times (s) and how far past the limit the pole is
    (rad, negative while it has not reached it) after each step."""
    import mujoco

    mujoco.mj_resetData(model, data)
    hinge = model.joint("hinge")
    address, limit = hinge.qposadr[0], hinge.range[1]
    data.qpos[address] = FALL_FROM
    times, past = [], []
    for _ in range(round(duration / model.opt.timestep)):
        mujoco.mj_step(model, data)
        times.append(data.time)
        past.append(float(data.qpos[address] - limit))
    return np.array(times), np.array(past)


def fall(model: mujoco.MjModel, data: mujoco.MjData, duration: float = 3.0
         ) -> tuple[float, float]:
    """:func:`fall_angles` summed up: how far past its limit (rad) the pole swings at most, and
    where it rests at the end."""
    past = fall_angles(model, data, duration)[1]
    return float(max(past.max(), 0.0)), float(past[-1])


@cache
def _shipped_limit(timestep: float = FILE_STEP) -> tuple[np.ndarray, float]:
    """The hinge's limit row and the fallen pole's rest (rad) of :data:`PENDULUM` at ``timestep``."""
    model, data = pendulum(timestep)
    return limit_row(model, data), fall(model, data)[1]


# Exercise 11.2's variants: the step the pendulum was tuned at, and the new one as a share of it.
# 12–30 ms keeps the clamp at work there (2·timestep > the file's 0.02 s, so the limit used
# 2·timestep, 20 % or more above what the file asks), and a step of 2 ms moves the right time
# constant by 7 % or more, far beyond the grader's 0.1 %.  The new step, a quarter to three
# quarters of the old one, needs no clamp for that time constant, so the limit can be kept
TUNED_STEP = Param(FILE_STEP, 0.012, 0.03, 0.002, unit="s",
                   label="the timestep the pendulum runs at now, where its limit was tuned")
STEP_FACTOR = Param(HALF_STEP / FILE_STEP, 0.25, 0.75, 0.05,
                    label="the new timestep, as a share of that one")


@checker("11.2", "A smaller timestep, the same hinge limit", points=2,
         answers={"hinge_timeconst": number(0, 1, low_open=True, unit=" s",
                                            why="a time constant is positive, and at 1 s the "
                                                "limit would be a slow spring the pole falls "
                                                "through")},
         params={"timestep": TUNED_STEP, "factor": STEP_FACTOR})
def _hinge_timeconst(ex: Exercise) -> None:
    timeconst = ex.value("hinge_timeconst")
    old, new = ex.param("timestep"), ex.param("factor") * ex.param("timestep")
    shipped_row, shipped_rest = _shipped_limit(old)
    model, data = pendulum(new, timeconst)
    row, rest = limit_row(model, data), fall(model, data)[1]
    used = max(FILE_TIMECONST, 2 * old)              # what MuJoCo used at the old step
    file_used = max(FILE_TIMECONST, 2 * new)         # what it makes of the file's value now
    mistakes = [(FILE_TIMECONST, f"that is the file's value: at {fmt(new, unit='s')} MuJoCo "
                                 + ("no longer raises it" if file_used == FILE_TIMECONST else
                                    f"raises it only to {fmt(file_used, unit='s')}")
                                 + f", and the limit becomes {fmt((used / file_used) ** 2, 3)} times "
                                   "stiffer than it was"),
                (ex.param("factor") * FILE_TIMECONST,
                 "scaling the time constant with the step changes the limit; at the old step "
                 "MuJoCo never used the file's value"),
                (2 * new, "that is twice the new step: the clamp's value now, not the one the "
                          "limit had at the old step"),
                (2 * FILE_STEP, "that is twice the file's step; the limit was tuned at another one"),
                (old, "that is the old step itself; the clamp raises a time constant to twice the step"),
                (FILE_TIMECONST / 4, "that is a quarter of the file's value; what did the limit use at "
                                     "the old step?")]
    why = next((text for value, text in mistakes if math.isclose(timeconst, value, rel_tol=1e-3)), "")
    same = bool(np.allclose(row[:2], shipped_row[:2], rtol=1e-3))
    # rtol 1e-3: efc_KBIP's K ∝ 1/timeconst², B ∝ 1/timeconst; only the one value matches
    ex.require(same, f"the hinge limit's stiffness and damping (efc_KBIP) at {fmt(new, unit='s')} "
               f"are the model's at {fmt(old, unit='s')}",
               failure=f"K, B = {fmt(row[0])}, {fmt(row[1])}, not the model's at the old step"
               + (f": {why}" if why else ""),
               hint=f"which time constant does MuJoCo use for the limit at {fmt(old, unit='s')}?")
    # rtol 1e-3: the same K and B give the same rest; the integrator's step does not move it
    ex.require(same and math.isclose(rest, shipped_rest, rel_tol=1e-3),
               "the fallen pole rests as far past its limit as at the old step",
               failure=f"it rests {fmt(rest, unit='rad')} past the limit, at the old step "
                       f"{fmt(shipped_rest, unit='rad')}" if not same else
                       "its limit matches, but it does not rest where the pole at the old step does")


# -- section 5: the standing humanoid (Exercise 11.3) ----------------------------------------------

@cache
def _standing_model() -> mujoco.MjModel:
    return corpus.load(STANDING)[0]


def standing(timestep: float | None = None, floor_timeconst: float | None = None
             ) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """:data:`STANDING` in its qpos0 (upright), lowered until its lowest geom is 1 mm into the
    floor, at ``timestep`` (s; None: the file's 0.005 s), its floor's solref time constant set to
    ``floor_timeconst`` (s; None: the file's :data:`FLOOR_TIMECONST`), with ``mj_forward`` run: its
    feet's floor contacts are in ``data.contact``, their rows in ``data.efc_*``."""
    import copy

    import mujoco

    model = copy.deepcopy(_standing_model())
    data = mujoco.MjData(model)
    if timestep is not None:
        model.opt.timestep = timestep
    if floor_timeconst is not None:
        model.geom_solref[model.geom("floor").id, 0] = floor_timeconst
    mujoco.mj_forward(model, data)                   # the geoms' poses, for the distances
    floor = model.geom("floor").id
    gap = min(mujoco.mj_geomDistance(model, data, floor, g, 10.0, None)
              for g in range(model.ngeom) if model.geom_bodyid[g] != 0)
    data.qpos[2] -= gap + 1e-3                       # the root's free joint: x, y, z first
    mujoco.mj_forward(model, data)
    return model, data


def clamped_rows(model: mujoco.MjModel, data: mujoco.MjData) -> list[int]:
    """The constraint rows of the state in ``data`` whose ``efc_KBIP`` MuJoCo changes when
    ``refsafe`` is on (the default): the rows whose time constant it raised to 2·timestep.
    Both are MuJoCo's own numbers: ``mj_forward`` with the flag on, then off (it is put back)."""
    import mujoco

    flag = int(mujoco.mjtDisableBit.mjDSBL_REFSAFE)
    saved = int(model.opt.disableflags)
    try:
        model.opt.disableflags = saved & ~flag
        mujoco.mj_forward(model, data)
        used = data.efc_KBIP.copy()
        model.opt.disableflags = saved | flag
        mujoco.mj_forward(model, data)
        asked = data.efc_KBIP.copy()
    finally:
        model.opt.disableflags = saved
        mujoco.mj_forward(model, data)
    # rtol 1e-12: both are one formula of the same inputs; a raised timeconst changes K by ≥ 0.2 %
    return [r for r in range(len(used)) if not np.allclose(used[r], asked[r], rtol=1e-12)]


# Exercise 11.3's variants: the floor's time constant, 10–40 ms (the feet's 15 ms left out: with
# it the mix would be either geom's own value).  A step of 2.5 ms moves the contact's mean time
# constant by 1.25 ms, 4.5 % or more: beyond the 2 % the answer may lie below the edge, so neither
# the published answer nor a neighbour's is right for a student
FLOOR_PARAM = Param(FLOOR_TIMECONST, 0.01, 0.04, 0.0025, unit="s",
                    label="the time constant of the floor's solref, with solmix 1 as in the file")


def _distinct_floor(values: Mapping[str, float]) -> bool:
    """Exercise 11.3's condition: the floor's time constant is not the feet's."""
    return abs(values["timeconst"] - FEET_TIMECONST) > 1e-3


@checker("11.3", "The largest timestep at which no contact is clamped", points=2,
         answers={"largest_timestep": number(0, 0.1, low_open=True, unit=" s",
                                             why="a timestep is positive, and at 0.1 s every "
                                                 "contact of the humanoid is clamped")},
         params={"timeconst": FLOOR_PARAM}, valid=_distinct_floor)
def _largest_timestep(ex: Exercise) -> None:
    h, floor = ex.value("largest_timestep"), ex.param("timeconst")
    raised = clamped_rows(*standing(h, floor))
    larger = clamped_rows(*standing(1.02 * h, floor))
    mixed = (FEET_TIMECONST + floor) / 2                 # solmix 1 : 1
    mistakes = [(FEET_TIMECONST / 2, f"that is the feet's own time constant, "
                                     f"{fmt(FEET_TIMECONST, unit='s')}, halved; but a contact uses "
                                     "a mix of both geoms' solref"),
                (floor / 2, f"that is the floor's {fmt(floor, unit='s')} halved; but a contact uses a "
                            "mix of both geoms' solref"),
                (0.005, "that is the file's own timestep"),
                (mixed, "that is the time constant itself; the clamp raises it below 2·timestep"),
                ((FEET_TIMECONST + FLOOR_TIMECONST) / 4,
                 "that is the answer for the file's floor; yours asks for another time constant")]
    why = next((text for value, text in mistakes if math.isclose(h, value, rel_tol=1e-3)), "")
    if raised:
        failure = f"at {fmt(h, unit='s')} MuJoCo raises the time constant of {len(raised)} rows"
    else:
        failure = f"nothing is clamped at {fmt(h, unit='s')}, but nothing is at a 2 % larger step"
    ex.require(not raised and bool(larger), "no contact row is clamped at this timestep, and "
               "some are at a 2 % larger one", failure=failure + (f": {why}" if why else ""),
               hint="read the solref of the contacts in data.contact (what each row asks for)")
