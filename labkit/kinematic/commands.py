"""Joints by name, their ranges, raw commands → joint targets, and the slew limit.

Units: hinge joints in radians, slide joints in metres; rates in rad/s and m/s; ``dt`` in s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..models import element_id

if TYPE_CHECKING:
    import mujoco

__all__ = ["command_to_targets", "default_joints", "joint_ids", "joint_ranges", "slew_towards"]


def joint_ids(model: mujoco.MjModel, joints: Iterable[str]) -> list[int]:
    """Joint ids for ``joints`` (names), in order; each must be a hinge or a slide joint.

    An unknown name raises ``KeyError`` listing the model's joints
    (:func:`labkit.models.element_id`); a free or ball joint raises ``ValueError``.

    Example: ``joint_ids(model, ["lift", "thumb_yaw"])`` → ``[1, 8]`` on the chapter-08 hand.
    """
    import mujoco

    ids = []
    for name in joints:
        if not isinstance(name, str):
            raise TypeError(f"joints are given by name (str), got {name!r}")
        j = element_id(model, "joint", name)
        kind = int(model.jnt_type[j])
        if kind not in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            what = {mujoco.mjtJoint.mjJNT_FREE: "free", mujoco.mjtJoint.mjJNT_BALL: "ball"}[kind]
            raise ValueError(f"joint {name!r} is a {what} joint: the kinematic driver moves hinge "
                             "and slide joints only (one number per joint)")
        ids.append(j)
    return ids


def joint_ranges(model: mujoco.MjModel, joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper limits of ``joints`` (names) from ``model.jnt_range``, each shape (n,).

    Radians for hinges, metres for slides; a joint without limits gets (-inf, +inf).

    Example: ``joint_ranges(model, ["index_mcp"])`` → ``(array([0.]), array([1.5]))`` (rad).
    """
    ids = joint_ids(model, joints)
    limited = np.asarray(model.jnt_limited[ids], dtype=bool)
    lo = np.where(limited, model.jnt_range[ids, 0], -np.inf)
    hi = np.where(limited, model.jnt_range[ids, 1], np.inf)
    return lo.astype(float), hi.astype(float)


def default_joints(model: mujoco.MjModel) -> list[str]:
    """Names of every hinge and slide joint of ``model``, in id order (all must be named).

    Example: ``default_joints(model)`` → ``["lift", "index_mcp", ...]`` (the hand's free rod left out).
    """
    import mujoco

    kinds = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    names = [model.joint(i).name for i in range(model.njnt) if int(model.jnt_type[i]) in kinds]
    if any(not n for n in names):
        raise ValueError("the model has unnamed hinge/slide joints: name them, or pass joints=[...]")
    return names


def command_to_targets(
    values: Sequence[float] | np.ndarray,
    joints: Sequence[str],
    lo: Sequence[float] | np.ndarray,
    hi: Sequence[float] | np.ndarray,
    *,
    command_range: tuple[float, float] = (0.0, 255.0),
    reverse: bool | Sequence[bool] = False,
) -> dict[str, float]:
    """Map raw commands to joint targets, one channel per joint.

    values: commands, shape (n,), in ``command_range`` units (e.g. 0–255 motor counts);
        values outside the range are clamped to it.
    joints: the joint name each channel drives, shape (n,).
    lo, hi: the target (rad or m) at the low and at the high end of the command range,
        each shape (n,); often the joint limits (:func:`joint_ranges`).
    command_range: (low, high) command values, low ≠ high.
    reverse: one bool, or one per channel: when true the channel runs backwards
        (low command → ``hi``, high command → ``lo``), as for a hand whose 255 means "open".

    Returns ``{joint: target}``.  Linear: target = lo + (c − low)/(high − low)·(hi − lo).

    Example: ``command_to_targets([51], ["j"], [0.0], [1.0])`` → ``{"j": 0.2}``.
    """
    v = np.asarray(values, dtype=float).reshape(-1)
    names = list(joints)
    lo_a = np.asarray(lo, dtype=float) * np.ones(v.shape) if np.ndim(lo) == 0 else np.asarray(lo, float)
    hi_a = np.asarray(hi, dtype=float) * np.ones(v.shape) if np.ndim(hi) == 0 else np.asarray(hi, float)
    if len(names) != v.size:
        raise ValueError(f"got {v.size} commands for {len(names)} joints ({', '.join(names)}): "
                         "give one command per joint, in the same order")
    if lo_a.shape != v.shape or hi_a.shape != v.shape:
        raise ValueError(f"lo and hi need one value per joint ({v.size}); got shapes "
                         f"{lo_a.shape} and {hi_a.shape}")
    bad = [names[i] for i in np.flatnonzero(~np.isfinite(v))]
    if bad:
        raise ValueError(f"commands must be finite numbers; not finite for: {', '.join(bad)}")
    unbounded = [names[i] for i in np.flatnonzero(~(np.isfinite(lo_a) & np.isfinite(hi_a)))]
    if unbounded:
        raise ValueError(f"no finite target range for {', '.join(unbounded)} (a joint without "
                         "limits?): pass finite lo and hi for it, the targets at the two ends of "
                         "the command range")
    low, high = (float(c) for c in command_range)
    if not low < high:
        raise ValueError(f"command_range must be (low, high) with low < high, got {command_range!r}")
    rev = np.broadcast_to(np.asarray(reverse, dtype=bool), v.shape)
    fraction = (np.clip(v, low, high) - low) / (high - low)
    fraction = np.where(rev, 1.0 - fraction, fraction)
    targets = lo_a + fraction * (hi_a - lo_a)
    return {name: float(t) for name, t in zip(names, targets, strict=True)}


def slew_towards(
    applied: np.ndarray,
    goal: np.ndarray,
    limit: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> np.ndarray:
    """``applied`` moved towards ``goal`` by at most ``limit`` per entry, clipped to [lo, hi].

    All arguments have shape (n,), in rad or m; ``limit`` = rate·dt (inf: no limit).  An entry
    within one step of its goal lands on it exactly (``q + (goal − q)`` can miss it by a bit).
    Returns a new array, shape (n,).

    Example: ``slew_towards(np.zeros(1), np.ones(1), np.full(1, 0.1), -np.ones(1), np.ones(1))`` → ``[0.1]``.
    """
    gap = goal - applied
    q = np.where(np.abs(gap) <= limit, goal, applied + np.clip(gap, -limit, limit))
    return np.clip(q, lo, hi)
