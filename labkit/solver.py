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

:func:`rest_penetration` predicts how deep a body rests in a contact from these formulas
(one row, or several sharing the load equally); :func:`rest_prediction` predicts every
contact of a settled body, the load shared out by the body's statics (stacks, unequal
shares, jointed props).

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

__all__ = ["MAXIMP", "MINIMP", "FactorCost", "Reference", "RestPrediction", "RowTerms", "euler_stability",
           "factor_cost", "impedance", "impedance_figure", "iterations_to", "reference", "rest_depths",
           "rest_penetration", "rest_prediction", "row_terms", "solimp_figure"]

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
    contacts: int = 1,
) -> float:
    """Predict how deep (m) a body sinks into a contact while resting on it.

    At rest every active row's acceleration vanishes, so its reference acceleration equals
    ``R·f`` (R = (1 - d)/d·efc_diagA, f the row's force); with ``aref = k·d·δ`` the depth δ
    solves ``k·d(δ)²·δ = (1 - d(δ))·accel``, where ``accel = efc_diagA·f`` (m/s²) is the
    row's load.  This is solved exactly (bisection), d's dependence on δ included.  Returns
    δ > 0; the body rests at signed distance ``margin - gap - δ``.

    ``contacts``: the number of contacts that share the load equally; the row's load is then
    ``accel / contacts``.  The default ``accel = g`` with ``contacts = 1`` is one frictionless
    or elliptic contact under the centre of mass of a free body (efc_diagA = 1/m, f = m·g: a
    sphere on a plane).  A free body on n contacts with one solref/solimp whose centre of
    mass lies above their centroid shares its weight equally: ``contacts = n`` (efc_diagA of
    each contact row is 1/m too: MuJoCo's estimate ignores the lever arm).  Exact for
    frictionless and elliptic contacts; a pyramidal contact's 2·(condim − 1) edge rows share
    its normal force, each with the regularized efc_diagA, so for it pass
    ``accel = g·μ²(1 + μ²)/((condim − 1)·impratio)`` (μ = 1, impratio = 1, condim 3: g).
    Unequal shares, contacts whose normals are not vertical, jointed bodies and stacks:
    :func:`rest_prediction` solves those from a settled simulation.  With dmax < dmin the
    rest equation can have several roots; the shallowest is returned, which a simulation
    need not reach.
    """
    if accel <= 0:
        raise ValueError("accel is the acceleration pushing into the contact; it must be > 0")
    if isinstance(contacts, bool) or not isinstance(contacts, int | np.integer) or contacts < 1:
        raise ValueError(f"contacts is the number of contacts sharing the load, a whole number "
                         f"≥ 1; got {contacts!r}")
    accel = accel / int(contacts)

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


