"""Let a model's free objects come to rest, then predict and measure how deep they sink."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import mujoco

    from ..solver import RestPrediction

__all__ = ["free_objects", "settle"]

# At rest means every object's speed stays under 1 mm/s for 0.1 s: slow enough that the
# contact's damping term (b·velocity) is negligible next to its spring at the rest depth.
REST_SPEED = 1e-3  # m/s
QUIET = 0.1  # s
LONGEST = 2.0  # s of simulated time at most; a drop from 1 m lands within 0.5 s
MOST_STEPS = 2000  # and at most this many steps, so that an audit stays within seconds
WEDGED = 1e-3  # m: deeper at the start is an overlap (checks.OVERLAP), not a resting contact


def free_objects(model: mujoco.MjModel) -> list[int]:
    """Bodies with a free joint and no joint below them: rigid objects (not robots)."""
    import mujoco

    free = [b for b in range(1, model.nbody) if model.body_jntnum[b] == 1
            and model.jnt_type[model.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE]
    below = model.body_parentid
    jointed = {b for b in range(1, model.nbody) if model.body_jntnum[b] > 0}
    objects = []
    for b in free:
        descendants = [c for c in range(b + 1, model.nbody) if _under(below, c, b)]
        if not jointed.intersection(descendants):
            objects.append(b)
    return objects


def _under(parent: np.ndarray, body: int, ancestor: int) -> bool:
    while body:
        body = int(parent[body])
        if body == ancestor:
            return True
    return False


def settle(model: mujoco.MjModel, objects: list[int],
           keyframe: int | None = None) -> dict[int, RestPrediction | None]:
    """Simulate from the start pose (``keyframe`` or qpos0, controls zero) until every object
    is at rest (or LONGEST / MOST_STEPS pass); then ``solver.rest_prediction`` for each object
    that rests on something, None for one still moving or touching nothing."""
    import mujoco

    from ..solver import rest_prediction

    data = mujoco.MjData(model)
    if keyframe is not None:
        mujoco.mj_resetDataKeyframe(model, data, keyframe)
    mujoco.mj_forward(model, data)
    # an object that starts inside another is wedged, not resting: the depth it keeps is the
    # overlap's (overlap-at-start reports it), not the soft contact's
    wedged = {int(model.body_weldid[model.geom_bodyid[g]]) for c in data.contact[:data.ncon]
              if -c.dist > WEDGED for g in c.geom if g >= 0}
    steps = min(MOST_STEPS, int(LONGEST / model.opt.timestep))
    quiet_steps = max(1, int(QUIET / model.opt.timestep))
    dofs = [model.jnt_dofadr[model.body_jntadr[b]] for b in objects]
    calm = 0
    for _ in range(steps):
        mujoco.mj_step(model, data)
        speed = max(float(np.linalg.norm(data.qvel[d:d + 3])) for d in dofs)
        calm = calm + 1 if speed < REST_SPEED else 0
        if calm >= quiet_steps:
            break
    mujoco.mj_forward(model, data)
    out: dict[int, RestPrediction | None] = {}
    for b, d in zip(objects, dofs, strict=True):
        touching = any(b in {int(model.geom_bodyid[g]) for g in c.geom if g >= 0}
                       for c in data.contact[:data.ncon])
        if b in wedged:
            out[b] = None
            continue
        moving = float(np.linalg.norm(data.qvel[d:d + 3])) >= REST_SPEED
        out[b] = None
        if not moving and touching:
            try:
                out[b] = rest_prediction(model, data, b)
            except ValueError:  # the rest equations do not apply (it says why): no prediction
                out[b] = None
    return out
