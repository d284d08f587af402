"""An actuator's moment arms, dense, and the derivative of its length: is the moment arm ∂l/∂q?

MuJoCo stores ``actuator_moment`` sparse (``nJmom`` non-zeros).  :func:`moment_matrix`
expands it to a dense ``(nout, nv)`` array; :func:`length_gradient` differentiates
``actuator_length`` along every dof by central differences (through ``mj_integratePos``,
so a ball's or a free joint's quaternion is moved along its tangent space).  Chapter 03
compares the two for every kind of transmission.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .params import mj

if TYPE_CHECKING:
    import mujoco

__all__ = ["length_gradient", "moment_matrix"]


def moment_matrix(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """``data.actuator_moment`` as a dense ``(nout, nv)`` array: row k maps dof velocities to
    output k's velocity, and its transpose maps that output's force to generalized force.

    Example: ``moment_matrix(model, data) @ data.qvel`` equals ``data.actuator_velocity``.
    """
    mujoco = mj()
    dense = np.zeros((model.nout, model.nv))
    if model.nout and model.nv:
        mujoco.mju_sparse2dense(dense, data.actuator_moment, data.moment_rownnz, data.moment_rowadr,
                                data.moment_colind)
    return dense


def length_gradient(model: mujoco.MjModel, data: mujoco.MjData, step: float = 1e-6) -> np.ndarray:
    """∂(actuator_length)/∂q at ``data.qpos``, ``(nout, nv)``, by central differences of
    ``±step`` along each dof (``mj_integratePos``).  ``data`` is left at its own ``qpos``,
    recomputed with ``mj_forward``.

    Example: ``np.abs(length_gradient(model, data) - moment_matrix(model, data)).max()``.
    """
    mujoco = mj()
    posed, gradient = data.qpos.copy(), np.zeros((model.nout, model.nv))
    try:
        for k in range(model.nv):
            for sign in (1.0, -1.0):
                data.qpos[:] = posed
                mujoco.mj_integratePos(model, data.qpos, sign * step * np.eye(model.nv)[k], 1.0)
                mujoco.mj_forward(model, data)
                gradient[:, k] += sign * data.actuator_length / (2 * step)
    finally:
        data.qpos[:] = posed
        mujoco.mj_forward(model, data)
    return gradient