@dataclass(frozen=True)
class RestPrediction:
    """What :func:`rest_prediction` predicted for one body at rest, contact by contact.

    body: the body's name; contacts: how many active contacts it has (``data.contact``
    entries with ``exclude == 0`` that involve its geoms or those welded to it), the length
    of every array below; pairs: their geom names; predicted: the depth
    ``includemargin - dist`` (m, shape (contacts,)) the rest equations predict, ≤ 0 where
    the contact carries nothing; measured: the same depth read from ``data.contact`` (m);
    force: the predicted normal force (N) of each contact on the body; share: force over
    the body's own weight (a stack's lower body carries more than 1 in all); weight: the
    body's weight (N, its weld group's mass times |gravity|); condim: each contact's
    dimensionality; cone: ``"pyramidal"`` or ``"elliptic"``, the model's (condim-1 contacts
    are frictionless under either); rows: each contact's constraint rows (1 frictionless,
    condim elliptic, 2·(condim − 1) pyramidal); inverse_mass: the ``efc_diagA`` of the rows
    that carry the normal force, divided by how many share it (pyramidal edges), 1/kg;
    stack: the bodies solved together (the body and every free-standing body it touches,
    directly or through others); speed: the largest rate (m/s) at which one of the stack's
    contacts opens or closes in ``data`` (``J·qvel``), 0 at rest, so how far from rest the
    depths were (a ball rolling on a plane is at rest for its depth).
    """

    body: str
    contacts: int
    pairs: tuple[tuple[str, str], ...]
    predicted: np.ndarray
    measured: np.ndarray
    force: np.ndarray
    share: np.ndarray
    weight: float
    condim: np.ndarray
    cone: str
    rows: np.ndarray
    inverse_mass: np.ndarray
    stack: tuple[str, ...]
    speed: float

    def text(self) -> str:
        """One line per contact: its pair, predicted and measured depth (mm), force (N), share.

        Example: ``print(rest_prediction(model, data, "brick").text())``.
        """
        lines = [f"body {self.body!r} rests on {self.contacts} contact(s) ({self.cone} cone, "
                 f"weight {self.weight:.4g} N; solved with: {', '.join(self.stack)})"]
        for k, (g1, g2) in enumerate(self.pairs):
            lines.append(f"  {g1} / {g2}: predicted {1e3 * self.predicted[k]:.6g} mm, measured "
                         f"{1e3 * self.measured[k]:.6g} mm, force {self.force[k]:.4g} N "
                         f"({self.share[k]:.3g} of the weight), condim {self.condim[k]}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class _RestLaws:
    """Every contact's rest equation ``k·d(δ)²·δ = (1 - d(δ))·inverse_mass·N``, for N, at once.

    k, inverse_mass: (n,); solimp: (n, 5), clamped as the engine clamps it.  Vectorized over
    the contacts (a Newton solve evaluates them thousands of times)."""

    k: np.ndarray
    solimp: np.ndarray
    inverse_mass: np.ndarray

    def _impedance(self, x: np.ndarray) -> np.ndarray:
        """d at depths x (n, ...) ≥ 0: :func:`impedance`, one solimp per row."""
        shape = (-1,) + (1,) * (x.ndim - 1)
        dmin, dmax, width, mid, p = (self.solimp[:, i].reshape(shape) for i in range(5))
        flat = (dmin == dmax) | (width <= _MINVAL)
        u = x / np.where(flat, 1.0, width)
        y = np.where(u <= mid, u**p / mid ** (p - 1),
                     1 - np.clip(1 - u, 0, None) ** p / (1 - mid) ** (p - 1))
        y = np.where(u >= 1, 1.0, np.where(u <= 0, 0.0, y))
        return np.where(flat, 0.5 * (dmin + dmax), dmin + y * (dmax - dmin))

    def force(self, depth: np.ndarray) -> np.ndarray:
        """The normal forces (N) at depths (n,) or (n, m) (m); 0 where δ ≤ 0."""
        x = np.maximum(np.asarray(depth, dtype=float), 0.0)
        d = self._impedance(x)
        shape = (-1,) + (1,) * (x.ndim - 1)
        return self.k.reshape(shape) * d**2 * x / ((1 - d) * self.inverse_mass.reshape(shape))

    def energy(self, depth: np.ndarray) -> float:
        """Σ ∫₀^δ N(s) ds (J) over the contacts: Gauss-Legendre on each smooth piece of the
        solimp spline (0 to the midpoint, to the width, beyond; a piece past δ is empty)."""
        x = np.maximum(np.asarray(depth, dtype=float), 0.0)
        width, mid = self.solimp[:, 2], self.solimp[:, 2] * self.solimp[:, 3]
        knots = np.stack([np.zeros_like(x), np.minimum(mid, x), np.minimum(width, x), x], axis=1)
        total = 0.0
        for a, b in ((knots[:, 0], knots[:, 1]), (knots[:, 1], knots[:, 2]),
                     (knots[:, 2], knots[:, 3])):
            half = 0.5 * (b - a)
            nodes = half[:, None] * _GAUSS_X[None, :] + (0.5 * (a + b))[:, None]
            total += float(np.sum(half * (self.force(nodes) @ _GAUSS_W)))
        return total


# 20 Gauss-Legendre nodes: exact for polynomials of degree 39 on each smooth piece
_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(20)


def _label(model: mujoco.MjModel, kind: str, index: int) -> str:
    return getattr(model, kind)(index).name or f"#{index}"


def _free_standing(model: mujoco.MjModel, weld: int, asked: str) -> None:
    """Raise ValueError, naming the body, unless weld group ``weld`` is free-standing
    (``asked``: the body the caller asked about, named when it is another one)."""
    label = _label(model, "body", weld)
    who = f"{label!r}" + ("" if label == asked else f" (in contact with {asked!r})")
    first = int(model.body_dofadr[weld])
    if model.dof_parentid[first] >= 0:
        parent = _label(model, "body", int(model.dof_bodyid[model.dof_parentid[first]]))
        raise ValueError(f"body {who} hangs from jointed body {parent!r}: rest_prediction "
                         "covers free-standing bodies (joints of their own, attached to the "
                         "world), whose load is their own weight")
    for child in range(weld + 1, model.nbody):
        up = child
        while up > weld:
            up = int(model.body_parentid[up])
        if up == weld and model.body_weldid[child] != weld:
            child_label = _label(model, "body", child)
            raise ValueError(f"body {who} carries jointed body {child_label!r}: "
                             "rest_prediction covers rigid bodies (the child's joint would share "
                             "the load)")
    if model.body_gravcomp[weld]:
        raise ValueError(f"body {who} has gravcomp: part of its weight is cancelled")


def _welds(model: mujoco.MjModel, contact: object) -> tuple[int, int]:
    """The weld groups (body ids) of a contact's two geoms; -1 for a side that is a flex (its
    geom id is -1: the contact is with a flex's vertices or elements)."""
    geoms = [contact.geom1, contact.geom2]  # type: ignore[attr-defined]
    return tuple(int(model.body_weldid[model.geom_bodyid[g]]) if g >= 0 else -1  # type: ignore[return-value]
                 for g in geoms)


def _stack(model: mujoco.MjModel, data: mujoco.MjData, root: int, asked: str) -> list[int]:
    """``root`` and the weld groups with degrees of freedom it touches, directly or through
    others, through active contacts; each checked by :func:`_free_standing`."""
    stack, todo = [root], [root]
    while todo:
        weld = todo.pop()
        _free_standing(model, weld, asked)
        for i in range(data.ncon):
            ends = _welds(model, data.contact[i])
            if data.contact[i].exclude or weld not in ends:
                continue
            other = ends[1] if ends[0] == weld else ends[0]
            if other >= 0 and other not in stack and model.body_dofnum[other] > 0:
                stack.append(other)
                todo.append(other)
    return stack


def _row_jacobian(model: mujoco.MjModel, data: mujoco.MjData, row: int) -> np.ndarray:
    """Row ``row`` of efc_J, dense, shape (nv,)."""
    import mujoco

    if not mujoco.mj_isSparse(model):
        return data.efc_J.reshape(data.nefc, model.nv)[row].copy()
    dense = np.zeros(model.nv)
    start, count = data.efc_J_rowadr[row], data.efc_J_rownnz[row]
    dense[data.efc_J_colind[start:start + count]] = data.efc_J[start:start + count]
    return dense


def _no_other_load(model: mujoco.MjModel, data: mujoco.MjData, dofs: np.ndarray, name: str) -> None:
    """Raise ValueError if a joint limit, tendon limit or equality row pushes on ``dofs``."""
    import mujoco

    kinds = {int(mujoco.mjtConstraint.mjCNSTR_EQUALITY): ("equality", "equality"),
             int(mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT): ("joint limit", "joint"),
             int(mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON): ("tendon limit", "tendon")}
    for row in range(data.nefc):
        kind = kinds.get(int(data.efc_type[row]))
        if kind and data.efc_force[row] and np.any(_row_jacobian(model, data, row)[dofs]):
            element = _label(model, kind[1], int(data.efc_id[row]))
            raise ValueError(f"a {kind[0]} ({element!r}) pushes on {name!r} too: it carries part "
                             "of the load, which rest_prediction leaves to the contacts alone")


def _load(model: mujoco.MjModel, data: mujoco.MjData, stack: list[int],
          dofs: np.ndarray) -> np.ndarray:
    """The generalized force (N or N·m) on ``dofs`` that the contacts must carry at rest:
    gravity on every body of the stack's weld groups (``mj_jacBodyCom``), joint springs,
    actuators and applied forces (``qfrc_applied``, ``xfrc_applied``); not the forces that
    depend on velocity (damping, Coriolis, fluid), which vanish at rest."""
    import mujoco

    total = data.qfrc_spring + data.qfrc_actuator + data.qfrc_applied
    jacp = np.zeros((3, model.nv))
    for b in range(model.nbody):
        if model.body_weldid[b] in stack:
            mujoco.mj_jacBodyCom(model, data, jacp, None, b)
            total = total + model.body_mass[b] * (jacp.T @ model.opt.gravity)
            if np.any(data.xfrc_applied[b]):
                mujoco.mj_applyFT(model, data, data.xfrc_applied[b, :3], data.xfrc_applied[b, 3:],
                                  data.xipos[b], b, total)
    return np.asarray(total)[dofs].copy()


def rest_prediction(model: mujoco.MjModel, data: mujoco.MjData, body: int | str) -> RestPrediction:
    """Predict the depth of every contact of a settled body from MuJoCo's rest equations.

    The caller settles the body first (``mj_step`` until it rests; then ``mj_forward``, or
    not: after ``mj_step`` the contacts and kinematics still belong to one state).  ``body``
    (name or id) may be any body of a rigid group; its contacts are those of its geoms and of
    the bodies welded to it.  Returns a :class:`RestPrediction` (SI units).

    **The rest equation.** At rest each active row has zero acceleration, so its reference
    acceleration equals ``R·f``; with ``aref = k·d(δ)·δ`` and ``R = (1 - d)/d·efc_diagA``,
    ``k·d(δ)²·δ = (1 - d(δ))·efc_diagA·f``: :func:`rest_penetration` with
    ``accel = efc_diagA·f``.  k and d(δ) come from the contact's mixed solref/solimp (from
    ``data.contact``), the model's timestep and refsafe flag (:func:`reference`);
    efc_diagA from ``data``, as ``mj_makeImpedance`` leaves it (built from the bodies'
    ``body_invweight0``, the friction and impratio; it does not depend on the depth).  A
    frictionless (condim 1) or elliptic contact carries its normal force N in one row
    (f = N); a pyramidal one in 2·(condim − 1) edge rows with one R and one aref, so each
    carries f = N / (2·(condim − 1)) and the friction they add up to is 0.

    **The load share.** The depths of a rigid body's contacts move together,
    ``δ = δ₀ - J·dq`` for a small motion dq of its degrees of freedom (J: the contacts'
    normal Jacobians at the settled pose, ``mj_jac``).  The prediction is the dq at which the
    normal forces alone balance the load L, ``Jᵀ·N(δ) = -L`` (gravity on the stack's bodies,
    ``mj_jacBodyCom``, plus joint springs, actuators and applied forces; not damping), the
    minimum of the convex energy Σ∫N dδ minus the load's work (Newton's method).  Of the
    measured depths δ₀ only the part no rigid motion can change enters (0 for coplanar
    contacts, such as a box's corners on a plane), so the shares are predicted, not read
    back: equal where the centre of mass lies above the contacts' centroid and they have the
    same parameters, by the lever rule otherwise.  Moving bodies it touches (a box on a
    box) are solved with it (``stack``).

    **Scope.** Exact, to the solver's tolerance, for a state at rest, for frictionless, pyramidal
    and elliptic contacts of any condim, standard or direct solref, margin and gap, on
    free-standing rigid bodies: each has joints of its own attached to the world (a free
    joint, or slides and hinges such as dm_control's planar props), no jointed children and
    no gravcomp, and only contacts hold it.  Where that fails it raises ValueError saying
    why: a body without degrees of freedom or without active contacts; one hanging from
    jointed parents or carrying jointed children (their joints share the load); an active
    joint limit, tendon limit or equality on it (it carries load too); no gravity; a load
    the normal forces cannot balance (an incline or a sideways push: MuJoCo's soft friction
    holds no load at rest, the body creeps, so there is no rest depth; or a centre of mass
    outside the contacts); an inverted solimp (dmax < dmin: several rest depths, see
    :func:`rest_depths`).  The integrator does not matter once the state is at rest (Euler,
    implicitfast and RK4 all stop where the accelerations vanish), nor does noslip (at rest
    the friction forces it would correct are 0).  A state that has not settled (a body that
    still bounces or jitters: ``speed`` well above 0) gets the depths it would rest at.

    Example: ``rest_prediction(model, data, "brick").predicted`` → four depths, m, for a
    brick resting on its base's four corners.
    """
    __tracebackhide__ = True
    import mujoco

    from .models import element_id

    b = element_id(model, "body", body) if isinstance(body, str) else int(body)
    if not 0 <= b < model.nbody:
        raise KeyError(f"body id {b} is out of range (nbody = {model.nbody})")
    name, root = _label(model, "body", b), int(model.body_weldid[b])
    if model.body_dofnum[root] == 0:
        raise ValueError(f"body {name!r} has no degrees of freedom (it is welded to the world or "
                         "is a mocap body): it does not rest on anything, nothing sinks")
    gravity_off = model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY
    if not np.any(model.opt.gravity) or gravity_off:
        raise ValueError("gravity is zero or disabled: nothing presses a body into its contacts")
    stack = _stack(model, data, root, name)
    dofs = np.concatenate([model.body_dofadr[w] + np.arange(model.body_dofnum[w])
                           for w in stack]).astype(int)
    cons = [i for i in range(data.ncon)
            if not data.contact[i].exclude and set(_welds(model, data.contact[i])) & set(stack)]
    mine = [k for k, i in enumerate(cons) if root in _welds(model, data.contact[i])]
    if any(-1 in _welds(model, data.contact[i]) for i in cons):
        raise ValueError(f"{name!r} touches a flex: the rest equations here cover rigid geoms "
                         "only (a flex deforms under the load, and its contacts name no geom)")
    if not mine:
        raise ValueError(f"body {name!r} has no active contact in data.contact: settle it on its "
                         "support first (mj_step until it rests), then ask again")
    _no_other_load(model, data, dofs, name)
    pyramidal = model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
    refsafe = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE

    n = len(cons)
    jac, measured = np.zeros((n, dofs.size)), np.zeros(n)
    rows, condim = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    stiffness, solimps, inverse_masses, pairs = [], [], [], []
    point, both = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    for k, i in enumerate(cons):
        contact = data.contact[i]
        pair = (_label(model, "geom", contact.geom1), _label(model, "geom", contact.geom2))
        both[:] = 0
        for sign, g in ((-1.0, contact.geom1), (1.0, contact.geom2)):
            mujoco.mj_jac(model, data, point, None, contact.pos, model.geom_bodyid[g])
            both += sign * point
        jac[k] = (contact.frame[:3] @ both)[dofs]        # how fast the contact opens, per dof
        measured[k] = contact.includemargin - contact.dist
        condim[k] = int(contact.dim)
        rows[k] = 2 * (condim[k] - 1) if pyramidal and condim[k] > 1 else condim[k]
        solimp = _solimp(contact.solimp)
        if solimp[1] < solimp[0] and solimp[2] > _MINVAL:
            raise ValueError(f"contact {pair[0]} / {pair[1]} has an inverted solimp (dmax "
                             f"{solimp[1]:g} < dmin {solimp[0]:g}): its rest equation can have "
                             "several roots (see solver.rest_depths), so no one depth is predicted")
        shared = rows[k] if pyramidal else 1
        k_ref = reference(contact.solref, solimp, timestep=model.opt.timestep, refsafe=refsafe).k
        stiffness.append(k_ref)
        solimps.append(solimp)
        inverse_masses.append(float(data.efc_diagA[contact.efc_address]) / shared)
        pairs.append(pair)

    load = _load(model, data, stack, dofs)
    scale = float(np.abs(load).max())
    balance = np.linalg.lstsq(jac.T, -load, rcond=None)[0]
    if np.abs(jac.T @ balance + load).max() > 1e-6 * scale:
        raise ValueError(f"the normal forces of {name!r}'s contacts cannot balance its load (an "
                         "incline, or a sideways push): friction would have to carry part of it, "
                         "and MuJoCo's soft friction holds no load at rest (the body creeps), so "
                         "there is no rest depth to predict")
    load = -jac.T @ balance     # without the residue (< 1e-6 of it) that no contact can carry
    # only the part of the measured depths that no rigid motion can change is kept
    base = measured - jac @ np.linalg.lstsq(jac, measured, rcond=None)[0]

    laws = _RestLaws(np.array(stiffness), np.array(solimps).reshape(-1, 5),
                     np.array(inverse_masses))
    forces = laws.force

    def energy(dq: np.ndarray) -> float:
        return laws.energy(base - jac @ dq) - float(load @ dq)

    # each contact's stiffness at zero depth scales a damping term that keeps the first Newton
    # steps well posed while no contact is loaded yet; it shrinks tenfold each step
    soft = forces(np.full(n, 1e-12)) / 1e-12
    dq, damping = np.zeros(dofs.size), 1e-2
    for _ in range(200):
        depth = base - jac @ dq
        gradient = -(jac.T @ forces(depth)) - load
        if np.abs(gradient).max() <= 1e-10 * scale:     # N: roundoff is ~1e-12 of the load
            break
        h = np.maximum(1e-12, 1e-6 * np.abs(depth))
        slope = (forces(depth + h) - forces(depth - h)) / (2 * h)
        step = np.linalg.lstsq(jac.T @ ((slope + damping * soft)[:, None] * jac), -gradient,
                               rcond=1e-14)[0]
        now, worst = energy(dq), np.abs(gradient).max()
        for _ in range(60):     # halve the step until the energy (near roundoff: residual) falls
            trial = base - jac @ (dq + step)
            if (energy(dq + step) < now
                    or np.abs(jac.T @ forces(trial) + load).max() < worst):
                break
            step = step / 2
        else:  # no step along Newton's direction helps: no equilibrium to converge to
            break
        dq, damping = dq + step, damping / 10
    gradient = -(jac.T @ forces(base - jac @ dq)) - load
    if np.abs(gradient).max() > 1e-10 * scale:
        raise ValueError(f"the rest equations of {name!r} have no equilibrium: its centre of mass "
                         "may lie outside its contacts (it would tip over)")
    depth = base - jac @ dq
    normal = forces(depth)
    mass = sum(model.body_mass[i] for i in range(model.nbody) if model.body_weldid[i] == root)
    weight = float(mass * np.linalg.norm(model.opt.gravity))
    return RestPrediction(
        body=name, contacts=len(mine), pairs=tuple(pairs[k] for k in mine),
        predicted=depth[mine], measured=measured[mine], force=normal[mine],
        share=normal[mine] / weight if weight > 0 else np.full(len(mine), np.nan), weight=weight,
        condim=condim[mine], cone="pyramidal" if pyramidal else "elliptic", rows=rows[mine],
        inverse_mass=laws.inverse_mass[mine],
        stack=tuple(_label(model, "body", w) for w in stack),
        speed=float(np.abs(jac @ data.qvel[dofs]).max()))


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
