"""Collision projection: which geoms count, how deep a pose penetrates, and the bisection
that cuts a penetrating step back to a safe pose.

Units: distances, depths and tolerances in metres; joint positions in rad (hinges) or m (slides).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..contact import geom_id
from .commands import joint_ids

if TYPE_CHECKING:
    import mujoco

__all__ = ["EVALUATORS", "bisect", "collide", "geom_ids", "moved_geoms", "penetration"]

#: How the driver asks MuJoCo for contacts when it evaluates a trial pose.
EVALUATORS = ("collision", "fwdposition", "forward")


def moved_geoms(model: mujoco.MjModel, joints: Sequence[str]) -> np.ndarray:
    """Ids of the geoms that ``joints`` (names) move: those on the joints' bodies and on every
    body below them in the tree.  Shape (k,), sorted.

    Example: ``moved_geoms(model, ["thumb_mcp"])`` → the ids of the thumb's geoms.
    """
    ids = joint_ids(model, joints)
    roots = {int(model.jnt_bodyid[j]) for j in ids}
    moved = np.zeros(model.nbody, dtype=bool)
    for b in range(model.nbody):  # parents come before children in MuJoCo's body order
        moved[b] = b in roots or (b > 0 and moved[model.body_parentid[b]])
    return np.flatnonzero(moved[model.geom_bodyid])


def geom_ids(model: mujoco.MjModel, geoms: Iterable[int | str]) -> np.ndarray:
    """Ids of ``geoms`` (names or ids, see :func:`labkit.contact.geom_id`), sorted, without
    repeats.  Shape (k,).

    Example: ``geom_ids(model, ["rod", 0, "rod"])`` → ``array([0, 3])`` on the chapter-08 hand.
    """
    return np.asarray(sorted({geom_id(model, g) for g in geoms}), dtype=int)


def penetration(model: mujoco.MjModel, data: mujoco.MjData,
                geoms: Iterable[int] | np.ndarray | None = None) -> float:
    """Worst penetration depth (m, ≥ 0) among the contacts in ``data``.

    Reads ``data.contact[:ncon].dist`` (negative = overlap) as left by the last ``mj_collision``
    (or ``mj_forward``/``mj_step``).  geoms: ids; only contacts with at least one geom in this
    set count (None: every contact).  0 when no counted contact overlaps.

    Example: ``penetration(model, data, moved_geoms(model, ["index_mcp"]))`` → e.g. ``0.0``.
    """
    n = int(data.ncon)
    if n == 0:
        return 0.0
    contact = data.contact
    dist = np.asarray(contact.dist[:n], dtype=float)
    if geoms is not None:
        mask = np.zeros(model.ngeom, dtype=bool)
        mask[np.asarray(list(geoms) if not isinstance(geoms, np.ndarray) else geoms, dtype=int)] = True
        keep = mask[contact.geom1[:n]] | mask[contact.geom2[:n]]
        dist = dist[keep]
    return float(max(0.0, -dist.min())) if dist.size else 0.0


def collide(model: mujoco.MjModel, data: mujoco.MjData, how: str,
            calls: Counter[str] | None = None) -> None:
    """Bring ``data``'s contacts up to date with its ``qpos``, the way ``how`` names.

    how: one of :data:`EVALUATORS`: ``"collision"`` (mj_kinematics + mj_collision),
        ``"fwdposition"`` (mj_fwdPosition) or ``"forward"`` (mj_forward).
    calls: if given, each MuJoCo function called is counted in it, by name.

    Example: ``collide(model, data, "collision")``, then :func:`penetration` reads the result.
    """
    import mujoco

    if how == "collision":
        mujoco.mj_kinematics(model, data)
        mujoco.mj_collision(model, data)
        done = ("mj_kinematics", "mj_collision")
    elif how == "fwdposition":
        mujoco.mj_fwdPosition(model, data)
        done = ("mj_fwdPosition",)
    elif how == "forward":
        mujoco.mj_forward(model, data)
        done = ("mj_forward",)
    else:
        raise ValueError(f"how must be one of {EVALUATORS}, got {how!r}")
    if calls is not None:
        calls.update(done)


def bisect(
    base: np.ndarray,
    candidate: np.ndarray,
    active: Iterable[int],
    unsafe: Callable[[np.ndarray], bool],
    couple: Callable[[np.ndarray], np.ndarray],
    iterations: int,
) -> tuple[np.ndarray, list[int]]:
    """Move a safe pose towards ``candidate`` one active joint at a time, as far as is safe.

    base: a safe pose, shape (n,) (rad or m); candidate: where the joints were going, shape (n,);
    active: indices of the joints to move (the others follow through ``couple``);
    unsafe(q): writes and collides pose q and says whether it penetrates too deep;
    couple(q): sets q's coupled joints from their leaders, in place, and returns q;
    iterations: halvings per blocked joint.

    The joints go the largest step first: a joint that can take its whole step takes it; a
    blocked one is bisected ``iterations`` times between where it is and where it was going and
    keeps the furthest safe value, within (step)/2**iterations.  Every accepted trial was
    safe, so the result is.  Returns (the pose, shape (n,); the indices of the blocked joints,
    in the order processed).

    Example: ``q, blocked = bisect(previous, slewed, [1, 2], driver_unsafe, couple, 12)``.
    """
    limited = []
    order = sorted(active, key=lambda i: -abs(candidate[i] - base[i]))
    for i in order:
        if candidate[i] == base[i]:
            continue
        trial = base.copy()
        trial[i] = candidate[i]
        if not unsafe(couple(trial)):
            base = trial
            continue
        limited.append(int(i))
        safe, blocked = base[i], candidate[i]
        for _ in range(iterations):
            trial[i] = 0.5 * (safe + blocked)
            if unsafe(couple(trial)):
                blocked = trial[i]
            else:
                safe = trial[i]
        trial[i] = safe
        base = couple(trial)
    return base, limited
