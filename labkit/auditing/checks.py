"""The audit's checks: one small function per lesson of the course, each with its threshold
justified where it is set.

A check takes the :class:`Subject` (the compiled model, its data at the start pose, what is
known of its source) and yields :class:`Finding` objects.  A check that cannot judge a
model raises :class:`Skip` with the reason.  Thresholds are in SI units; a model whose
gravity says it is not in SI skips the checks whose thresholds are absolute.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from . import geometry
from .report import Finding

if TYPE_CHECKING:
    import mujoco

__all__ = ["CHECKS", "TAUGHT", "Skip", "Subject"]

G = 9.81  # m/s²; the standard gravity a SI model states


class Skip(Exception):
    """A check does not apply to this model; the message says why."""


@dataclass
class Subject:
    """The model under audit.

    model, data: compiled, with ``mj_forward`` run at the start pose; degree: True/False when
    the source said which angle unit the compiler used (an MJCF ``<compiler angle>``), None
    for an already compiled model; key: the start pose's keyframe (None: qpos0).
    """

    model: mujoco.MjModel
    data: mujoco.MjData
    degree: bool | None = None
    key: int | None = None
    partner: dict[int, int] | None = None  # geom → the geom of its most clamped contact

    def name(self, kind: str, index: int) -> str:
        """``"geom 'pad'"``, or for an unnamed element ``"geom #3 in body 'hand'"``."""
        import mujoco

        obj = getattr(mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
        own = mujoco.mj_id2name(self.model, obj, int(index))
        if own:
            return f"{kind} '{own}'"
        body = {"geom": self.model.geom_bodyid, "joint": self.model.jnt_bodyid,
                "site": self.model.site_bodyid}.get(kind)
        if body is not None:
            holder = int(body[index])
            return f"{kind} #{index} in {self.name('body', holder) if holder else 'the world'}"
        return f"{kind} #{index}" if kind != "body" or index else "the world body"

    @cached_property
    def si(self) -> bool:
        """Whether gravity reads as SI (|g| within 1 % of 9.81 m/s², or no gravity at all)."""
        g = float(np.linalg.norm(self.model.opt.gravity))
        return g == 0 or abs(g - G) < 0.01 * G

    def require_si(self) -> None:
        if not self.si:
            raise Skip("its thresholds are in SI units and this model is not (see `units`)")

    def require_contacts(self) -> None:
        import mujoco

        off = self.model.opt.disableflags
        if off & (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT):
            raise Skip("contacts are disabled (<flag contact=\"disable\"/>): nothing collides")

    @cached_property
    def moving(self) -> np.ndarray:
        """Boolean (nbody,): bodies not welded to the world and not mocap (a mocap body is moved
        by the user, kinematically: it is often a target marker that touches nothing)."""
        model = self.model
        return (model.body_weldid != 0) & (model.body_mocapid < 0)

    @cached_property
    def collidable(self) -> np.ndarray:
        return geometry.collidable(self.model)

    @cached_property
    def pairs(self) -> np.ndarray:
        return geometry.can_collide(self.model)

    @cached_property
    def mass_matrix(self) -> np.ndarray:
        """M (nv, nv) at the start pose, armature included."""
        import mujoco

        full = np.zeros((self.model.nv, self.model.nv))
        mujoco.mj_fullM(self.model, self.data, full)
        return full

    @cached_property
    def inverse_mass(self) -> np.ndarray:
        """M⁻¹ (nv, nv) at the start pose."""
        return np.linalg.inv(self.mass_matrix) if self.model.nv else self.mass_matrix


CHECKS: dict[str, Callable[[Subject], Iterator[Finding]]] = {}


def _check(check_id: str):
    def register(function: Callable[[Subject], Iterator[Finding]]):
        CHECKS[check_id] = function
        return function
    return register


# check id -> (the course section that teaches it, its notebook)
TAUGHT: dict[str, tuple[str, str]] = {
    "overlap-at-start": ("07 §1 · A joint that jitters", "07_contact_tuning.ipynb"),
    "start-outside-range": ("05 §7 · Soft joint limits", "05_solver_parameters.ipynb"),
    "timeconst-clamped": ("05 §5 · The safety clamp: timeconst ≥ 2·timestep",
                          "05_solver_parameters.ipynb"),
    "angles-degrees": ("02 §1 · Degrees in, radians out, but not everywhere",
                       "02_units_frames_compiler.ipynb"),
    "hull-vs-mesh": ("07 §5 · A peg that will not enter its hole", "07_contact_tuning.ipynb"),
    "visual-vs-collision": ("06 §1 · Who collides with whom", "06_contacts_filtering.ipynb"),
    "no-collision": ("06 §1 · Who collides with whom", "06_contacts_filtering.ipynb"),
    "zero-friction": ("06 §3 · condim and the three friction coefficients",
                      "06_contacts_filtering.ipynb"),
    "units": ("10 §3 · MuJoCo has no units (#60, #1536)", "10_stability_scale.ipynb"),
    "mass-tiny": ("10 §4 · A millimetre model, and parts too small for the compiler",
                  "10_stability_scale.ipynb"),
    "inertia-tiny": ("10 §5 · A mesh too small for its own inertia (#759)",
                     "10_stability_scale.ipynb"),
    "density": ("01 §4 · Where a body's mass comes from", "01_mjcf_foundations.ipynb"),
    "servo-no-forcerange": ("04 §1 · Four clamps on one arm", "04_actuators_limits_state.ipynb"),
    "servo-stability": ("10 §1 · How large can the timestep be?", "10_stability_scale.ipynb"),
    "rest-penetration": ("05 §4 · How deep does a resting body sink?",
                         "05_solver_parameters.ipynb"),
}


def _finding(check: str, severity: str, elements: list[str], measured: float, threshold: float,
             unit: str, summary: str, why: str, fix: str,
             geoms: list[int] | tuple[int, ...] = (), **detail: object) -> Finding:
    chapter, notebook = TAUGHT[check]
    return Finding(check, severity, tuple(elements), float(measured), float(threshold), unit,
                   summary, why, chapter, notebook, fix, tuple(int(g) for g in geoms), detail)


# --- contacts at the start pose ------------------------------------------------------------

# An overlap deeper than 1 mm is geometry, not a resting contact: at MuJoCo's default solref and
# solimp a resting body sinks 0.05–1 mm (chapter 05 §4), so deeper contacts at the start pose
# are parts placed inside each other, which the solver pushes apart on the first steps.
OVERLAP = 1e-3  # m


@_check("overlap-at-start")
def overlap_at_start(s: Subject) -> Iterator[Finding]:
    """Contacts deeper than 1 mm (OVERLAP) at the start pose, one finding per pair of bodies.
    Geom contacts only: a flex's contacts name no geom (geom id -1)."""
    model, data = s.model, s.data
    deepest: dict[tuple[int, int], tuple[float, int, int]] = {}
    for i in range(data.ncon):
        contact = data.contact[i]
        depth = -float(contact.dist) / _length_scale(s)  # m
        # 1e-9 m: a pair placed exactly 1 mm deep is at the threshold, not past it
        if depth <= OVERLAP + 1e-9 or contact.exclude or min(contact.geom) < 0:
            continue
        g1, g2 = int(contact.geom[0]), int(contact.geom[1])
        b1, b2 = sorted((int(model.geom_bodyid[g1]), int(model.geom_bodyid[g2])))
        if depth > deepest.get((b1, b2), (0.0,))[0]:
            deepest[(b1, b2)] = (depth, g1, g2)
    import mujoco

    unfiltered = bool(model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    for (b1, b2), (depth, g1, g2) in deepest.items():
        world = None if unfiltered else _world_weld_exception(model, b1, b2)
        cause = (f" The parent-child filter would have dropped this pair, but "
                 f"{s.name('body', world[0])} is welded to the world, and the filter does not "
                 f"apply to a parent welded to the world." if world else "")
        if unfiltered and _parent_and_child(model, b1, b2):
            cause = " They are parent and child, but <flag filterparent=\"disable\"/> is set."
        astray = _outside_range(s, (b1, b2))
        if astray:
            cause += (f" {_list_names(astray)} start{'' if len(astray) > 1 else 's'} outside "
                      "its range (see start-outside-range): the start pose itself may be the "
                      "mistake.")
        fix = (f"if {s.name('body', world[0])} is meant to stay fixed, add <exclude body1=… "
               "body2=…/> for this pair; if it is meant to move (a walker, a gripper on an arm), "
               "give it a <freejoint/> or mount it on its arm, so that the parent filter "
               "applies; or move the geoms apart at the start pose" if world else
               "move the geoms apart at the start pose (check the key or qpos0), or, if they "
               "never should touch, <exclude> the bodies or clear matching contype/conaffinity "
               "bits")
        yield _finding(
            "overlap-at-start", "error" if s.moving[b1] or s.moving[b2] else "warning",
            [s.name("geom", g1), s.name("geom", g2)], depth * 1e3,
            OVERLAP * 1e3, "mm",
            f"{s.name('body', b1)} and {s.name('body', b2)} overlap by {depth * 1e3:.3g} mm "
            f"at the start pose.{cause}",
            "A contact that exists from the first step pushes the parts apart and keeps "
            "pushing: a joint jitters, jumps or jams although nothing touches in the design.",
            fix, [g1, g2],
            world_weld=bool(world), bodies=[s.name("body", b1), s.name("body", b2)])


def _outside_range(s: Subject, bodies: tuple[int, ...]) -> list[str]:
    """Names of the limited hinges and slides, on the bodies' chains up to the world, whose
    start position lies outside their range."""
    model, out = s.model, []
    for b in bodies:
        while b:
            for j in range(model.body_jntadr[b], model.body_jntadr[b] + model.body_jntnum[b]):
                if _excess(model, s.data, j) > OUTSIDE and s.name("joint", j) not in out:
                    out.append(s.name("joint", j))
            b = int(model.body_parentid[b])
    return out


def _excess(model: mujoco.MjModel, data: mujoco.MjData, joint: int) -> float:
    """How far (rad or m) a limited hinge or slide starts outside its range (≤ 0: inside)."""
    import mujoco

    simple = (int(mujoco.mjtJoint.mjJNT_SLIDE), int(mujoco.mjtJoint.mjJNT_HINGE))
    if int(model.jnt_type[joint]) not in simple or not model.jnt_limited[joint]:
        return 0.0
    q = float(data.qpos[model.jnt_qposadr[joint]])
    lo, hi = model.jnt_range[joint]
    return max(lo - q, q - hi)


def _list_names(names: list[str], most: int = 3) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _parent_and_child(model: mujoco.MjModel, b1: int, b2: int) -> bool:
    """Whether one body's weld is the other's weld-parent (the pairs filterparent drops)."""
    w1, w2 = model.body_weldid[b1], model.body_weldid[b2]
    p1 = model.body_weldid[model.body_parentid[w1]]
    p2 = model.body_weldid[model.body_parentid[w2]]
    return bool(w1 != w2 and (w1 == p2 or w2 == p1))


def _world_weld_exception(model: mujoco.MjModel, b1: int, b2: int) -> tuple[int, int] | None:
    """(static body, moving body) when the parent filter would drop the pair but for the world:
    the moving body's weld-parent is the group of bodies welded to the world, and the static
    body belongs to that group inside the same tree (a gripper's palm, a torso without a free
    joint, a sibling welded to it).  The filter compares weld groups, and it does not apply
    when one of them is the world's (engine_collision_driver.c); a free object on the floor or
    a table (a tree of its own) is the case it is meant for, not an exception."""
    for static, child in ((b1, b2), (b2, b1)):
        root = int(model.body_weldid[child])
        if static == 0 or model.body_weldid[static] != 0 or root == 0:
            continue
        parent = int(model.body_parentid[root])
        if parent != 0 and model.body_weldid[parent] == 0 and (
                model.body_rootid[static] == model.body_rootid[child]):
            return static, child
    return None


# A joint further than this outside its range at the start pose is no rounding: the limit
# row is active from the first step and throws the joint back (chapter 05 §7 measures how
# hard: the soft limit's reference acceleration grows with the violation).
OUTSIDE = 1e-6  # rad or m


@_check("start-outside-range")
def start_outside_range(s: Subject) -> Iterator[Finding]:
    """Limited hinges and slides whose start position (qpos0 or the key) is outside their range."""
    import mujoco

    model, data = s.model, s.data
    if model.opt.disableflags & (mujoco.mjtDisableBit.mjDSBL_LIMIT
                                 | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT):
        raise Skip("joint limits are disabled")
    outside = [(j, _excess(model, data, j)) for j in range(model.njnt)
               if _excess(model, data, j) > OUTSIDE]
    if not outside:
        return
    worst = max(e for _, e in outside)
    listed = ", ".join(f"{s.name('joint', j)} by {e:.3g}" for j, e in outside[:4])
    yield _finding(
        "start-outside-range", "error", [s.name("joint", j) for j, _ in outside], worst, OUTSIDE,
        "rad or m",
        f"{_count(len(outside), 'joint')} start{'' if len(outside) > 1 else 's'} outside "
        f"{'their ranges' if len(outside) > 1 else 'its range'} ({listed}"
        f"{', …' if len(outside) > 4 else ''}).",
        "The limit acts from the first step and throws the joint into its range: the model "
        "jumps, and parts it carries can end up inside each other.",
        "start the model inside its ranges: a <key> with a valid qpos (or qpos0 from the "
        "joints' ref), or ranges that include the start",
        [g for j, _ in outside
         for g in np.flatnonzero(model.geom_bodyid == model.jnt_bodyid[j])],
        excess={s.name("joint", j): e for j, e in outside})


# --- solver parameters ---------------------------------------------------------------------

@_check("timeconst-clamped")
def timeconst_clamped(s: Subject) -> Iterator[Finding]:
    """Standard-form solref time constants below 2·timestep, which MuJoCo silently raises."""
    import mujoco

    model = s.model
    if model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE:
        raise Skip("refsafe is disabled: MuJoCo uses every time constant as given")
    h = float(model.opt.timestep)
    # the clamp is MuJoCo's rule (engine_core_constraint.c: getsolparam / mj_makeImpedance):
    # a time constant below 2·timestep would make the row's reference dynamics faster than
    # the integrator can follow; the limit itself is the threshold
    limit = 2 * h
    off = int(model.opt.disableflags)

    def enabled(*flags: int) -> bool:  # no constraint of that kind is made when one is set
        return not any(off & int(f) for f in (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT, *flags))

    contacts = enabled(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    limits = enabled(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    friction = enabled(mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
    override = bool(model.opt.enableflags & mujoco.mjtEnableBit.mjENBL_OVERRIDE)
    joint_rows = model.jnt_dofadr if model.njnt else np.zeros(0, int)
    # (kind, the time constant of each element's rows, which elements make rows, the rows)
    sources = [
        ("geom", _contact_timeconsts(s), np.full(model.ngeom, contacts and not override),
         "their contacts"),
        ("pair", _column(model.pair_solref), np.full(model.npair, contacts and not override),
         "their contacts"),
        ("joint", _column(model.jnt_solref), (model.jnt_limited != 0) & limits, "their limits"),
        ("joint", _column(np.asarray(model.dof_solref)[joint_rows]),
         (model.dof_frictionloss[joint_rows] > 0) & friction, "their friction loss"),
        ("tendon", _column(model.tendon_solref_lim), (model.tendon_limited != 0) & limits,
         "their limits"),
        ("tendon", _column(model.tendon_solref_fri), (model.tendon_frictionloss > 0) & friction,
         "their friction loss"),
        ("equality", _column(model.eq_solref),
         np.full(model.neq, enabled(mujoco.mjtDisableBit.mjDSBL_EQUALITY)), "their constraints"),
        ("option", _column(np.asarray(model.opt.o_solref).reshape(1, 2)),
         np.array([override and contacts]), "every contact (the global override)"),
    ]
    for kind, tau, rows, role in sources:
        hit = np.flatnonzero((tau > 0) & (tau < limit) & np.asarray(rows, dtype=bool))
        if not len(hit):
            continue
        values = sorted({float(tau[i]) for i in hit})
        names = ([s.name(kind, i) for i in hit] if kind != "option"
                 else ["option o_solref"])
        partner = s.partner or {}
        pairs = ({f"{s.name('geom', min(g, partner[g]))} with "
                  f"{s.name('geom', max(g, partner[g]))}": float(tau[g])
                  for g in hit if g in partner} if kind == "geom" else {})
        plural = len(hit) > 1
        asks = (f"make{'' if plural else 's'} contacts whose mixed solref asks for a time "
                "constant of" if kind == "geom" else
                f"ask{'' if plural else 's'} for a solref time constant of")
        example = (f" (e.g. {next(iter(pairs))}: {pairs[next(iter(pairs))]:.3g} s; whether such "
                   "a contact ever happens is up to the model's motion)" if pairs else "")
        geoms = hit if kind == "geom" else []
        yield _finding(
            "timeconst-clamped", "warning", names, min(values), limit, "s",
            f"{_count(len(hit), kind)} {asks} {_list(values)} s, "
            f"below 2·timestep = {limit:.3g} s: MuJoCo uses {limit:.3g} s for {role}, with no "
            f"warning{example}.",
            "The contact or limit is softer than written, so parts sink deeper and tuning "
            "timeconst below the clamp changes nothing.",
            f"raise timeconst to at least {limit:.3g} s, or lower the timestep to at most "
            f"{min(values) / 2:.3g} s if the stiffer contact is really needed "
            "(or give stiffness directly with a negative solref)", geoms,
            requested=values, used=limit, **({"pairs": pairs} if pairs else {}))


def _column(solref: np.ndarray) -> np.ndarray:
    """The time constants (first solref number) of an (n, 2) array."""
    return np.asarray(solref)[:, 0] if len(solref) else np.zeros(0)


def _contact_timeconsts(s: Subject) -> np.ndarray:
    """Per geom (ngeom,): the smallest standard-form time constant of the contacts it can make
    with another geom, mixed as mj_contactParam mixes them (inf where it makes none).

    Mixing (engine_collision_driver.c): the geom of higher priority gives its solref; at equal
    priority, two standard solrefs are averaged with the weight mix = solmix₁/(solmix₁ +
    solmix₂) (½ when both are 0), any other combination takes the smaller of each number.
    Explicit <pair>s carry their own solref (the "pair" rows)."""
    model = s.model
    i, j = np.nonzero(np.triu(s.pairs))
    explicit = {(min(a, b), max(a, b)) for a, b in zip(model.pair_geom1, model.pair_geom2,
                                                      strict=True)}
    keep = np.array([(a, b) not in explicit for a, b in zip(i, j, strict=True)], dtype=bool)
    i, j = i[keep], j[keep]
    r1, r2 = model.geom_solref[i], model.geom_solref[j]
    m1, m2 = model.geom_solmix[i], model.geom_solmix[j]
    total = m1 + m2
    mix = np.where(total > 1e-15, m1 / np.where(total > 1e-15, total, 1), 0.5)
    standard = (r1[:, 0] > 0) & (r2[:, 0] > 0)
    tau = np.where(standard, mix * r1[:, 0] + (1 - mix) * r2[:, 0], np.minimum(r1[:, 0], r2[:, 0]))
    p1, p2 = model.geom_priority[i], model.geom_priority[j]
    tau = np.where(p1 > p2, r1[:, 0], np.where(p2 > p1, r2[:, 0], tau))
    out = np.full(model.ngeom, np.inf)
    np.minimum.at(out, i, tau)
    np.minimum.at(out, j, tau)
    s.partner = {int(g): int(b if g == a else a) for a, b, t in zip(i, j, tau, strict=True)
                 for g in (a, b) if t == out[g]}  # the pair that gives each geom its smallest
    return out


# --- angles --------------------------------------------------------------------------------

# A hinge whose whole range spans under 0.1 rad (5.7°) is rare in a robot, and it is exactly
# what a radian range written under angle="degree" becomes: "0 1.57" compiles to 0.0274 rad.
TINY_SPAN = 0.1  # rad
# ctrlrange is never converted (chapter 02 §1): a position servo's ctrlrange about 57.3× its
# joint's range is a range written in degrees; a factor 2 either way around 180/π
DEGREE_RATIO = (180 / np.pi / 2, 180 / np.pi * 2)


@_check("angles-degrees")
def angles_degrees(s: Subject) -> Iterator[Finding]:
    """Radian values read as degrees (ranges) and degree values never converted (ctrlrange)."""
    import mujoco

    model = s.model
    hinge = np.flatnonzero((model.jnt_type == mujoco.mjtJoint.mjJNT_HINGE)
                           & (model.jnt_limited != 0))
    span = model.jnt_range[hinge, 1] - model.jnt_range[hinge, 0]
    written = np.degrees(np.abs(model.jnt_range[hinge])).max(axis=1) if len(hinge) else span
    small = hinge[(span < TINY_SPAN) & (span > 0) & (written <= 2 * np.pi + 1e-9)]
    if len(small) and s.degree is not False:
        unit = ("the file compiles angles in degrees" if s.degree else
                "if the file used angle=\"degree\" (MuJoCo's default for MJCF)")
        spans = model.jnt_range[small, 1] - model.jnt_range[small, 0]
        yield _finding(
            "angles-degrees", "error" if s.degree else "warning",
            [s.name("joint", j) for j in small], float(spans.max()), TINY_SPAN, "rad",
            f"{_count(len(small), 'hinge range')} span{'' if len(small) > 1 else 's'} only "
            f"{_list(np.degrees(spans))}°, and {unit}: numbers written as radians "
            f"(e.g. {_list(np.degrees(model.jnt_range[small[0]]))}) were read as degrees.",
            "A range 57× too small pins the joint: a finger that cannot close, a leg that "
            "cannot bend.", "write <compiler angle=\"radian\"/> if the file's angles are radians, or convert "
            "the ranges to degrees", [], spans_deg=[float(w) for w in np.degrees(spans)])
    misread = set(small.tolist()) if s.degree is not False else set()
    for a in range(model.nactuator):
        if not _is_position_servo(model, a) or not model.actuator_ctrllimited[a]:
            continue
        if model.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT:
            continue
        j = int(model.actuator_trnid[a, 0])
        if j in misread:  # the range was misread, not the ctrlrange: the finding above says so
            continue
        if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE or not model.jnt_limited[j]:
            continue
        gear = abs(float(model.actuator_gear[a, 0])) or 1.0
        joint_span = (model.jnt_range[j, 1] - model.jnt_range[j, 0]) * gear
        ctrl_span = model.actuator_ctrlrange[a, 1] - model.actuator_ctrlrange[a, 0]
        ratio = ctrl_span / joint_span if joint_span > 0 else 0.0
        if DEGREE_RATIO[0] <= ratio <= DEGREE_RATIO[1]:
            yield _finding(
                "angles-degrees", "error", [s.name("actuator", a), s.name("joint", j)], ratio,
                DEGREE_RATIO[0], "×",
                f"{s.name('actuator', a)} has ctrlrange {_list(model.actuator_ctrlrange[a])}, "
                f"{ratio:.3g}× its joint's range in radians: it looks written in degrees, but "
                "ctrlrange is never converted.",
                "The servo is commanded in radians: a target of 90 means 90 rad, far past the "
                "joint's limit, so it slams into it.",
                "write ctrlrange in radians (it is never converted)", [])


# --- meshes and shapes ---------------------------------------------------------------------

# A convex part's hull is the part (ratio 1; decimated meshes reach ~1.2). At 2 half of what
# collides is empty space: a cup, a U-shaped bracket, a hand whose fingers collide as one block.
HULL_RATIO = 2.0


@_check("hull-vs-mesh")
def hull_vs_mesh(s: Subject) -> Iterator[Finding]:
    """Collision meshes whose convex hull (what MuJoCo collides) is much larger than the mesh."""
    model = s.model
    seen: dict[int, list[int]] = {}
    for g in np.flatnonzero((model.geom_type == geometry.MESH) & s.collidable):
        seen.setdefault(int(model.geom_dataid[g]), []).append(int(g))
    if not seen:
        raise Skip("no collision geom is a mesh")
    for mesh, geoms in seen.items():
        hull, closed = geometry.hull_volume(model, mesh), geometry.mesh_volume(model, mesh)
        if hull is None or hull <= 0 or not geometry.volume_is_defined(model, mesh):
            continue  # an open mesh has no volume to compare (its signed volume is arbitrary)
        ratio = hull / closed
        if ratio < HULL_RATIO:
            continue
        mesh_name = s.name("mesh", mesh)
        what = f"its convex hull is {ratio:.3g}× its volume"
        yield _finding(
            "hull-vs-mesh", "warning", [mesh_name] + [s.name("geom", g) for g in geoms], ratio,
            HULL_RATIO, "×",
            f"{mesh_name} collides as its convex hull, and {what}.",
            "MuJoCo collides every mesh as its convex hull: a hollow or concave part touches "
            "things in the empty space its hull fills (a peg cannot enter a hole).",
            "split the mesh into convex pieces (one geom each), or approximate it with "
            "primitive geoms", geoms, hull_volume=hull, mesh_volume=closed)


# Collision geoms are simplified shapes: their bounding box differs from the visual one by
# up to ~2× in size, and a visual decoration (a stem, a cable) may sit beside the collision part.
# Diagonals that differ by more than 4× (64× in volume), or boxes further apart than the larger
# one's half-diagonal, are no simplification but a mistake: a mesh exported in other units (10×,
# 100×, 1000×) or with another origin, a primitive in the wrong place.
BOX_RATIO = 4.0
_VISIBLE_GROUPS = 2  # mjvOption shows geom groups 0–2 by default


@_check("visual-vs-collision")
def visual_vs_collision(s: Subject) -> Iterator[Finding]:
    """Rigid links whose collision geoms' bounding box is far from (or far larger or smaller
    than) the box of the visual geoms a viewer shows."""
    import mujoco

    model = s.model
    s.require_contacts()
    wraps = np.zeros(model.ngeom, bool)  # a tendon's wrapping sphere or cylinder is no visual
    wrapping = np.isin(model.wrap_type, [int(mujoco.mjtWrap.mjWRAP_SPHERE),
                                         int(mujoco.mjtWrap.mjWRAP_CYLINDER)])
    wraps[model.wrap_objid[wrapping]] = True
    visual = (~s.collidable & ~wraps & (model.geom_rgba[:, 3] > 0)
              & (model.geom_group <= _VISIBLE_GROUPS))
    link = model.body_weldid[model.geom_bodyid]  # compared per rigid link (weld group)
    frame = {int(b): np.flatnonzero(link == b) for b in np.unique(link) if b != 0}
    compared = 0
    for b, geoms in frame.items():
        mine = np.zeros(model.ngeom, bool)
        mine[geoms] = True
        vis, col = np.flatnonzero(mine & visual), np.flatnonzero(mine & s.collidable)
        vis = vis[model.geom_type[vis] != geometry.PLANE]
        col = col[model.geom_type[col] != geometry.PLANE]
        if not len(vis) or not len(col):
            continue
        compared += 1
        seen, hit = geometry.world_box(model, s.data, vis), geometry.world_box(model, s.data, col)
        ratio = float(np.linalg.norm(hit[1]) / max(np.linalg.norm(seen[1]), 1e-12))
        gap = float(np.linalg.norm(np.clip(np.abs(seen[0] - hit[0]) - seen[1] - hit[1], 0, None)))
        reach = max(float(np.linalg.norm(seen[1])), float(np.linalg.norm(hit[1])))
        apart = gap > reach
        size = max(ratio, 1 / ratio) if ratio > 0 else np.inf
        if not apart and size <= BOX_RATIO:
            continue
        what = (f"lie {gap:.3g} m apart, more than the larger box's half-diagonal" if apart else
                f"differ {size:.3g}× in size ({'collision larger' if ratio > 1 else 'visual larger'})")
        yield _finding(
            "visual-vs-collision", "warning", [s.name("body", b)], size, BOX_RATIO, "×",
            f"In {s.name('body', b)} (with the bodies welded to it) the bounding boxes of the "
            f"collision geoms and of the visual geoms {what}.",
            "What you see is not what collides: contacts appear in empty space, or parts pass "
            "through each other where the picture shows them touching.",
            "check the collision geoms' pos/size (or mesh scale and origin) against the visual "
            "ones", list(col) + list(vis), disjoint=apart, gap_m=gap,
            collision_box=[float(x) for x in np.concatenate(hit)],
            visual_box=[float(x) for x in np.concatenate(seen)])
    if not compared:
        raise Skip("no moving link has both visible visual-only and collision geoms")


@_check("no-collision")
def no_collision(s: Subject) -> Iterator[Finding]:
    """Moving bodies with geoms, none of which can ever touch another body."""
    model = s.model
    s.require_contacts()
    touches = s.pairs.any(axis=1)
    tree = model.body_rootid[model.geom_bodyid]
    link = model.body_weldid[model.geom_bodyid]  # the rigid link (weld group) of each geom
    lonely = []
    for b in sorted({int(w) for w in model.body_weldid[s.moving]}):  # each moving link once
        geoms = np.flatnonzero(link == b)
        # a lone body in an empty world has nothing to touch: not a finding
        others = s.collidable & (tree != model.body_rootid[b])
        if len(geoms) and not touches[geoms].any() and others.any():
            lonely.append(b)
    if not lonely:
        return
    yield _finding(
        "no-collision", "warning", [s.name("body", b) for b in lonely], len(lonely), 0, "bodies",
        f"{_count(len(lonely), 'moving body')} cannot collide with "
        "anything: every geom is visual only, or its contype/conaffinity bits match no other "
        "body's, or the parent filter and <exclude> remove all its partners.",
        "These links pass through the floor, objects and each other.",
        "give each link a collision geom (contype/conaffinity matching the floor's), or "
        "confirm it is meant to be ghost-like",
        [g for b in lonely for g in np.flatnonzero(link == b)])


# The most slippery real pairs (PTFE on PTFE, ice on ice) reach μ ≈ 0.02–0.05; below 0.01 a
# contact is frictionless in practice (MuJoCo itself raises a 0 to mjMINMU = 1e-5).
LEAST_FRICTION = 0.01


@_check("zero-friction")
def zero_friction(s: Subject) -> Iterator[Finding]:
    """Geom pairs of different trees that can touch with a frictionless contact (mixed sliding
    friction under 0.01, or condim 1)."""
    import mujoco

    model = s.model
    s.require_contacts()
    i, j = np.nonzero(np.triu(s.pairs))
    # a robot's own limbs are often frictionless against each other on purpose (condim 1 in
    # dm_control's humanoid and dog), which costs nothing: only pairs across trees count
    root = model.body_rootid[model.geom_bodyid]
    across = root[i] != root[j]
    i, j = i[across], j[across]
    if model.opt.enableflags & mujoco.mjtEnableBit.mjENBL_OVERRIDE:
        friction = np.full(len(i), model.opt.o_friction[0])
    else:
        fi, fj = model.geom_friction[i, 0], model.geom_friction[j, 0]
        pi_, pj = model.geom_priority[i], model.geom_priority[j]
        # mj_contactParam: the higher priority's friction, else the larger of the two
        friction = np.where(pi_ > pj, fi, np.where(pj > pi_, fj, np.maximum(fi, fj)))
    ci, cj = model.geom_condim[i], model.geom_condim[j]
    condim = np.where(model.geom_priority[i] > model.geom_priority[j], ci,
                      np.where(model.geom_priority[j] > model.geom_priority[i], cj,
                               np.maximum(ci, cj)))
    explicit = {(min(a, b), max(a, b)): k for k, (a, b) in
                enumerate(zip(model.pair_geom1, model.pair_geom2, strict=True))}
    for n, (a, b) in enumerate(zip(i, j, strict=True)):
        if (a, b) in explicit:
            k = explicit[(a, b)]
            friction[n], condim[n] = model.pair_friction[k, 0], model.pair_dim[k]
    bad = np.flatnonzero((friction < LEAST_FRICTION) | (condim == 1))
    if not len(bad):
        return
    geoms = sorted({int(g) for n in bad for g in (i[n], j[n])})
    moving = [g for g in geoms if s.moving[model.geom_bodyid[g]]]
    if not moving:
        return
    yield _finding(
        "zero-friction", "warning", [s.name("geom", g) for g in moving], len(bad), 0, "pairs",
        f"{_count(len(bad), 'geom pair')} that can touch would make "
        f"frictionless contacts (mixed sliding friction under {LEAST_FRICTION}, or condim 1).",
        "Without friction nothing can be grasped, pushed or stood on: it slides.",
        "give the geoms a sliding friction (MuJoCo's default is 1) and condim ≥ 3, unless the "
        "contact is meant to be frictionless", moving)


# --- mass, inertia and units ---------------------------------------------------------------

@_check("units")
def units(s: Subject) -> Iterator[Finding]:
    """Gravity that is not 9.81 m/s²: a model in other units."""
    g = float(np.linalg.norm(s.model.opt.gravity))
    if s.si:
        return
    scale = g / G
    guess = {100: "centimetres", 1000: "millimetres"}.get(int(round(scale, -1)) if scale > 50
                                                          else 0, f"{1 / scale:.3g} m")
    yield _finding(
        "units", "warning", ["option gravity"], g, G, "model units/s²",
        f"Gravity is {g:.4g}: with seconds as the time unit, one length unit is "
        f"{1 / scale:.3g} m ({guess}).",
        "MuJoCo has no units, but its defaults assume SI: density 1000, solimp's width "
        "0.001, timeconst 0.02 s and mjMINVAL all mean something else here.",
        "convert the model to SI (lengths, masses, and the defaults that carry units), or set "
        "every unit-bearing default (density, solimp width, margins) for these units",
        [], length_unit_m=1 / scale)


def _length_scale(s: Subject) -> float:
    """Model length units per metre, read from gravity (1 for SI or no gravity)."""
    g = float(np.linalg.norm(s.model.opt.gravity))
    return 1.0 if s.si or not g else g / G


# A body whose subtree weighs under 1 g moves on a robot whose other links weigh ~0.1–10 kg:
# its rows in the mass matrix are 10²–10⁴ times lighter, the stiffest motion of the model
# (chapter 10 §4: the explicit limit shrinks as the mass does).
TINY_MASS = 1e-3  # kg


@_check("mass-tiny")
def mass_tiny(s: Subject) -> Iterator[Finding]:
    """Jointed bodies whose whole subtree weighs less than 1 g (TINY_MASS)."""
    s.require_si()
    model = s.model
    light = [b for b in range(1, model.nbody) if model.body_jntnum[b] > 0
             and model.body_subtreemass[b] < TINY_MASS]
    if not light:
        return
    masses = model.body_subtreemass[light]
    yield _finding(
        "mass-tiny", "warning", [s.name("body", b) for b in light], float(masses.min()),
        TINY_MASS, "kg",
        f"{_count(len(light), 'jointed body')} (with everything "
        f"{'they carry) weigh' if len(light) > 1 else 'it carries) weighs'} under 1 g, the "
        f"lightest {masses.min():.3g} kg.",
        "Light links make the model's fastest motion faster: the stable timestep shrinks, "
        "and masses near mjMINVAL are refused or rounded.",
        "check the masses (units? a mesh in mm read as m?); set realistic <inertial> values, "
        "or add armature to the joints", [g for b in light
                                          for g in np.flatnonzero(model.geom_bodyid == b)])


# A 1 cm, 10 g link turning about its end has I ≈ m·L²/3 = 3·10⁻⁷ kg·m²: below 10⁻⁶ the default
# 2 ms step meets Euler's explicit damping limit h·b/I < 2 (chapter 10 §1) already at
# b = 2·I/h = 10⁻³ N·m·s/rad, a tenth of a typical servo's kv.
TINY_INERTIA = 1e-6  # kg·m²


@_check("inertia-tiny")
def inertia_tiny(s: Subject) -> Iterator[Finding]:
    """Hinge dofs whose inertia (mass-matrix diagonal at the start pose) is under 1e-6 kg·m²
    (TINY_INERTIA)."""
    import mujoco

    s.require_si()
    model = s.model
    diagonal = np.diag(s.mass_matrix)
    hinge = [d for d in range(model.nv)
             if model.jnt_type[model.dof_jntid[d]] == mujoco.mjtJoint.mjJNT_HINGE
             and diagonal[d] < TINY_INERTIA * (1 - 1e-9)]  # 1e-6 written is at the threshold
    if not hinge:
        return
    inertia = diagonal[hinge]
    h = float(model.opt.timestep)
    yield _finding(
        "inertia-tiny", "warning", [s.name("joint", model.dof_jntid[d]) for d in hinge],
        float(inertia.min()), TINY_INERTIA, "kg·m²",
        f"{_count(len(hinge), 'hinge')} turn{'' if len(hinge) > 1 else 's'} "
        f"an inertia under 1e-6 kg·m², the smallest {inertia.min():.3g} kg·m²: at this timestep "
        f"damping integrated explicitly (an actuator's kv under Euler, any damping under RK4) "
        f"diverges above {2 * inertia.min() / h:.3g} N·m·s/rad.",
        "Tiny inertias make a joint the fastest motion of the model: servos and damping that "
        "are harmless elsewhere diverge on it.",
        "check the link's mass and inertia (<inertial>, mesh units), or add armature to the "
        "joint (a geared motor's rotor really has it)",
        [g for d in hinge for g in np.flatnonzero(model.geom_bodyid == model.dof_bodyid[d])])


# The densest element, osmium, is 22 590 kg/m³; air is 1.2. A link outside that range has a mass
# or a collision volume that cannot both be right (a mesh in mm, a mass in g, a geom far bigger
# than the part).
DENSITY = (1.2, 22_590.0)  # kg/m³


@_check("density")
def density(s: Subject) -> Iterator[Finding]:
    """Moving rigid links (a body and those welded to it) whose mass over collision volume is
    lighter than air or denser than osmium."""
    s.require_si()
    model = s.model
    odd: list[tuple[int, float]] = []
    link = model.body_weldid
    for b in sorted({int(w) for w in link[s.moving]}):  # per rigid link: masses and shapes add
        bodies = np.flatnonzero(link == b)
        geoms = np.flatnonzero(np.isin(model.geom_bodyid, bodies) & s.collidable)
        volume = sum(geometry.geom_volume(model, g) for g in geoms)
        mass = float(model.body_mass[bodies].sum())
        if volume <= 0 or mass <= 0:
            continue
        rho = mass / volume
        if not DENSITY[0] <= rho <= DENSITY[1]:
            odd.append((b, rho))
    for high in (True, False):
        group = [(b, rho) for b, rho in odd if (rho > DENSITY[1]) == high]
        if not group:
            continue
        values = [rho for _, rho in group]
        worst = max(values) if high else min(values)
        yield _finding(
            "density", "warning", [s.name("body", b) for b, _ in group], worst,
            DENSITY[1] if high else DENSITY[0], "kg/m³",
            f"{_count(len(group), 'rigid link')} {'have' if len(group) > 1 else 'has'} a mass per collision "
            f"volume of {_list(sorted(values))} kg/m³: "
            f"{'denser than osmium' if high else 'lighter than air'}.",
            "A mass and a collision shape that disagree mean one of them is wrong (a mesh in "
            "other units, a placeholder mass, a shape far from the part), and inertia computed "
            "from the geoms is wrong with it.",
            "check the masses and the collision shapes' sizes (and their units)",
            [g for b, _ in group for g in np.flatnonzero((link[model.geom_bodyid] == b)
                                                         & s.collidable)],
            densities={s.name("body", b): rho for b, rho in group})


# --- actuators -----------------------------------------------------------------------------

def _is_position_servo(model: mujoco.MjModel, a: int) -> bool:
    """A gain-fixed, bias-affine actuator with bias = -kp·length (a <position> or its general
    equivalent), kp > 0."""
    import mujoco

    kp = float(model.actuator_gainprm[a, 0])
    return bool(model.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED
                and model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE
                and kp > 0 and np.isclose(model.actuator_biasprm[a, 1], -kp)
                and model.actuator_dyntype[a] == mujoco.mjtDyn.mjDYN_NONE)


@_check("servo-no-forcerange")
def servo_no_forcerange(s: Subject) -> Iterator[Finding]:
    """Position servos that move colliding parts with a force nothing limits (no forcerange, no
    joint actuatorfrcrange): pressed against a contact, they push with kp times the error."""
    import mujoco

    model = s.model
    touching = s.pairs.any(axis=1)
    loose: list[tuple[int, float]] = []
    for a in range(model.nactuator):
        if not _is_position_servo(model, a) or model.actuator_forcelimited[a]:
            continue
        joint = (int(model.actuator_trnid[a, 0]) if model.actuator_trntype[a]
                 == mujoco.mjtTrn.mjTRN_JOINT else None)
        if joint is not None and model.jnt_actfrclimited[joint]:
            continue
        moved = _moved_bodies(s, a)
        if not touching[np.isin(model.geom_bodyid, moved)].any():
            continue  # it moves nothing that can touch anything: no contact to push against
        loose.append((a, _largest_force(model, a, joint)))
    if not loose:
        return
    forces = [f for _, f in loose]
    yield _finding(
        "servo-no-forcerange", "info", [s.name("actuator", a) for a, _ in loose], max(forces), 0,
        "N or N·m",
        f"{_count(len(loose), 'position servo')} that move{'' if len(loose) > 1 else 's'} "
        f"colliding parts {'have' if len(loose) > 1 else 'has'} no force limit: against a contact "
        f"{'they push' if len(loose) > 1 else 'it pushes'} with kp times the error, up to "
        f"{_list(sorted(forces, reverse=True))} (kp × the largest error the ranges allow).",
        "An unlimited servo squeezes a grasped object or presses into a limit as hard as its "
        "error asks: deep penetration, and forces no real motor makes.",
        "set forcerange (forcelimited) to the motor's real torque, or the joint's "
        "actuatorfrcrange", [], largest_force=dict(zip([s.name("actuator", a) for a, _ in loose],
                                                       forces, strict=True)))


def _moved_bodies(s: Subject, actuator: int) -> np.ndarray:
    """Ids of the bodies an actuator moves: those of the dofs its moment row reaches, and
    everything they carry."""
    from ..actuation.moments import moment_matrix

    model = s.model
    row = moment_matrix(model, s.data)[int(model.actuator_outadr[actuator])]
    direct = {int(model.dof_bodyid[d]) for d in np.flatnonzero(np.abs(row) > 0)}
    moved = [b for b in range(model.nbody) if any(_carries(model, r, b) for r in direct)]
    return np.array(sorted(moved), dtype=int)


def _carries(model: mujoco.MjModel, ancestor: int, body: int) -> bool:
    while True:
        if body == ancestor:
            return True
        if body == 0:
            return False
        body = int(model.body_parentid[body])


def _largest_force(model: mujoco.MjModel, actuator: int, joint: int | None) -> float:
    """kp times the largest |ctrl − length| its ctrlrange and its joint's range allow (inf when
    either is unlimited)."""
    if joint is None or not model.actuator_ctrllimited[actuator] or not model.jnt_limited[joint]:
        return float("inf")
    gear = float(model.actuator_gear[actuator, 0])
    lo, hi = sorted(gear * model.jnt_range[joint])
    c_lo, c_hi = model.actuator_ctrlrange[actuator]
    return float(model.actuator_gainprm[actuator, 0] * max(abs(c_hi - lo), abs(hi - c_lo)))


# A servo at half its stability limit diverges when the link it moves gets half as heavy or
# the timestep √2 times longer (the limit on kp scales with I/h²): closer than that is fragile.
SERVO_MARGIN = 0.5


@_check("servo-stability")
def servo_stability(s: Subject) -> Iterator[Finding]:
    """Position servos whose kp is near or past the largest the integrator keeps stable at
    this timestep, with the damping and inertia (armature included) the servo sees."""
    from . import servo as servo_math

    model, data = s.model, s.data
    checked = 0
    for a in range(model.nactuator):
        if not _is_position_servo(model, a):
            continue
        terms = servo_math.actuator_terms(model, data, a, s.inverse_mass)
        if terms is None:
            continue
        checked += 1
        kmax = servo_math.largest_stable_stiffness(terms, float(model.opt.timestep),
                                                   servo_math.integrator_name(model))
        fraction = terms.k / kmax if kmax > 0 else np.inf
        if fraction < SERVO_MARGIN:
            continue
        undamped = servo_math.largest_stable_stiffness(
            terms.without_damping(), float(model.opt.timestep), servo_math.integrator_name(model))
        if kmax > 0 and abs(undamped - kmax) > 0.05 * kmax:
            saved = (f"; without its damping kp would be at {terms.k / undamped:.2g} of the "
                     "limit")
        else:
            saved = ""
        name = servo_math.integrator_name(model)
        summary = (
            f"{s.name('actuator', a)} has kp = {terms.k:.3g} against an apparent inertia of "
            f"{terms.inertia:.3g}: {fraction:.2f} of the largest kp {name} keeps stable at "
            f"h = {model.opt.timestep:.3g} s ({kmax:.3g}){saved}." if kmax > 0 else
            f"{s.name('actuator', a)}'s damping that {name} integrates explicitly "
            f"({terms.explicit:.3g}) exceeds 2·I/h = {2 * terms.inertia / model.opt.timestep:.3g} "
            f"for its apparent inertia {terms.inertia:.3g} at h = {model.opt.timestep:.3g} s: "
            "unstable whatever kp.")
        yield _finding(
            "servo-stability", "error" if fraction >= 1 else "warning",
            [s.name("actuator", a)], fraction, SERVO_MARGIN, "of the limit", summary,
            "Past the limit the servo's oscillation grows every step until MuJoCo reports "
            "'Nan, Inf or huge value in QACC'; near it, a lighter payload tips it over.",
            "use implicitfast (it integrates kv and damping implicitly), a smaller timestep, "
            "more armature on the joint, or a lower kp",
            [g for g in np.flatnonzero(np.isin(model.geom_bodyid, terms.bodies))],
            kp=terms.k, kp_limit=kmax, inertia=terms.inertia, kv=terms.explicit + terms.implicit)
    if not checked:
        raise Skip("no position servo with a joint or tendon transmission")


# --- resting objects -----------------------------------------------------------------------

# Chapter 05's rule of thumb: 1 mm of resting penetration is visible in a picture of a hand-sized
# object (and deeper than the 0.05–1 mm the default parameters give a kilogram body).
REST_DEPTH = 1e-3  # m


@_check("rest-penetration")
def rest_penetration(s: Subject) -> Iterator[Finding]:
    """Free rigid objects that, settled on their support, sink deeper than 1 mm (REST_DEPTH)."""
    from . import resting

    s.require_si()
    objects = resting.free_objects(s.model)
    if not objects:
        raise Skip("no free rigid body to rest")
    for body, prediction in resting.settle(s.model, objects, s.key).items():
        if prediction is None:
            continue
        deepest = float(np.max(prediction.measured))
        predicted = float(np.max(prediction.predicted))
        if max(deepest, predicted) <= REST_DEPTH:
            continue
        yield _finding(
            "rest-penetration", "warning", [s.name("body", body)], predicted * 1e3,
            REST_DEPTH * 1e3, "mm",
            f"{s.name('body', body)} rests on {prediction.contacts} contact"
            f"{'s' if prediction.contacts > 1 else ''}: its solref/solimp predict "
            f"{predicted * 1e3:.3g} mm of penetration, and it sinks {deepest * 1e3:.3g} mm.",
            "A resting object sinks until the soft contact's spring carries its weight; with "
            "soft parameters that is visibly into the table, and a gripper squeezes it deeper.",
            "stiffen the contact (smaller timeconst, ≥ 2·timestep) or raise solimp's dmin/dmax "
            "toward 1", list(np.flatnonzero(s.model.geom_bodyid == body)),
            contacts=prediction.contacts, measured_mm=deepest * 1e3)


def _list(values: object) -> str:
    numbers = [f"{float(v):.3g}" for v in np.ravel(np.asarray(values, dtype=float))]
    return ", ".join(dict.fromkeys(numbers)) if len(numbers) <= 4 else (
        f"{', '.join(list(dict.fromkeys(numbers))[:3])}, …")


def _count(n: int, noun: str) -> str:
    """``"1 hinge"``, ``"3 hinges"``, ``"2 bodies"``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"
