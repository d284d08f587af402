"""Checkers of chapter 11 (auditing a real robot), and the experiments they share with the
chapter's lessons.  Every model comes from the real-model corpus (:mod:`labkit.corpus`):

- :func:`humanoid`, :func:`overlaps`, :func:`rest_speed`: dm_control's CMU humanoid walker, its
  root hung from a free joint, a slide joint or (as the file has it) welded to the world, the
  body pairs that overlap at the start pose, and how fast its joints move at rest
  (section 3, Exercise 11.1 in the :data:`CROSS_LEGGED` pose).
- :func:`pendulum`, :func:`limit_row`, :func:`fall`: gymnasium's inverted pendulum with another
  timestep or joint-limit time constant, the limit's row in ``efc_KBIP``, and how far the pole
  passes its limit when it falls (section 5, Exercise 11.2).
- :func:`standing`, :func:`clamped_rows`: dm_control's suite humanoid standing on the floor, and
  the constraint rows whose time constant MuJoCo raised (section 5, Exercise 11.3).

The checkers read nothing but the learner's answers, and judge them in MuJoCo: they apply the
excludes and count the overlaps left, or compare ``efc_KBIP`` with and without ``refsafe``.
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
from .core import Exercise, checker

if TYPE_CHECKING:
    import mujoco

__all__ = ["ARM", "BODY_PAIRS", "CROSS_LEGGED", "FALL_FROM", "HALF_STEP", "HUMANOID", "OVERLAP",
           "PENDULUM", "STANDING", "clamped_rows", "fall", "fall_angles", "humanoid",
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
"""s: Exercise 11.2 runs the pendulum at half its 0.02 s timestep."""

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


@cache
def _cross_legged() -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """The start overlaps of the cross-legged humanoid, as the file has it and with a free root."""
    return (overlaps(*humanoid("world", pose=CROSS_LEGGED)),
            overlaps(*humanoid("free", pose=CROSS_LEGGED)))


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
         answers={"exclude_pairs": BODY_PAIRS})
def _exclude_pairs(ex: Exercise) -> None:
    chosen = {(min(a, b), max(a, b)) for a, b in ex.value("exclude_pairs")}
    unknown = sorted({n for pair in chosen for n in pair} - _body_names())
    ex.precondition(not unknown and all(a != b for a, b in chosen),
                    "every pair names two different bodies of the humanoid",
                    failure=f"not a body of {HUMANOID}: {', '.join(unknown)}" if unknown else
                    "a pair names one body twice", hint="the names are model.body(i).name")
    welded, free = _cross_legged()
    left = set(overlaps(*humanoid("world", pose=CROSS_LEGGED, exclude=sorted(chosen)))) - set(free)
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
                    "whose root hangs from a free joint (humanoid('free', pose=CROSS_LEGGED))")


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
def _shipped_limit() -> tuple[np.ndarray, float]:
    model, data = pendulum()
    return limit_row(model, data), fall(model, data)[1]


@checker("11.2", "Half the timestep, the same hinge limit", points=2,
         answers={"hinge_timeconst": number(0, 1, low_open=True, unit=" s",
                                            why="a time constant is positive, and at 1 s the "
                                                "limit would be a slow spring the pole falls "
                                                "through")})
def _hinge_timeconst(ex: Exercise) -> None:
    timeconst = ex.value("hinge_timeconst")
    shipped_row, shipped_rest = _shipped_limit()
    model, data = pendulum(HALF_STEP, timeconst)
    row, rest = limit_row(model, data), fall(model, data)[1]
    mistakes = {0.02: "that is the file's value: at 0.01 s MuJoCo no longer raises it, and the "
                      "limit becomes four times stiffer than the shipped model's",
                0.01: "halving the time constant with the step changes the limit; the shipped "
                      "model never used the file's value",
                0.005: "that is a quarter of the file's value; what did the shipped model use?"}
    why = next((text for value, text in mistakes.items()
                if math.isclose(timeconst, value, rel_tol=1e-3)), "")
    same = bool(np.allclose(row[:2], shipped_row[:2], rtol=1e-3))
    # rtol 1e-3: efc_KBIP's K ∝ 1/timeconst², B ∝ 1/timeconst; only the one value matches
    ex.require(same, "the hinge limit's stiffness and damping (efc_KBIP) at 0.01 s are the "
               "shipped model's at 0.02 s",
               failure=f"K, B = {fmt(row[0])}, {fmt(row[1])}, not the shipped model's"
               + (f": {why}" if why else ""),
               hint="which time constant does MuJoCo use for the limit at the shipped 0.02 s step?")
    # rtol 1e-3: the same K and B give the same rest; the integrator's step does not move it
    ex.require(same and math.isclose(rest, shipped_rest, rel_tol=1e-3),
               "the fallen pole rests as far past its limit as in the shipped model",
               failure=f"it rests {fmt(rest, unit='rad')} past the limit, the shipped model "
                       f"{fmt(shipped_rest, unit='rad')}" if not same else
                       "its limit matches, but it does not rest where the shipped pole does")


# -- section 5: the standing humanoid (Exercise 11.3) ----------------------------------------------

@cache
def _standing_model() -> mujoco.MjModel:
    return corpus.load(STANDING)[0]


def standing(timestep: float | None = None) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """:data:`STANDING` in its qpos0 (upright), lowered until its lowest geom is 1 mm into the
    floor, at ``timestep`` (s; None: the file's 0.005 s), with ``mj_forward`` run: its feet's
    floor contacts are in ``data.contact``, their rows in ``data.efc_*``."""
    import copy

    import mujoco

    model = copy.deepcopy(_standing_model())
    data = mujoco.MjData(model)
    if timestep is not None:
        model.opt.timestep = timestep
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


@checker("11.3", "The largest timestep at which no contact is clamped", points=2,
         answers={"largest_timestep": number(0, 0.1, low_open=True, unit=" s",
                                             why="a timestep is positive, and at 0.1 s every "
                                                 "contact of the humanoid is clamped")})
def _largest_timestep(ex: Exercise) -> None:
    h = ex.value("largest_timestep")
    raised = clamped_rows(*standing(h))
    larger = clamped_rows(*standing(1.02 * h))
    mistakes = {0.0075: "that is the feet's own time constant, 0.015 s, halved; but a contact "
                        "uses a mix of both geoms' solref",
                0.01: "that is the floor's 0.02 s halved; but a contact uses a mix of both geoms' "
                      "solref",
                0.005: "that is the file's own timestep",
                0.0175: "that is the time constant itself; the clamp raises it below 2·timestep"}
    why = next((text for value, text in mistakes.items() if math.isclose(h, value, rel_tol=1e-3)),
               "")
    if raised:
        failure = f"at {fmt(h, unit='s')} MuJoCo raises the time constant of {len(raised)} rows"
    else:
        failure = f"nothing is clamped at {fmt(h, unit='s')}, but nothing is at a 2 % larger step"
    ex.require(not raised and bool(larger), "no contact row is clamped at this timestep, and "
               "some are at a 2 % larger one", failure=failure + (f": {why}" if why else ""),
               hint="read the solref of the contacts in data.contact (what each row asks for)")
