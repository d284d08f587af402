"""Who collides with whom, and with what force.

``why(model, geom1, geom2)`` answers "can these two geoms ever produce a contact?" by
applying, in order, the rules of MuJoCo's collision pipeline (``mj_collision`` and its
broad-phase filters in engine_collision_driver.c): global disable flags, explicit
``<pair>`` elements, then the filters on *weld groups* (``body_weldid``: a body and the
jointless bodies welded to it): same group, two groups without degrees of freedom (a mocap
body against static geometry), parent and child groups (never when one group is the
world's), ``<exclude>``, and the contype/conaffinity bitmasks, or the ``mjcb_contactfilter``
callback where one is installed (it replaces the per-geom bitmask test; the test on each
body's combined masks still runs first).  ``<exclude>`` names bodies, not weld groups, and
the bitmasks belong to geoms.  An explicit pair skips these filters, but one whose geoms
cannot move relative to each other (one weld group, or two groups without degrees of
freedom) is still listed with ``exclude = 3`` and never pushes (:attr:`Verdict.pushes`).
Pairs of types that MuJoCo has no collision function for (plane-plane, plane-hfield,
hfield-hfield) never collide, explicit pairs included.
Whether a contact actually appears then depends only on geometry: the geoms must come
within margin + gap, and it acts within the margin (a contact of a geom with ``adhesion``
acts in the gap too, and may pull).

``table(model, data)`` lists every contact in ``data.contact`` with geom names, distance,
position, normal and the forces from ``mj_contactForce``; when some of them do not act
(``contact.exclude`` ≠ 0: in the gap, or without degrees of freedom), an ``exclude`` column
says which.  ``pairs(model, data)`` gives their geom-name pairs (``active=True``: only those
that act).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .display import clean, fmt
from .models import element_id

if TYPE_CHECKING:
    import mujoco

__all__ = ["EXCLUDE", "ContactRow", "ContactTable", "Verdict", "geom_id", "mask_bits", "pairs", "table",
           "why"]


@dataclass(frozen=True)
class Verdict:
    """The answer of :func:`why`.

    collides: whether the pair can ever produce a contact in ``data.contact`` (given close
    enough geometry);
    rule: the decisive rule, a short name (``"pair"``, ``"bitmask"``, ``"parent-child"``, ...);
    reasons: every rule that was checked, in pipeline order, in words;
    pushes: whether such a contact can ever act (get constraint rows and force): false for a
    pair that never collides, and for an explicit ``<pair>`` whose geoms cannot move relative
    to each other, which MuJoCo lists with ``exclude = 3`` (default: ``collides``).
    """

    collides: bool
    rule: str
    reasons: tuple[str, ...]
    pushes: bool | None = None

    def __post_init__(self) -> None:
        if self.pushes is None:
            object.__setattr__(self, "pushes", self.collides)

    def text(self) -> str:
        """The verdict and every reason, one per line.

        Example: ``print(why(model, "ball", "floor").text())`` → ``can collide (decided by: bitmask)...``.
        """
        head = ("never collide" if not self.collides else "can collide" if self.pushes
                else "listed in data.contact, but never pushes")
        return "\n".join([f"{head} (decided by: {self.rule})", *(f"  - {r}" for r in self.reasons)])

    def __repr__(self) -> str:
        return self.text()

    def __bool__(self) -> bool:
        return self.collides


def mask_bits(mask: int) -> list[int]:
    """The bits set in a ``contype``/``conaffinity`` mask, numbered from 1 as the course
    counts them (bit ``n`` has the value 2**(n − 1)); MuJoCo's masks are 32-bit ints.

    Example: ``mask_bits(5)`` is ``[1, 3]``."""
    return [n + 1 for n in range(32) if int(mask) >> n & 1]


def geom_id(model: mujoco.MjModel, geom: int | str) -> int:
    """The id of ``geom``, a geom name or id; an unknown name raises ``KeyError`` listing the
    model's geoms (:func:`labkit.models.element_id`), an id outside ``[0, ngeom)`` one naming
    ``ngeom``.

    Example: ``geom_id(model, "floor")`` → the floor's id; ``geom_id(model, 0)`` → ``0``.
    """
    __tracebackhide__ = True
    if isinstance(geom, str):
        return element_id(model, "geom", geom)
    if not 0 <= geom < model.ngeom:
        raise KeyError(f"geom id {geom} is out of range (ngeom = {model.ngeom})")
    return int(geom)


def _label(model: mujoco.MjModel, kind: str, index: int) -> str:
    name = getattr(model, kind)(index).name
    return f"{kind} {name!r}" if name else f"{kind} #{index}"


def why(model: mujoco.MjModel, geom1: int | str, geom2: int | str,
        data: mujoco.MjData | None = None) -> Verdict:
    """Can ``geom1`` and ``geom2`` (names or ids) ever produce a contact? See module doc.

    Returns a :class:`Verdict`, true when they can; unknown geoms raise ``KeyError``
    (:func:`geom_id`).  ``data`` is used only when an ``mjcb_contactfilter`` callback is
    installed: the callback is then asked about the pair with it (default: a fresh
    ``MjData``), as ``mj_collision`` would.

    Example: ``why(model, "ball", "floor").rule`` → e.g. ``"bitmask"``.
    """
    __tracebackhide__ = True
    import mujoco

    g1, g2 = geom_id(model, geom1), geom_id(model, geom2)
    a, b = _label(model, "geom", g1), _label(model, "geom", g2)
    reasons: list[str] = []
    disabled = model.opt.disableflags
    flags = mujoco.mjtDisableBit
    for flag, what in ((flags.mjDSBL_CONSTRAINT, "constraint"), (flags.mjDSBL_CONTACT, "contact")):
        if disabled & flag:
            reasons.append(f"<option><flag {what}='disable'/> turns off all contacts")
            return Verdict(False, "disabled", tuple(reasons))
    if g1 == g2:
        return Verdict(False, "same geom", (f"{a} is one geom: a geom never collides with itself",))
    if model.nbody + model.nflex < 2:
        return Verdict(False, "disabled", ("the model has only the world body and no flex: "
                                           "mj_collision returns at once, explicit pairs included",))
    pairs = [i for i in range(model.npair)
             if {int(model.pair_geom1[i]), int(model.pair_geom2[i])} == {g1, g2}]
    if pairs:
        reasons.append(f"an explicit <pair> ({_label(model, 'pair', pairs[0])}) lists {a} and {b}: "
                       "explicit pairs bypass the filters below")
        missing = _no_collider(model, g1, g2)
        if missing:
            reasons.append(missing)
            return Verdict(False, "no collision function", tuple(reasons))
        weld1 = int(model.body_weldid[model.geom_bodyid[g1]])
        weld2 = int(model.body_weldid[model.geom_bodyid[g2]])
        if weld1 == weld2 or (model.body_dofnum[weld1] == 0 and model.body_dofnum[weld2] == 0):
            reasons.append("but neither geom can move relative to the other (one weld group, or two "
                           "groups without degrees of freedom), so MuJoCo lists the contact as "
                           "excluded (contact.exclude = 3): it gets no constraint rows and never pushes")
            return Verdict(True, "pair", tuple(reasons), pushes=False)
        return Verdict(True, "pair", tuple(reasons))
    reasons.append("no explicit <pair> lists them, so the automatic filters decide")
    b1, b2 = int(model.geom_bodyid[g1]), int(model.geom_bodyid[g2])
    w1, w2 = int(model.body_weldid[b1]), int(model.body_weldid[b2])
    if b1 == b2:
        reasons.append(f"both belong to {_label(model, 'body', b1)}: geoms of one body never collide")
        return Verdict(False, "same body", tuple(reasons))
    if w1 == w2:
        reasons.append(f"{_label(model, 'body', b1)} and {_label(model, 'body', b2)} are welded "
                       f"together (no joint between them, both move as {_label(model, 'body', w1)})")
        return Verdict(False, "same weld", tuple(reasons))
    if model.body_dofnum[w1] == 0 and model.body_dofnum[w2] == 0:
        reasons.append("neither weld group has a degree of freedom (both are welded to the world, or "
                       "are mocap bodies): no force could act, so the pair is skipped")
        return Verdict(False, "both static", tuple(reasons))
    parent1 = int(model.body_weldid[model.body_parentid[w1]])
    parent2 = int(model.body_weldid[model.body_parentid[w2]])
    if w1 != 0 and w2 != 0 and (w1 == parent2 or w2 == parent1):
        if disabled & flags.mjDSBL_FILTERPARENT:
            reasons.append("parent and child, but <flag filterparent='disable'/> keeps the pair")
        else:
            reasons.append(f"{_label(model, 'body', w1)} and {_label(model, 'body', w2)} are parent "
                           "and child in the kinematic tree (as weld groups: jointless bodies count as "
                           "part of the body they are welded to): such pairs are filtered out "
                           "(add a <pair> to collide them, or disable filterparent)")
            return Verdict(False, "parent-child", tuple(reasons))
    elif 0 in (w1, w2) and (w1 == parent2 or w2 == parent1):
        reasons.append("one weld group is the child of the other, but one of them is the world's "
                       "(static): the parent-child filter never applies to the world, so it does "
                       "not remove this pair")
    else:
        reasons.append("not parent and child")
    for i in range(model.nexclude):
        bodies = (int(model.exclude_signature[i]) >> 16, int(model.exclude_signature[i]) & 0xFFFF)
        if set(bodies) == {b1, b2}:
            reasons.append(f"an <exclude> names {_label(model, 'body', b1)} and "
                           f"{_label(model, 'body', b2)}")
            return Verdict(False, "exclude", tuple(reasons))
    reasons.append("no <exclude> names their bodies")
    callback = mujoco.get_mjcb_contactfilter()
    if callback is not None:
        t1, c1 = int(model.body_contype[b1]), int(model.body_conaffinity[b1])
        t2, c2 = int(model.body_contype[b2]), int(model.body_conaffinity[b2])
        if not (t1 & c2) and not (t2 & c1):
            reasons.append(f"the bodies' combined bitmasks (each the OR of its geoms' masks: contype {t1} "
                           f"& conaffinity {c2}, contype {t2} & conaffinity {c1}) share no bit: filtered "
                           "out before any contact filter callback is asked")
            return Verdict(False, "bitmask", tuple(reasons))
        zero = [g for g in (g1, g2) if not model.geom_contype[g] and not model.geom_conaffinity[g]]
        single = model.body_geomnum[b1] == model.body_geomnum[b2] == 1
        midphase = (not disabled & flags.mjDSBL_MIDPHASE and not single
                    and model.body_bvhadr[b1] >= 0 and model.body_bvhadr[b2] >= 0)
        if zero and midphase:
            reasons.append(f"{_label(model, 'geom', zero[0])} has contype = conaffinity = 0: it is left out "
                           "of its body's bounding-volume tree, so no contact filter callback is asked")
            return Verdict(False, "bitmask", tuple(reasons))
        if callback(model, mujoco.MjData(model) if data is None else data, g1, g2):
            reasons.append("the installed mjcb_contactfilter callback returns nonzero: filtered out "
                           "(it replaces the per-geom bitmask test)")
            return Verdict(False, "contactfilter", tuple(reasons))
        reasons.append("the installed mjcb_contactfilter callback returns 0: it keeps the pair "
                       "(it replaces the per-geom bitmask test)")
        rule = "contactfilter"
    else:
        t1, c1 = int(model.geom_contype[g1]), int(model.geom_conaffinity[g1])
        t2, c2 = int(model.geom_contype[g2]), int(model.geom_conaffinity[g2])
        test = f"contype {t1} & conaffinity {c2} = {t1 & c2}, contype {t2} & conaffinity {c1} = {t2 & c1}"
        if not (t1 & c2) and not (t2 & c1):
            reasons.append(f"bitmasks share no bit ({test}): filtered out")
            return Verdict(False, "bitmask", tuple(reasons))
        reasons.append(f"bitmasks are compatible ({test})")
        rule = "bitmask"
    missing = _no_collider(model, g1, g2)
    if missing:
        reasons.append(missing)
        return Verdict(False, "no collision function", tuple(reasons))
    return Verdict(True, rule, tuple(reasons))


def _no_collider(model: mujoco.MjModel, g1: int, g2: int) -> str | None:
    """Why MuJoCo has no collision function for the types of geoms g1 and g2, or None.

    MuJoCo's table of narrow-phase functions (``mjCOLLISIONFUNC`` in
    engine_collision_driver.c) has no entry for plane-plane, plane-hfield and hfield-hfield:
    such pairs never produce a contact, explicit pairs included."""
    import mujoco

    flat = {int(mujoco.mjtGeom.mjGEOM_PLANE): "plane", int(mujoco.mjtGeom.mjGEOM_HFIELD): "hfield"}
    t1, t2 = flat.get(int(model.geom_type[g1])), flat.get(int(model.geom_type[g2]))
    if t1 and t2:
        return f"MuJoCo has no {t1}-{t2} collision function: such a pair never produces a contact"
    return None


EXCLUDE = {0: "active", 1: "in the gap", 2: "fused", 3: "no dofs", 4: "passive"}
"""MuJoCo's ``mjContact.exclude`` codes (mjdata.h): 0 enters the constraint solver; the
others are listed but get no constraint rows and no force."""


@dataclass(frozen=True)
class ContactRow:
    """One contact of ``data.contact``: geom names, distance (m, < 0 when penetrating),
    position (m, world, shape (3,)), normal (unit, world, from geom1 to geom2, shape (3,)),
    normal force (N, ≥ 0 except for an adhesive contact, which may pull), tangential force
    (N, in the contact frame's two tangent directions, shape (2,)), condim, whether the
    contact is excluded from the constraint solver, and
    MuJoCo's ``contact.exclude`` code (:data:`EXCLUDE`; 0 when it acts)."""

    geom1: str
    geom2: str
    dist: float
    pos: np.ndarray
    normal: np.ndarray
    normal_force: float
    friction_force: np.ndarray
    condim: int
    excluded: bool
    exclude: int = 0

    @property
    def active(self) -> bool:
        """Whether the contact enters the constraint solver (``exclude == 0``)."""
        return not self.excluded


@dataclass
class ContactTable:
    """The contacts of one state, as returned by :func:`table`; iterable over rows."""

    rows: list[ContactRow] = field(default_factory=list)

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def _all_active(self) -> bool:
        return all(row.active for row in self.rows)

    def _cells(self, row: ContactRow) -> list[str]:
        cells = [row.geom1, row.geom2, fmt(row.dist), fmt(row.pos), fmt(clean(row.normal)),
                 fmt(row.normal_force), fmt(clean(row.friction_force, row.normal_force)),
                 str(row.condim)]
        if not self._all_active():
            cells.append(f"{row.exclude}: {EXCLUDE.get(row.exclude, 'excluded')}")
        return cells

    _HEAD = ("geom1", "geom2", "dist [m]", "pos [m]", "normal", "normal force [N]",
             "friction force [N]", "condim")

    def _head(self) -> tuple[str, ...]:
        return self._HEAD if self._all_active() else (*self._HEAD, "exclude")

    def text(self) -> str:
        """One line per contact, ``|``-separated, under a header with units (SI); an
        ``exclude`` column (MuJoCo's code and its meaning) appears when some contact does not act.

        Example: ``print(table(model, data).text())`` → ``no contacts`` before any touch.
        """
        if not self.rows:
            return "no contacts"
        lines = [" | ".join(self._head())]
        lines += [" | ".join(self._cells(r)) for r in self.rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        if not self.rows:
            return "<i>no contacts</i>"
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self._head())
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(r))
                       + "</tr>" for r in self.rows)
        return f"<table><tr>{head}</tr>{body}</table>"


