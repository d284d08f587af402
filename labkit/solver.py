"""MuJoCo's constraint-softness model as functions you can call and plot.

Every constraint row (contact, limit, equality) is softened by two parameter vectors:

- ``solimp = (dmin, dmax, width, midpoint, power)`` gives the **impedance** d(r) ∈ (0, 1),
  a function of the violation r (how far the constraint is violated, beyond its margin);
- ``solref = (timeconst, dampratio)`` (both > 0) or ``(-stiffness, -damping)`` (both < 0)
  gives the **reference acceleration** the constraint tries to reach,
  ``aref = -b·v - k·d(r)·r``.

The solver then yields, for one isolated row whose approximate inverse mass ``efc_diagA``
equals its true one ``J·M⁻¹·Jᵀ`` (a free body's contact under its centre of mass, or any
row under ``diagexact``), ``a = (1 - d)·a0 + d·aref`` where ``a0`` is the unconstrained
acceleration.  The formulas follow ``getimpedance``/``getsolparam`` inside
``mj_makeImpedance`` and ``mj_referenceConstraint`` (engine_core_constraint.c); the tests
check them against ``mjData.efc_KBIP`` and ``efc_aref``.  Units: r in metres (or radians for
angular constraints), k in 1/s², b in 1/s, accelerations in m/s².

:func:`impedance_figure` draws d(r) for several solimp vectors, :func:`solimp_figure` for
one, given as chapter 05's five sliders.

Two machine-independent measures of the solver's work: :func:`factor_cost` counts the Newton
Hessian's factor and its fill-in, :func:`iterations_to` the iterations a solver needs for a
given accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import mujoco
    from matplotlib.figure import Figure

__all__ = ["MAXIMP", "MINIMP", "FactorCost", "Reference", "RowTerms", "euler_stability", "factor_cost",
           "impedance", "impedance_figure", "iterations_to", "reference", "rest_depths", "rest_penetration",
           "row_terms", "solimp_figure"]

MINIMP = 0.0001  # mjMINIMP: impedance is clamped to [MINIMP, MAXIMP]
MAXIMP = 0.9999  # mjMAXIMP
_MINVAL = 1e-15  # mjMINVAL
DEFAULT_SOLREF = (0.02, 1.0)
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


def _solimp(solimp: Sequence[float]) -> np.ndarray:
    """Clamp solimp the way the engine does before using it."""
    s = np.array(solimp, dtype=float)
    if s.shape != (5,):
        raise ValueError(f"solimp has 5 numbers (dmin, dmax, width, midpoint, power), got {s.shape}")
    s[0] = np.clip(s[0], MINIMP, MAXIMP)
    s[1] = np.clip(s[1], MINIMP, MAXIMP)
    s[2] = max(0.0, s[2])
    s[3] = np.clip(s[3], MINIMP, MAXIMP)
    s[4] = max(1.0, s[4])
    return s


def impedance(solimp: Sequence[float], r: float | np.ndarray) -> np.ndarray:
    """The impedance d(r) for violation ``r`` (array-like, m or rad; its sign is ignored).

    d rises from ``dmin`` at r = 0 to ``dmax`` at r = ``width`` along two power-law pieces
    that meet at ``midpoint`` (a fraction of the width); beyond the width it stays at dmax.
    Returns an array of the shape of ``r``.
    """
    dmin, dmax, width, mid, p = _solimp(solimp)
    x = np.abs(np.asarray(r, dtype=float))
    if dmin == dmax or width <= _MINVAL:
        return np.full(x.shape, 0.5 * (dmin + dmax))
    x = x / width
    y = np.where(x <= mid, x**p / mid ** (p - 1), 1 - (1 - x) ** p / (1 - mid) ** (p - 1))
    if p == 1:
        y = x
    y = np.where(x >= 1, 1.0, np.where(x <= 0, 0.0, y))
    return dmin + y * (dmax - dmin)


def impedance_figure(solimps: Sequence[Sequence[float]], *,
                     title: str = "impedance d(r) for several solimp vectors", most: float = 0.003) -> Figure:
    """Plot :func:`impedance` d(r) for each solimp vector, for violations from 0 to ``most``.

    Args:
      solimps: solimp vectors (dmin, dmax, width in m, midpoint, power), one curve each.
      title: the axes' title.
      most: the largest violation drawn, m (the x axis is in mm).

    Returns:
      A matplotlib Figure (d from 0 to 1.02 over |r| in mm), detached from pyplot.

    Example: ``solver.impedance_figure([(0.9, 0.95, 0.001, 0.5, 2), (0, 0.95, 0.002, 0.5, 2)])``.
    """
    from .display import figure

    violation = np.linspace(0, most, 601)
    fig, ax = figure()
    for s in solimps:
        ax.plot(1e3 * violation, impedance(s, violation), label="solimp = " + " ".join(f"{v:g}" for v in s))
    ax.set(xlabel="violation |r| [mm]", ylabel="d(r)", ylim=(0, 1.02), title=title)
    ax.legend(fontsize="small", loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def solimp_figure(dmin: float = 0.9, dmax: float = 0.95, width: float = 0.001, midpoint: float = 0.5,
                  power: float = 2.0) -> Figure:
    """Plot the impedance curve of one solimp vector, given as five numbers (chapter 05's
    sliders; the defaults are MuJoCo's).

    Args:
      dmin: d at zero violation; dmax: d at and beyond ``width`` (both in (0, 1));
      width: the violation, m, over which d goes from dmin to dmax;
      midpoint: where the two power-law pieces meet, a fraction of the width;
      power: the pieces' degree (≥ 1).

    Returns:
      The :func:`impedance_figure` of this one vector, titled "your solimp".

    Example: ``labkit.interactive(solver.solimp_figure, dmin=ipywidgets.FloatSlider(...))``.
    """
    return impedance_figure([(dmin, dmax, width, midpoint, power)], title="your solimp")


@dataclass(frozen=True)
class Reference:
    """Stiffness and damping MuJoCo actually uses for one constraint row.

    k: stiffness multiplying d(r)·r in aref (1/s²), ``K`` of efc_KBIP;
    b: damping multiplying v (1/s), ``B`` of efc_KBIP;
    d: the impedance at the given violation;
    timeconst: the time constant in force (s; NaN for the direct format);
    requested_timeconst: the solref[0] you wrote (NaN for the direct format);
    clamped: True when the safety rule ``timeconst ≥ 2·timestep`` changed it.
    """

    k: float
    b: float
    d: float
    timeconst: float
    requested_timeconst: float
    clamped: bool

    @property
    def stiffness(self) -> float:
        """Effective stiffness at this violation, k·d (1/s²): aref = -b·v - stiffness·r."""
        return self.k * self.d


def reference(
    solref: Sequence[float],
    solimp: Sequence[float],
    r: float = 0.0,
    *,
    timestep: float,
    refsafe: bool = True,
) -> Reference:
    """Return the :class:`Reference` (k, b, d) MuJoCo uses for ``solref``/``solimp`` at
    violation ``r``.

    Standard format (both solref numbers > 0): ``b = 2 / (dmax·timeconst)`` and
    ``k = 1 / (dmax²·timeconst²·dampratio²)``, with timeconst raised to ``2·timestep`` unless
    ``refsafe`` is False (``<flag refsafe="disable"/>``).  Direct format (both < 0):
    ``k = stiffness / dmax²`` and ``b = damping / dmax``.  A mixed-sign solref is replaced
    by the default (0.02, 1), as MuJoCo does with a warning.
    """
    ref = np.array(solref, dtype=float)
    if ref.shape != (2,):
        raise ValueError(f"solref has 2 numbers, got {ref.shape}")
    if (ref[0] > 0) != (ref[1] > 0):
        ref = np.array(DEFAULT_SOLREF)
    s = _solimp(solimp)
    dmax = s[1]
    d = float(impedance(s, r))
    if ref[0] > 0:
        requested = float(ref[0])
        timeconst = max(requested, 2 * timestep) if refsafe else requested
        k = 1 / max(_MINVAL, dmax**2 * timeconst**2 * ref[1] ** 2)
        b = 2 / max(_MINVAL, dmax * timeconst)
        return Reference(float(k), float(b), d, timeconst, requested, timeconst != requested)
    k = -ref[0] / max(_MINVAL, dmax**2)
    b = -ref[1] / max(_MINVAL, dmax)
    return Reference(float(k), float(b), d, float("nan"), float("nan"), False)


def rest_penetration(
    solref: Sequence[float],
    solimp: Sequence[float],
    *,
    timestep: float,
    accel: float = 9.81,
    refsafe: bool = True,
) -> float:
    """Predict how deep (m) a body sinks into one contact while resting on it.

    At rest the row's acceleration vanishes: ``(1 - d)·a0 + d·aref = 0`` with ``a0 = -accel``
    (gravity pushing into the contact) and ``aref = k·d·δ``, so the depth δ solves
    ``k·d(δ)²·δ = (1 - d(δ))·accel``.  This is solved exactly (bisection), d's dependence on δ
    included.  Returns δ > 0; the body rests at signed distance ``margin - δ``.

    Assumes a single contact row under the centre of mass whose diagonal approximation
    equals the true inverse inertia (a sphere on a plane); several contacts, contacts away
    from the centre of mass or coupled joints change the answer.  Exact for frictionless
    and elliptic contacts; for pyramidal cones only when μ²(1 + μ²) = (condim − 1)·impratio
    (at MuJoCo's defaults μ = 1, impratio = 1: for condim 3 only), since the pyramid's
    2·(condim − 1) edges share the normal load differently otherwise; for a pyramidal
    contact pass ``accel = g·μ²(1 + μ²)/((condim − 1)·impratio)``.  With dmax < dmin the
    rest equation can have several roots; the shallowest is returned, which a simulation
    need not reach.
    """
    if accel <= 0:
        raise ValueError("accel is the acceleration pushing into the contact; it must be > 0")

    def excess(depth: float) -> float:
        ref = reference(solref, solimp, depth, timestep=timestep, refsafe=refsafe)
        return ref.k * ref.d**2 * depth - (1 - ref.d) * accel

    low, high = 0.0, 1e-6
    while excess(high) < 0:
        high *= 2
        if high > 1e6:
            raise ValueError("no resting depth below 1e6 m: the contact is too soft to hold")
    for _ in range(200):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if excess(mid) < 0 else (low, mid)
    return 0.5 * (low + high)


def rest_depths(
    solref: Sequence[float],
    solimp: Sequence[float],
    *,
    timestep: float,
    accel: float = 9.81,
    deepest: float = 1.0,
    refsafe: bool = True,
) -> list[float]:
    """Every depth (m, shallowest first) at which the rest equation of
    :func:`rest_penetration`, ``k·d(δ)²·δ = (1 - d(δ))·accel``, holds, up to ``deepest``.

    With ``dmin ≤ dmax`` there is one; an inverted solimp (``dmax < dmin``) can give three:
    the outer two stable (deeper, the contact pushes back), the middle one unstable.  Found
    on a grid of 2000 depths spaced evenly in log(δ) from 1e-9 m, each sign change refined by
    bisection (a root closer than one grid step to another can be missed).

    Example: ``rest_depths((0.02, 1), (0.9, 0.05, 0.001, 0.5, 2), timestep=0.0005)`` → about
    ``[1.2e-06, 0.00082, 0.0037]``.
    """
    if accel <= 0:
        raise ValueError("accel is the acceleration pushing into the contact; it must be > 0")

    def excess(depth: float) -> float:
        ref = reference(solref, solimp, depth, timestep=timestep, refsafe=refsafe)
        return ref.k * ref.d**2 * depth - (1 - ref.d) * accel

    grid = np.geomspace(1e-9, deepest, 2000)
    values = np.array([excess(x) for x in grid])
    roots = []
    for i in np.flatnonzero(np.sign(values[:-1]) != np.sign(values[1:])):
        low, high = grid[i], grid[i + 1]
        for _ in range(100):
            mid = 0.5 * (low + high)
            low, high = (mid, high) if np.sign(excess(mid)) == np.sign(values[i]) else (low, mid)
        roots.append(0.5 * (low + high))
    return roots


def euler_stability(
    solref: Sequence[float],
    solimp: Sequence[float],
    depth: float,
    *,
    timestep: float,
    refsafe: bool = True,
) -> tuple[float, float]:
    """The two numbers that decide whether the semi-implicit Euler step keeps a contact row
    resting at ``depth`` (m) stable: ``(h·b, h²·k + 2·h·b)``, stable exactly when the first is
    below 2 and the second below 4.

    Near the rest depth the row is the oscillator ``r̈ = -b·ṙ - k·r`` with ``b = d·B`` and
    ``k = K·d²`` (K, B, d of :func:`reference`; the terms in d'(r) are left out, exact where
    the solimp spline is flat: at r ≈ 0 and beyond the width).  One step
    ``v⁺ = v + h·(-b·v - k·r)``, ``r⁺ = r + h·v⁺`` has the matrix
    ``[[1 - h²k, h(1 - hb)], [-hk, 1 - hb]]``, of determinant ``1 - hb`` and trace
    ``2 - hb - h²k``; both eigenvalues lie inside the unit circle exactly when
    ``0 < hb < 2`` and ``h²k + 2hb < 4`` (Jury's conditions).  MuJoCo's implicit
    integrators do not treat constraint forces implicitly, so the same bounds apply to them;
    RK4 is not covered.

    Example: ``euler_stability((0.004, 0.3), (0.9, 0.95, 0.001, 0.5, 2), 1.6e-6, timestep=0.002)``
    → about ``(0.95, 4.4)``: h·b < 2, but h²·k + 2·h·b > 4, so the row is unstable.
    """
    ref = reference(solref, solimp, depth, timestep=timestep, refsafe=refsafe)
    b, k = ref.d * ref.b, ref.k * ref.d**2
    return float(timestep * b), float(timestep**2 * k + 2 * timestep * b)


@dataclass(frozen=True)
class RowTerms:
    """What the solver did for one constraint row, read off ``mjData`` (see :func:`row_terms`).

    a: the row's acceleration with the constraint, ``J·qacc``; a0: without it,
    ``J·qacc_smooth``; d: the impedance (efc_KBIP[2]); aref: efc_aref; inverse_mass: the
    row's true inverse mass ``A = J·M⁻¹·Jᵀ``; diag_approx: the engine's estimate of it,
    efc_diagA, from which it builds the regularizer ``R = (1 - d)/d·diag_approx``.
    Accelerations in m/s² (rad/s² for angular rows), inverse masses in 1/kg (or 1/(kg·m²)).
    """

    a: float
    a0: float
    d: float
    aref: float
    inverse_mass: float
    diag_approx: float


def row_terms(model: mujoco.MjModel, data: mujoco.MjData, row: int = 0) -> RowTerms:
    """The :class:`RowTerms` of constraint row ``row`` in the state of ``data`` (after
    ``mj_forward``): MuJoCo's own numbers, nothing predicted.

    Example: ``row_terms(model, data).diag_approx`` → ``1.0`` for the 1 kg sphere's contact.
    """
    import mujoco

    if not 0 <= row < data.nefc:
        raise ValueError(f"row {row} does not exist: the state has {data.nefc} constraint rows")
    if not mujoco.mj_isSparse(model):
        jac = data.efc_J.reshape(data.nefc, model.nv)[row:row + 1].copy()
    else:
        jac = np.zeros((1, model.nv))
        start = data.efc_J_rowadr[row]
        cols = data.efc_J_colind[start:start + data.efc_J_rownnz[row]]
        jac[0, cols] = data.efc_J[start:start + data.efc_J_rownnz[row]]
    solved = np.zeros_like(jac)
    mujoco.mj_solveM(model, data, solved, jac)
    return RowTerms(float(jac[0] @ data.qacc), float(jac[0] @ data.qacc_smooth), float(data.efc_KBIP[row, 2]),
                    float(data.efc_aref[row]), float(jac[0] @ solved[0]), float(data.efc_diagA[row]))


@dataclass(frozen=True)
class FactorCost:
    """The sparse Newton Hessian ``H = M + Jᵀ·D·J`` of one state and its factor, counted.

    hessian: nonzeros of H's lower triangle, diagonal included (M's pattern: every dof with
    its ancestors; plus, for each active constraint row, every pair of dofs the row touches);
    factor: nonzeros of the factor L's lower triangle after fill-in, eliminating dofs from
    the last to the first as MuJoCo does (leaves first);
    multiply_adds: Σ over eliminated dofs of s·(s + 1)/2, s the dof's remaining lower-index
    neighbours: the update work of the factorization, a machine-independent cost.
    """

    hessian: int
    factor: int
    multiply_adds: int


def factor_cost(model: mujoco.MjModel, data: mujoco.MjData) -> FactorCost:
    """Count the Newton solver's Hessian, its factor and the factorization's work for the
    state in ``data`` (after ``mj_forward`` or ``mj_step``), from the engine's sparse
    constraint Jacobian (``efc_J_colind``) and ``efc_state``; the model must use sparse
    matrices (``opt.jacobian``: sparse, or auto with 60 dofs or more). See
    :class:`FactorCost`.

    Example: ``factor_cost(model, data).multiply_adds`` → e.g. ``12083`` for 48 cubes on a tray
    written first.
    """
    import mujoco

    if not mujoco.mj_isSparse(model):
        raise ValueError("factor_cost needs sparse matrices: set model.opt.jacobian to mjJAC_SPARSE")
    nv = model.nv
    pattern = np.zeros((nv, nv), dtype=bool)
    for i in range(nv):                                  # M: a dof couples with its ancestors
        j = i
        while j >= 0:
            pattern[i, j] = True
            j = model.dof_parentid[j]
    quadratic = mujoco.mjtConstraintState.mjCNSTRSTATE_QUADRATIC
    for row in np.flatnonzero(data.efc_state[:data.nefc] == quadratic):
        start = data.efc_J_rowadr[row]
        cols = data.efc_J_colind[start:start + data.efc_J_rownnz[row]]
        pattern[np.ix_(cols, cols)] = True
    lower = np.tril(pattern | pattern.T)
    hessian, work = int(lower.sum()), 0
    for k in range(nv - 1, -1, -1):                      # eliminate the last dof first
        below = np.flatnonzero(lower[k, :k])
        lower[np.ix_(below, below)] = True
        lower = np.tril(lower)
        work += len(below) * (len(below) + 1) // 2
    return FactorCost(hessian, int(lower.sum()), work)


def iterations_to(model: mujoco.MjModel, data: mujoco.MjData, residual: float, *,
                  most: int = 500) -> int | None:
    """The fewest solver iterations after which the constraint forces of the state in ``data``
    satisfy the inverse dynamics to within ``residual`` (``solver_fwdinv[1]``, N), solved
    from a cold start with the model's own solver; None if ``most`` iterations do not get
    there.  ``model.opt`` is restored afterwards; ``data`` holds the last solve.

    Equal accuracy, not equal ``tolerance``: Newton, CG and PGS test different quantities
    against ``tolerance``, so their iterations at one tolerance are not comparable.

    Example: ``iterations_to(model, data, 1e-6)`` → e.g. ``1`` for Newton on a small stack.
    """
    import mujoco

    saved = (model.opt.iterations, model.opt.tolerance, model.opt.disableflags, model.opt.enableflags)
    model.opt.tolerance = 0.0                            # run exactly the iterations allowed
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_WARMSTART
    model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_FWDINV
    try:
        for k in range(1, most + 1):
            model.opt.iterations = k
            mujoco.mj_forward(model, data)
            mujoco.mj_compareFwdInv(model, data)
            if data.solver_fwdinv[1] < residual:
                return k
        return None
    finally:
        model.opt.iterations, model.opt.tolerance, model.opt.disableflags, model.opt.enableflags = saved
