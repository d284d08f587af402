"""Drive joints kinematically, with collision projection: ``labkit.kinematic``.

Many robot bridges do not simulate dynamics at all.  They write joint angles straight into
``qpos``, ask MuJoCo for kinematics and contacts, and read contact distances to keep the
fingers from passing through each other or through the object.  This module is such a driver,
small enough to read:

* :func:`command_to_targets` maps raw commands (e.g. 0–255 per motor) to joint targets;
* :class:`Coupling` ("mimic" joints: follower = ratio·leader + offset), read from a model's
  joint equalities by :func:`couplings_from_model`;
* :class:`Driver` holds three poses — the **goal** (the latest command), the **applied** pose
  (what is written into ``qpos``, moving towards the goal at a limited rate) and the **last
  safe** pose (the last applied pose that did not penetrate) — and on every :meth:`Driver.step`
  slew-limits goal → applied, writes it kinematically, and, if the new pose penetrates, projects
  the step back joint by joint by bisection, starting from the last safe pose when the previous
  one penetrates.

Nothing here integrates anything: no force is ever applied, so a kinematic hand pushes nothing,
feels no grasp force and can hold nothing.  Contacts only report geometry (``contact.dist``).

Cost.  One pose evaluation writes ``qpos`` and calls ``mj_kinematics`` + ``mj_collision``:
that is all that ``contact.dist`` needs (body and geom poses, then the collision pipeline).
``mj_fwdPosition`` also builds the inertia matrix and the constraints, and ``mj_forward`` runs
the whole pipeline including the constraint solver; on the chapter-08 hand, at contact, they
cost about 1.2× and 2× as much per evaluation (collision itself dominates the cheap pair).
Every MuJoCo call the driver makes is counted in :attr:`Driver.calls`, a deterministic measure
of cost.

Units: hinge joints in radians, slide joints in metres; rates in rad/s and m/s; distances
and tolerances in metres; ``dt`` in seconds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import mujoco

__all__ = [
    "Coupling",
    "Driver",
    "StepReport",
    "apply_couplings",
    "command_to_targets",
    "couplings_from_model",
    "joint_ranges",
    "moved_geoms",
    "penetration",
]

#: How the driver asks MuJoCo for contacts when it evaluates a trial pose.
EVALUATORS = ("collision", "fwdposition", "forward")


# -- joints by name ----------------------------------------------------------------------------

def _joint_ids(model: mujoco.MjModel, joints: Iterable[str]) -> list[int]:
    """Joint ids for ``joints`` (names); unknown names raise a KeyError listing the real ones."""
    import mujoco

    ids = []
    for name in joints:
        if not isinstance(name, str):
            raise TypeError(f"joints are given by name (str), got {name!r}")
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if j < 0:
            known = [model.joint(i).name for i in range(model.njnt) if model.joint(i).name]
            raise KeyError(f"the model has no joint named {name!r}; its joints: {known or 'none'}")
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
    """
    ids = _joint_ids(model, joints)
    limited = np.asarray(model.jnt_limited[ids], dtype=bool)
    lo = np.where(limited, model.jnt_range[ids, 0], -np.inf)
    hi = np.where(limited, model.jnt_range[ids, 1], np.inf)
    return lo.astype(float), hi.astype(float)


def _default_joints(model: mujoco.MjModel) -> list[str]:
    import mujoco

    kinds = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    names = [model.joint(i).name for i in range(model.njnt) if int(model.jnt_type[i]) in kinds]
    if any(not n for n in names):
        raise ValueError("the model has unnamed hinge/slide joints: name them, or pass joints=[...]")
    return names


# -- commands ----------------------------------------------------------------------------------

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
    if not np.all(np.isfinite(lo_a) & np.isfinite(hi_a)):
        raise ValueError("lo and hi must be finite: a joint without limits needs explicit targets")
    low, high = (float(c) for c in command_range)
    if not low < high:
        raise ValueError(f"command_range must be (low, high) with low < high, got {command_range!r}")
    rev = np.broadcast_to(np.asarray(reverse, dtype=bool), v.shape)
    fraction = (np.clip(v, low, high) - low) / (high - low)
    fraction = np.where(rev, 1.0 - fraction, fraction)
    targets = lo_a + fraction * (hi_a - lo_a)
    return {name: float(t) for name, t in zip(names, targets, strict=True)}


