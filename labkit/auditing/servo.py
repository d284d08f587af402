"""A position servo as one linear mode, and the largest kp each integrator keeps stable.

Chapter 10 §1 derives and measures the limits for one mode; here the mode is the servo's own
coordinate (its actuator length).  An actuator with moment row ``m`` (d length / d qpos)
sees the apparent inertia ``I = 1 / (m·M⁻¹·mᵀ)``: the inertia its length has when every other
joint is free, the lightest it ever feels at this pose (so the highest frequency it can
excite; the model's fastest mode is at least that fast).  A generalized damping matrix D
reaches that coordinate as ``(m·M⁻¹·D·M⁻¹·mᵀ)·I²``.

Which damping an integrator treats implicitly (chapter 10's table, measured there): Euler
integrates joint damping and an actuator's ``damping`` on a joint implicitly (flag
``eulerdamp``), but ``kv`` and tendon damping explicitly; implicit and implicitfast
integrate all of them implicitly; RK4 none.  One step of ``I·ẍ = -k·x - c·ẋ`` is then
    Euler, implicit(fast): ``a = (-k·x - c·v) / (I + h·c_implicit)``, ``v⁺ = v + h·a``,
    ``x⁺ = x + h·v⁺``;  RK4: the fourth-order Taylor polynomial of ``h·A``,
and the servo is stable while the step matrix's spectral radius stays below 1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import mujoco

__all__ = ["ServoTerms", "actuator_terms", "growth", "integrator_name",
           "largest_stable_stiffness"]

_NAMES = {0: "Euler", 1: "RK4", 2: "implicit", 3: "implicitfast"}


@dataclass(frozen=True)
class ServoTerms:
    """One servo as a mode: k (N/m or N·m/rad: kp), inertia (kg or kg·m²: the apparent
    inertia of the actuator's length), explicit / implicit (N·s/m: the damping the model's
    integrator treats explicitly / implicitly), bodies (ids the servo moves)."""

    k: float
    inertia: float
    explicit: float
    implicit: float
    bodies: tuple[int, ...] = ()

    def without_damping(self) -> ServoTerms:
        return replace(self, explicit=0.0, implicit=0.0)


def integrator_name(model: mujoco.MjModel) -> str:
    """``"Euler"``, ``"RK4"``, ``"implicit"`` or ``"implicitfast"``."""
    return _NAMES[int(model.opt.integrator)]


def actuator_terms(model: mujoco.MjModel, data: mujoco.MjData, actuator: int,
                   inverse_mass: np.ndarray) -> ServoTerms | None:
    """The mode of position servo ``actuator`` at ``data``'s pose; None when its moment row
    is zero (it moves nothing here).  ``inverse_mass``: M⁻¹ (nv, nv) at that pose."""
    import mujoco

    from ..actuation.moments import moment_matrix

    row = moment_matrix(model, data)[int(model.actuator_outadr[actuator])]
    reach = inverse_mass @ row
    inverse = float(row @ reach)
    if not np.isfinite(inverse) or inverse <= 1e-12 * max(1.0, float(np.abs(row).max())):
        return None
    inertia = 1.0 / inverse

    def damping(matrix: np.ndarray) -> float:  # generalized damping seen by this coordinate
        return float(reach @ matrix @ reach) * inertia**2

    joint = damping(np.diag(model.dof_damping))
    tendon = 0.0
    if model.ntendon:
        jac = np.zeros((model.ntendon, model.nv))
        mujoco.mju_sparse2dense(jac, data.ten_J, model.ten_J_rownnz, model.ten_J_rowadr,
                                model.ten_J_colind)
        tendon = damping(jac.T @ np.diag(model.tendon_damping) @ jac)
    kv = -float(model.actuator_biasprm[actuator, 2])
    own = float(model.actuator_damping[actuator]) if hasattr(model, "actuator_damping") else 0.0
    on_joint = int(model.actuator_trntype[actuator]) in (int(mujoco.mjtTrn.mjTRN_JOINT),
                                                         int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
    name = integrator_name(model)
    eulerdamp = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    if name in ("implicit", "implicitfast"):
        explicit, implicit = 0.0, joint + tendon + kv + own
    elif name == "Euler" and eulerdamp:
        explicit, implicit = kv + tendon + (0.0 if on_joint else own), joint + (own if on_joint
                                                                               else 0.0)
    else:  # RK4, or Euler with eulerdamp disabled
        explicit, implicit = joint + tendon + kv + own, 0.0
    moved = np.flatnonzero(np.abs(row) > 0)
    bodies = tuple(sorted({int(model.dof_bodyid[d]) for d in moved}))
    return ServoTerms(float(model.actuator_gainprm[actuator, 0]), inertia, explicit, implicit,
                      bodies)


def growth(terms: ServoTerms, timestep: float, integrator: str) -> float:
    """The spectral radius of one integrator step of the mode (stable below 1)."""
    h, inertia = timestep, terms.inertia
    damping = terms.explicit + terms.implicit
    if integrator == "RK4":
        a = np.array([[0.0, 1.0], [-terms.k / inertia, -damping / inertia]]) * h
        step = np.eye(2) + a + a @ a / 2 + a @ a @ a / 6 + a @ a @ a @ a / 24
    else:
        effective = inertia + h * terms.implicit
        ax, av = -terms.k / effective, -damping / effective
        step = np.array([[1 + h * h * ax, h * (1 + h * av)], [h * ax, 1 + h * av]])
    return float(np.max(np.abs(np.linalg.eigvals(step))))


def largest_stable_stiffness(terms: ServoTerms, timestep: float, integrator: str) -> float:
    """The largest k (same units as ``terms.k``) for which :func:`growth` stays ≤ 1, by
    bisection (relative precision 1e-6); 0 when the damping alone is already unstable."""
    def stable(k: float) -> bool:
        return growth(replace(terms, k=k), timestep, integrator) <= 1 + 1e-12

    low = 0.0
    high = 4 * terms.inertia / timestep**2  # Euler's undamped limit, ω·h = 2
    if not stable(high * 1e-9):
        return 0.0
    while stable(high):
        low, high = high, high * 2
    while high - low > 1e-6 * high:
        mid = (low + high) / 2
        low, high = (mid, high) if stable(mid) else (low, mid)
    return low