def pairs(model: mujoco.MjModel, data: mujoco.MjData, *, active: bool = False) -> set[frozenset[str]]:
    """The geom pairs in ``data.contact``, each a frozenset of two geom names (or ``#id``):
    every listed contact, including those that do not act (``exclude`` ≠ 0), or with
    ``active=True`` only those that enter the constraint solver.

    Example: ``pairs(model, data)`` → ``{frozenset({"ball", "floor"})}``.
    """
    return {frozenset((row.geom1, row.geom2)) for row in table(model, data)
            if row.active or not active}


def table(model: mujoco.MjModel, data: mujoco.MjData) -> ContactTable:
    """Every contact in ``data`` (after ``mj_forward`` or ``mj_step``), with forces: one
    :class:`ContactRow` per ``data.contact[:ncon]`` entry, in MuJoCo's order, including
    contacts that do not act (``exclude`` ≠ 0, force 0; the table then shows an ``exclude``
    column).  Distances and positions in m, forces in N from ``mj_contactForce``, normals
    unit vectors, shape (3,).

    Example: ``table(model, data).rows[0].normal_force`` → N.
    """
    import mujoco

    rows = []
    force = np.zeros(6)
    for i in range(data.ncon):
        contact = data.contact[i]
        mujoco.mj_contactForce(model, data, i, force)
        frame = contact.frame.reshape(3, 3)
        rows.append(ContactRow(
            geom1=model.geom(contact.geom1).name or f"#{contact.geom1}",
            geom2=model.geom(contact.geom2).name or f"#{contact.geom2}",
            dist=float(contact.dist), pos=contact.pos.copy(), normal=frame[0].copy(),
            normal_force=float(force[0]), friction_force=force[1:3].copy(),
            condim=int(contact.dim), excluded=bool(contact.exclude), exclude=int(contact.exclude)))
    return ContactTable(rows)