# -- couplings ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Coupling:
    """A "mimic" joint: ``follower = ratio · leader + offset`` (rad or m).

    The follower never gets a target of its own: whenever the leader moves, the follower is
    set from it, so the relation holds exactly in every pose the driver writes.
    """

    follower: str
    leader: str
    ratio: float = 1.0
    offset: float = 0.0

    def value(self, leader_value: float) -> float:
        """The follower's position for a leader position."""
        return self.ratio * leader_value + self.offset

    def leader_for(self, follower_value: float) -> float:
        """The leader position that puts the follower at ``follower_value``."""
        if self.ratio == 0:
            raise ValueError(f"coupling {self.follower} = {self.offset} is constant: no leader "
                             f"position of {self.leader} can move it")
        return (follower_value - self.offset) / self.ratio


def couplings_from_model(model: mujoco.MjModel) -> list[Coupling]:
    """The joint equalities of ``model`` as :class:`Coupling` objects.

    MuJoCo's joint equality ``<joint joint1="f" joint2="l" polycoef="c0 c1 ..."/>`` requires
    ``f − f0 = c0 + c1 (l − l0) + c2 (l − l0)² + …`` with f0, l0 the joints' ``qpos0``; a
    linear one (c2 = c3 = c4 = 0) is the coupling ``f = c1·l + (f0 + c0 − c1·l0)``.  Nonlinear
    or one-joint equalities raise ValueError (the driver keeps couplings linear).  Inactive
    equalities (``eq_active0`` false) are skipped.
    """
    import mujoco

    out = []
    for i in range(model.neq):
        if int(model.eq_type[i]) != mujoco.mjtEq.mjEQ_JOINT or not model.eq_active0[i]:
            continue
        j1, j2 = int(model.eq_obj1id[i]), int(model.eq_obj2id[i])
        label = model.equality(i).name or f"equality #{i}"
        if j2 < 0:
            raise ValueError(f"{label} fixes joint {model.joint(j1).name!r} to a polynomial of "
                             "nothing (no joint2): not a coupling")
        c = np.asarray(model.eq_data[i, :5], dtype=float)
        if np.any(c[2:] != 0):
            raise ValueError(f"{label} is nonlinear (polycoef {c.tolist()}): the kinematic driver "
                             "supports follower = ratio * leader + offset only")
        f0 = float(model.qpos0[model.jnt_qposadr[j1]])
        l0 = float(model.qpos0[model.jnt_qposadr[j2]])
        out.append(Coupling(model.joint(j1).name, model.joint(j2).name, float(c[1]),
                            f0 + float(c[0]) - float(c[1]) * l0))
    return out


def _ordered(couplings: Sequence[Coupling]) -> list[Coupling]:
    """Couplings sorted so that every leader is final before its followers are set (chains
    such as a → b → c are allowed); cycles and double followers raise ValueError."""
    by_follower: dict[str, Coupling] = {}
    for c in couplings:
        if c.follower == c.leader:
            raise ValueError(f"joint {c.follower!r} cannot follow itself")
        if c.follower in by_follower:
            raise ValueError(f"joint {c.follower!r} has two couplings; a follower follows one leader")
        by_follower[c.follower] = c
    done: list[Coupling] = []
    state: dict[str, int] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name not in by_follower or state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise ValueError(f"couplings form a cycle: {' -> '.join((*path, name))}")
        state[name] = 1
        visit(by_follower[name].leader, (*path, name))
        state[name] = 2
        done.append(by_follower[name])

    for c in couplings:
        visit(c.follower, ())
    return done


def apply_couplings(pose: Mapping[str, float], couplings: Sequence[Coupling]) -> dict[str, float]:
    """A copy of ``pose`` ({joint: value}) with every follower set from its leader.

    Followers are always overwritten, so a pose that breaks a coupling is corrected rather than
    trusted.  A coupling whose leader is missing from ``pose`` raises KeyError.
    """
    out = dict(pose)
    for c in _ordered(couplings):
        if c.leader not in out:
            raise KeyError(f"pose has no value for {c.leader!r}, the leader of {c.follower!r}")
        out[c.follower] = c.value(out[c.leader])
    return out


# -- contacts ----------------------------------------------------------------------------------

def moved_geoms(model: mujoco.MjModel, joints: Sequence[str]) -> np.ndarray:
    """Ids of the geoms that ``joints`` (names) move: those on the joints' bodies and on every
    body below them in the tree.  Shape (k,), sorted."""
    ids = _joint_ids(model, joints)
    roots = {int(model.jnt_bodyid[j]) for j in ids}
    moved = np.zeros(model.nbody, dtype=bool)
    for b in range(model.nbody):  # parents come before children in MuJoCo's body order
        moved[b] = b in roots or (b > 0 and moved[model.body_parentid[b]])
    return np.flatnonzero(moved[model.geom_bodyid])


def penetration(model: mujoco.MjModel, data: mujoco.MjData,
                geoms: Iterable[int] | np.ndarray | None = None) -> float:
    """Worst penetration depth (m, ≥ 0) among the contacts in ``data``.

    Reads ``data.contact[:ncon].dist`` (negative = overlap) as left by the last ``mj_collision``
    (or ``mj_forward``/``mj_step``).  geoms: ids; only contacts with at least one geom in this
    set count (None: every contact).  0 when no counted contact overlaps.
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


# -- the driver --------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepReport:
    """What one :meth:`Driver.step` did.

    status: ``"free"`` (the slewed pose did not penetrate and was written as is),
        ``"projected"`` (it did; joints were cut back by bisection, starting from the previous
        pose, to a pose that does not), ``"fallback"`` (the previous pose penetrated too, so the
        projection started from the last safe pose), ``"stuck"`` (no safe pose is known in the
        current world; the less penetrating of the previous pose and the slewed one was kept).
    penetration: worst penetration (m) of the pose left in ``data``.
    evaluations: trial poses written and collided in this step (the final write included).
    limited: active joints that were held back from their slewed value, in the order processed.
    """

    status: str
    penetration: float
    evaluations: int
    limited: tuple[str, ...] = ()


class Driver:
    """Kinematic joint driver with slew-rate limits and collision projection.

    model, data: the MuJoCo model and its data; the driver writes ``data.qpos`` of its joints
        (and zeros their ``qvel``) and never steps the simulation.
    joints: names of the hinge/slide joints to drive (default: every hinge and slide joint).
    couplings: "mimic" relations; ``"model"`` (default) reads the model's joint equalities among
        ``joints``; followers get no targets of their own.  The joints that are not followers
        are the **active** joints, in :attr:`active` order.
    slew: maximum speed of an active joint, rad/s for hinges (a number, a {joint: rate} mapping,
        or None for no limit: the goal is applied in one step).  Followers move at |ratio|
        times their leader's rate.
    slide_slew: maximum speed (m/s) of active slide joints when ``slew`` is a number.
    project: cut penetrating steps back (True), or write slewed poses as they are (False).
    tolerance: a pose is *safe* when its worst penetration (m) is at most this; it is also the
        accuracy with which a blocked joint stops at contact.
    iterations: bisection halvings per blocked joint and step; the stop position is found to
        within (step size)/2**iterations.
    geoms: ids or names of geoms whose contacts count (default: the geoms the driven joints
        move, so e.g. an object resting on a table does not count).
    evaluate: MuJoCo calls used to collide a trial pose: ``"collision"`` (mj_kinematics +
        mj_collision, the cheapest), ``"fwdposition"`` or ``"forward"``.
    final_forward: after each step run mj_forward on the written pose, so that everything in
        ``data`` matches it (sensors, actuator and constraint forces — forces nothing will ever
        apply); the default leaves mj_kinematics + mj_collision results: poses and contacts,
        enough to render and to read ``contact.dist``, and no constraint force at all.
    dt: step duration (s) for the slew limit (default ``model.opt.timestep``).

    The current pose in ``data`` is taken as the initial goal, applied and (if safe) last safe
    pose, with the couplings enforced.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        joints: Sequence[str] | None = None,
        *,
        couplings: Sequence[Coupling] | str = "model",
        slew: float | Mapping[str, float] | None = 5.0,
        slide_slew: float = 0.05,
        project: bool = True,
        tolerance: float = 5e-4,
        iterations: int = 12,
        geoms: Iterable[int | str] | None = None,
        evaluate: str = "collision",
        final_forward: bool = False,
        dt: float | None = None,
    ) -> None:
        import mujoco

        self.model, self.data = model, data
        names = list(_default_joints(model) if joints is None else joints)
        if len(set(names)) != len(names):
            raise ValueError(f"joints lists a name twice: {names}")
        ids = _joint_ids(model, names)
        self.joints: tuple[str, ...] = tuple(names)
        self._index = {n: i for i, n in enumerate(names)}
        self._qadr = np.asarray(model.jnt_qposadr[ids], dtype=int)
        self._vadr = np.asarray(model.jnt_dofadr[ids], dtype=int)
        self.lo, self.hi = joint_ranges(model, names)
        slide = np.asarray(model.jnt_type[ids] == mujoco.mjtJoint.mjJNT_SLIDE, dtype=bool)

        if isinstance(couplings, str):
            if couplings != "model":
                raise ValueError("couplings must be 'model' or a list of Coupling objects")
            couplings = [c for c in couplings_from_model(model)
                         if c.follower in self._index and c.leader in self._index]
        self.couplings: tuple[Coupling, ...] = tuple(_ordered(list(couplings)))
        for c in self.couplings:
            for role, name in (("follower", c.follower), ("leader", c.leader)):
                if name not in self._index:
                    raise KeyError(f"coupling {c.follower} <- {c.leader}: the {role} {name!r} is not "
                                   f"among the driven joints {list(self.joints)}")
            self._check_coupling_range(c)
        followers = {c.follower for c in self.couplings}
        self.active: tuple[str, ...] = tuple(n for n in names if n not in followers)
        self._active = np.asarray([self._index[n] for n in self.active], dtype=int)
        self._cf = np.asarray([self._index[c.follower] for c in self.couplings], dtype=int)
        self._cl = np.asarray([self._index[c.leader] for c in self.couplings], dtype=int)
        self._cr = np.asarray([c.ratio for c in self.couplings], dtype=float)
        self._co = np.asarray([c.offset for c in self.couplings], dtype=float)

        self.dt = float(model.opt.timestep if dt is None else dt)
        if not self.dt > 0:
            raise ValueError(f"dt must be a positive duration in seconds, got {dt!r}")
        self.rate = self._rates(slew, slide_slew, slide)
        if not tolerance >= 0:
            raise ValueError(f"tolerance is a penetration depth in metres (≥ 0), got {tolerance!r}")
        if int(iterations) != iterations or iterations < 0:
            raise ValueError(f"iterations must be a whole number ≥ 0, got {iterations!r}")
        if evaluate not in EVALUATORS:
            raise ValueError(f"evaluate must be one of {EVALUATORS}, got {evaluate!r}")
        self.project, self.tolerance, self.iterations = bool(project), float(tolerance), int(iterations)
        self.evaluate, self.final_forward = evaluate, bool(final_forward)
        self.geoms = self._geom_ids(geoms, names)
        self.calls: Counter[str] = Counter()

        start = self._couple(np.asarray(data.qpos[self._qadr], dtype=float))
        self._goal = start.copy()
        self._applied = start.copy()
        self._last_safe: np.ndarray | None = None
        self._write_and_collide(start, final=True)
        if self.penetration() <= self.tolerance:
            self._last_safe = start.copy()

    # -- set-up helpers ------------------------------------------------------------------------
    def _check_coupling_range(self, c: Coupling) -> None:
        lo_l, hi_l = self.lo[self._index[c.leader]], self.hi[self._index[c.leader]]
        lo_f, hi_f = self.lo[self._index[c.follower]], self.hi[self._index[c.follower]]
        if not (math.isfinite(lo_l) and math.isfinite(hi_l)):
            return
        ends = sorted((c.value(lo_l), c.value(hi_l)))
        if ends[0] < lo_f - 1e-12 or ends[1] > hi_f + 1e-12:
            raise ValueError(
                f"coupling {c.follower} = {c.ratio:g}·{c.leader} + {c.offset:g} maps {c.leader}'s range "
                f"[{lo_l:g}, {hi_l:g}] to [{ends[0]:g}, {ends[1]:g}], outside {c.follower}'s range "
                f"[{lo_f:g}, {hi_f:g}]: widen the follower's range or narrow the leader's")

    def _rates(self, slew: Any, slide_slew: float, slide: np.ndarray) -> np.ndarray:
        rate = np.full(len(self.joints), np.inf)
        if slew is None:
            return rate
        if isinstance(slew, Mapping):
            for name, value in slew.items():
                if name not in self._index:
                    raise KeyError(f"slew names {name!r}, which is not a driven joint; driven: "
                                   f"{list(self.joints)}")
                rate[self._index[name]] = float(value)
        else:
            rate[:] = np.where(slide, float(slide_slew), float(slew))
        if np.any(rate <= 0) or np.any(np.isnan(rate)):
            raise ValueError("slew rates must be positive (rad/s or m/s); use slew=None for no limit")
        return rate

    def _geom_ids(self, geoms: Any, names: list[str]) -> np.ndarray:
        import mujoco

        if geoms is None:
            return moved_geoms(self.model, names)
        ids = []
        for g in geoms:
            if isinstance(g, str):
                k = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, g)
                if k < 0:
                    known = [self.model.geom(i).name for i in range(self.model.ngeom)
                             if self.model.geom(i).name]
                    raise KeyError(f"the model has no geom named {g!r}; named geoms: {known}")
                ids.append(k)
            else:
                if not 0 <= int(g) < self.model.ngeom:
                    raise KeyError(f"geom id {g} is out of range (ngeom = {self.model.ngeom})")
                ids.append(int(g))
        return np.asarray(sorted(set(ids)), dtype=int)

    # -- poses as dicts ------------------------------------------------------------------------
    def _as_dict(self, values: np.ndarray) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.joints, values, strict=True)}

    @property
    def goal(self) -> dict[str, float]:
        """The pose the driver is heading for, {joint: value} (couplings applied)."""
        return self._as_dict(self._goal)

    @property
    def applied(self) -> dict[str, float]:
        """The pose last written into ``data.qpos``, {joint: value}."""
        return self._as_dict(self._applied)

    @property
    def last_safe(self) -> dict[str, float] | None:
        """The last applied pose whose penetration was within tolerance (None if never)."""
        return None if self._last_safe is None else self._as_dict(self._last_safe)

    def _couple(self, q: np.ndarray) -> np.ndarray:
        for f, ld, r, o in zip(self._cf, self._cl, self._cr, self._co, strict=True):
            q[f] = r * q[ld] + o
        return q

    # -- goals ---------------------------------------------------------------------------------
    def set_goal(self, targets: Mapping[str, float]) -> dict[str, float]:
        """Set new targets, {joint: value} (rad or m); joints not named keep their goal.

        A target for a follower is turned into its leader's target (leader = (target −
        offset)/ratio), as for a motor that is commanded in its fingertip's angle.  Targets are
        clipped to the joint ranges.  Returns the new goal pose (couplings applied).
        """
        goal = self._goal.copy()
        given: dict[int, float] = {}
        by_follower = {c.follower: c for c in self.couplings}
        for name, value in targets.items():
            if name not in self._index:
                raise KeyError(f"{name!r} is not a driven joint; driven joints: {list(self.joints)}")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"target for {name!r} must be a finite number, got {value!r}")
            while name in by_follower:  # follower target -> leader target (chains too)
                c = by_follower[name]
                name, value = c.leader, c.leader_for(value)
            i = self._index[name]
            if i in given and not math.isclose(given[i], value, rel_tol=1e-12, abs_tol=1e-12):
                raise ValueError(f"conflicting targets for {name!r} (directly and through a coupled "
                                 f"joint): {given[i]:g} and {value:g}")
            given[i] = value
        for i, value in given.items():
            goal[i] = value
        goal[self._active] = np.clip(goal[self._active], self.lo[self._active], self.hi[self._active])
        self._goal = self._couple(goal)
        return self.goal

    def command(self, values: Sequence[float] | np.ndarray, *,
                command_range: tuple[float, float] = (0.0, 255.0),
                reverse: bool | Sequence[bool] = False) -> dict[str, float]:
        """Set the goal from raw commands, one per active joint in :attr:`active` order, mapped
        onto each joint's range by :func:`command_to_targets`.  Returns the new goal."""
        lo, hi = self.lo[self._active], self.hi[self._active]
        targets = command_to_targets(values, self.active, lo, hi,
                                     command_range=command_range, reverse=reverse)
        return self.set_goal(targets)

    # -- MuJoCo calls --------------------------------------------------------------------------
    def _write_and_collide(self, q: np.ndarray, *, final: bool = False) -> None:
        import mujoco

        m, d = self.model, self.data
        d.qpos[self._qadr] = q
        d.qvel[self._vadr] = 0.0
        how = "forward" if final and self.final_forward else self.evaluate
        if how == "collision":
            mujoco.mj_kinematics(m, d)
            mujoco.mj_collision(m, d)
            self.calls["mj_kinematics"] += 1
            self.calls["mj_collision"] += 1
        elif how == "fwdposition":
            mujoco.mj_fwdPosition(m, d)
            self.calls["mj_fwdPosition"] += 1
        else:
            mujoco.mj_forward(m, d)
            self.calls["mj_forward"] += 1

    def penetration(self) -> float:
        """Worst penetration (m) among the counted contacts now in ``data``."""
        return penetration(self.model, self.data, self.geoms)

    def _unsafe(self, q: np.ndarray) -> bool:
        self._evaluations += 1
        self._write_and_collide(q)
        return self.penetration() > self.tolerance

    # -- the step ------------------------------------------------------------------------------
    def _slewed(self) -> np.ndarray:
        q = self._applied.copy()
        a = self._active
        limit = self.rate[a] * self.dt
        gap = self._goal[a] - q[a]
        # within one step of the goal: land on it exactly (q + (goal - q) can miss it by a bit)
        q[a] = np.where(np.abs(gap) <= limit, self._goal[a], q[a] + np.clip(gap, -limit, limit))
        q[a] = np.clip(q[a], self.lo[a], self.hi[a])
        return self._couple(q)

    def step(self) -> StepReport:
        """Advance one step: slew applied → goal, write it, and project it if it penetrates.

        1. candidate = applied moved towards goal by at most rate·dt per active joint
           (followers set from their leaders);
        2. write and collide it; if it is safe (penetration ≤ tolerance) it becomes applied
           (status ``"free"``);
        3. otherwise pick a safe starting pose: the previous applied pose if it is safe
           (``"projected"``), else the last safe pose if it still is (``"fallback"``); from there
           move the active joints towards the candidate one at a time, the largest step first:
           a joint that can take its whole step takes it; a blocked one is bisected
           ``iterations`` times between where it is and where it was going and keeps the
           furthest safe value (its followers move with it in every trial).  Every accepted
           trial was safe, so the result is safe;
        4. if no safe starting pose exists (something moved into the hand: a free object, a
           mocap body, an edited model), no projection can help: the driver keeps whichever of
           the previous pose and the candidate penetrates less (``"stuck"``), so a command that
           backs out of the overlap still moves the hand.
        """
        self._evaluations = 0
        previous = self._applied
        candidate = self._slewed()
        if not self.project:
            self._finish(candidate)
            return StepReport("free", self.penetration(), self._evaluations)
        if not self._unsafe(candidate):
            self._finish(candidate, written=True)
            return StepReport("free", self.penetration(), self._evaluations)
        depth_candidate = self.penetration()

        status, base = "projected", previous.copy()
        if self._unsafe(base):
            depth_previous = self.penetration()
            if self._last_safe is not None and not self._unsafe(self._last_safe):
                status, base = "fallback", self._last_safe.copy()
            else:
                keep = candidate if depth_candidate < depth_previous else previous
                self._finish(keep.copy())
                return StepReport("stuck", self.penetration(), self._evaluations)
        limited = []
        order = sorted(self._active, key=lambda i: -abs(candidate[i] - base[i]))
        for i in order:
            if candidate[i] == base[i]:
                continue
            trial = base.copy()
            trial[i] = candidate[i]
            if not self._unsafe(self._couple(trial)):
                base = trial
                continue
            limited.append(self.joints[i])
            safe, blocked = base[i], candidate[i]
            for _ in range(self.iterations):
                trial[i] = 0.5 * (safe + blocked)
                if self._unsafe(self._couple(trial)):
                    blocked = trial[i]
                else:
                    safe = trial[i]
            trial[i] = safe
            base = self._couple(trial)
        self._finish(base)
        return StepReport(status, self.penetration(), self._evaluations, tuple(limited))

    def _finish(self, q: np.ndarray, *, written: bool = False) -> None:
        """Make ``q`` the applied pose; ``written``: data already holds it, collided."""
        if not written or self.final_forward:
            self._evaluations += 1
            self._write_and_collide(q, final=True)
        self._applied = q
        if self.penetration() <= self.tolerance:
            self._last_safe = q.copy()

    def run(self, steps: int) -> list[StepReport]:
        """Call :meth:`step` ``steps`` times; returns their reports."""
        return [self.step() for _ in range(int(steps))]

    def reset(self, pose: Mapping[str, float] | None = None) -> dict[str, float]:
        """Teleport: goal = applied = ``pose`` (couplings applied; joints not named keep their
        applied value), written without projection.  It becomes the last safe pose if it is
        safe.  Returns the applied pose."""
        q = self._applied.copy()
        for name, value in (pose or {}).items():
            if name not in self._index:
                raise KeyError(f"{name!r} is not a driven joint; driven joints: {list(self.joints)}")
            q[self._index[name]] = float(value)
        q = self._couple(q)
        self._goal = q.copy()
        self._evaluations = 0
        self._finish(q)
        return self.applied

    # -- measures ------------------------------------------------------------------------------
    def tracking_error(self, reference: Mapping[str, float] | None = None) -> float:
        """Largest |position in data.qpos − reference| over the active joints (rad or m; mixed
        units if the driver has both kinds of joint).  reference: default the goal."""
        ref = self._goal.copy()
        for name, value in (reference or {}).items():
            if name not in self._index:
                raise KeyError(f"{name!r} is not a driven joint; driven joints: {list(self.joints)}")
            ref[self._index[name]] = float(value)
        q = np.asarray(self.data.qpos[self._qadr], dtype=float)
        return float(np.max(np.abs(q[self._active] - ref[self._active]))) if self._active.size else 0.0

    def coupling_error(self) -> float:
        """Largest |follower − (ratio·leader + offset)| in ``data.qpos`` (rad or m)."""
        if not self.couplings:
            return 0.0
        q = np.asarray(self.data.qpos[self._qadr], dtype=float)
        return float(np.max(np.abs(q[self._cf] - (self._cr * q[self._cl] + self._co))))
