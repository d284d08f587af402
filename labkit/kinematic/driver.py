"""The kinematic :class:`Driver`: slew-limited goals written into ``qpos``, projected out of
collisions by bisection.  It combines :mod:`.commands` (targets, slew), :mod:`.couplings`
(mimic joints) and :mod:`.projection` (penetration, bisection).

Units: hinge joints in radians, slide joints in metres; rates in rad/s and m/s; distances
and tolerances in metres; ``dt`` in seconds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .commands import command_to_targets, default_joints, joint_ids, joint_ranges, slew_towards
from .couplings import Coupling, PoseCoupler, check_coupling_range, couplings_from_model, order_couplings
from .projection import EVALUATORS, bisect, collide, geom_ids, moved_geoms, penetration

if TYPE_CHECKING:
    import mujoco

__all__ = ["Driver", "StepReport"]

#: Two depths (m) of one geom pair closer than this are the same overlap.  A pair that the
#: motion carries rigidly is collided again from new world poses, which changes its depth by
#: rounding only: at most 6e-17 m measured on dm_control's ant, Jaco arm (meshes) and CMU
#: humanoid; this is six orders above that and far below any tolerance a driver uses.
SAME_DEPTH = 1e-10

Pair = tuple[int, int]


@dataclass(frozen=True)
class StepReport:
    """What one :meth:`Driver.step` did.

    status: ``"free"`` (the slewed pose did not penetrate and was written as is),
        ``"projected"`` (it did; joints were cut back by bisection, starting from the previous
        pose, to a pose that does not), ``"fallback"`` (the previous pose penetrated too, so the
        projection started from the last safe pose), ``"overlap"`` (no safe pose is known in the
        current world: the driver started on an overlap, was reset into one, or something moved
        into it; the step was projected from the previous pose with that pose's overlaps
        tolerated: each geom pair may stay as deep or get shallower, never deeper, and a new
        one is refused as always, so joints that do not deepen an overlap move freely).
    penetration: worst penetration (m) of the pose left in ``data``.
    evaluations: trial poses written and collided in this step (the final write included).
    limited: active joints that were held back from their slewed value, in the order processed.

    Example: ``StepReport("projected", 0.0004, 14, ("index_mcp",))``.
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
        mj_collision, the cheapest; right for rigid bodies, while a flex in the scene needs
        ``mj_flex`` first, so use ``"fwdposition"`` there), ``"fwdposition"`` or ``"forward"``.
    final_forward: after each step run mj_forward on the written pose, so that everything in
        ``data`` matches it (sensors, actuator and constraint forces — forces nothing will ever
        apply); the default leaves mj_kinematics + mj_collision results: body, geom and site
        poses and the contacts, enough to read ``contact.dist`` and to render from a camera fixed
        in the world (cameras and lights on moving bodies are placed by mj_camlight, which only
        mj_forward runs), and no constraint force at all.
    dt: step duration (s) for the slew limit (default ``model.opt.timestep``).

    The current pose in ``data`` is taken as the initial goal, applied and (if safe) last safe
    pose, with the couplings enforced.

    Example: ``driver = Driver(model, data); driver.set_goal({"index_mcp": 1.5}); driver.run(300)``.
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
        names = list(default_joints(model) if joints is None else joints)
        if len(set(names)) != len(names):
            raise ValueError(f"joints lists a name twice: {names}")
        ids = joint_ids(model, names)
        self._jnt = np.asarray(ids, dtype=int)
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
        self.couplings: tuple[Coupling, ...] = tuple(order_couplings(list(couplings)))
        for c in self.couplings:
            for role, name in (("follower", c.follower), ("leader", c.leader)):
                if name not in self._index:
                    raise KeyError(f"coupling {c.follower} <- {c.leader}: the {role} {name!r} is not "
                                   f"among the driven joints {list(self.joints)}")
            leader, follower = self._index[c.leader], self._index[c.follower]
            check_coupling_range(c, (self.lo[leader], self.hi[leader]),
                                 (self.lo[follower], self.hi[follower]))
        followers = {c.follower for c in self.couplings}
        self.active: tuple[str, ...] = tuple(n for n in names if n not in followers)
        self._active = np.asarray([self._index[n] for n in self.active], dtype=int)
        self._couple = PoseCoupler(self.couplings, self._index)

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
        self.geoms = moved_geoms(model, names) if geoms is None else geom_ids(model, geoms)
        self.calls: Counter[str] = Counter()

        start = self._couple(np.asarray(data.qpos[self._qadr], dtype=float))
        self._goal = start.copy()
        self._applied = start.copy()
        self._last_safe: np.ndarray | None = None
        self._allowed: dict[Pair, float] = {}
        self._write_and_collide(start, final=True)
        self._allowed = self._tolerated(self.overlaps())
        if self.penetration() <= self.tolerance:
            self._last_safe = start.copy()

    def _rates(self, slew: float | Mapping[str, float] | None, slide_slew: float,
               slide: np.ndarray) -> np.ndarray:
        """Maximum speed of each driven joint, shape (n,), rad/s or m/s (inf: no limit)."""
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

    # -- poses as dicts ------------------------------------------------------------------------
    def _as_dict(self, values: np.ndarray) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.joints, values, strict=True)}

    def _positions(self, pose: Mapping[str, float] | None, base: np.ndarray) -> np.ndarray:
        """A copy of ``base`` with the joints named in ``pose`` set; other names raise KeyError."""
        q = base.copy()
        for name, value in (pose or {}).items():
            if name not in self._index:
                raise KeyError(f"{name!r} is not a driven joint; driven joints: {list(self.joints)}")
            q[self._index[name]] = float(value)
        return q

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

    # -- goals ---------------------------------------------------------------------------------
    def set_goal(self, targets: Mapping[str, float]) -> dict[str, float]:
        """Set new targets, {joint: value} (rad or m); joints not named keep their goal.

        A target for a follower is turned into its leader's target (leader = (target −
        offset)/ratio), as for a motor that is commanded in its fingertip's angle.  Targets are
        clipped to the joint ranges.  Returns the new goal pose (couplings applied).

        Example: ``driver.set_goal({"index_mcp": 1.5, "index_dip": 1.2})``.
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
                reverse: bool | Sequence[bool] = False,
                ranges: Mapping[str, tuple[float, float]] | None = None) -> dict[str, float]:
        """Set the goal from raw commands, shape (len(active),), one per active joint in
        :attr:`active` order, mapped onto each joint's target range by
        :func:`command_to_targets`.  Returns the new goal, {joint: value} (rad or m).

        The target range of a joint is its limits (``jnt_range``).  A hinge without limits (a
        continuous joint: a wheel, a turntable) maps the command range onto one turn, −π to
        +π rad.  ``ranges`` sets the target range of any active joint, {joint: (lo, hi)} in
        rad or m (a slide without limits needs one); targets still stop at the joint's
        limits.

        Example: ``driver.command([255] * len(driver.active))`` (every joint to its upper limit).
        """
        import mujoco

        lo, hi = self.lo[self._active].copy(), self.hi[self._active].copy()
        position = {n: k for k, n in enumerate(self.active)}
        for name, pair in (ranges or {}).items():
            if name not in position:
                role = "a follower (command its leader)" if name in self._index else "not driven"
                raise KeyError(f"ranges names {name!r}, which is {role}; the active joints, one "
                               f"command each: {list(self.active)}")
            try:
                a, b = (float(v) for v in pair)
            except (TypeError, ValueError):
                a = b = math.nan
            if not (math.isfinite(a) and math.isfinite(b)) or a == b:
                raise ValueError(f"ranges[{name!r}] must be two different finite numbers (lo, hi), "
                                 f"in rad or m; got {pair!r}")
            lo[position[name]], hi[position[name]] = a, b
        kinds = self.model.jnt_type[self._jnt[self._active]]
        open_ended = ~(np.isfinite(lo) & np.isfinite(hi))
        hinge = kinds == int(mujoco.mjtJoint.mjJNT_HINGE)
        lo[open_ended & hinge], hi[open_ended & hinge] = -math.pi, math.pi   # one turn
        slides = [self.active[k] for k in np.flatnonzero(open_ended & ~hinge)]
        if slides:
            example = ", ".join(f"{n!r}: (lo, hi)" for n in slides)
            several = len(slides) > 1
            raise ValueError(
                f"slide joint{'s' if several else ''} {', '.join(map(repr, slides))} "
                f"{'have' if several else 'has'} no limits, so a command has no target range for "
                f"{'them' if several else 'it'}: pass ranges={{{example}}} in metres, leave "
                f"{'them' if several else 'it'} out of the driver (Driver(model, data, "
                "joints=[...])), or set targets in metres with set_goal")
        targets = command_to_targets(values, self.active, lo, hi,
                                     command_range=command_range, reverse=reverse)
        return self.set_goal(targets)

    # -- MuJoCo calls --------------------------------------------------------------------------
    def _write_and_collide(self, q: np.ndarray, *, final: bool = False) -> None:
        self.data.qpos[self._qadr] = q
        self.data.qvel[self._vadr] = 0.0
        how = "forward" if final and self.final_forward else self.evaluate
        collide(self.model, self.data, how, self.calls)

    def penetration(self) -> float:
        """Worst penetration (m) among the counted contacts now in ``data``.

        Example: ``driver.penetration()`` → ``0.0`` for the open hand.
        """
        return penetration(self.model, self.data, self.geoms)

    def overlaps(self) -> dict[tuple[int, int], float]:
        """The counted geom pairs now in ``data`` that penetrate deeper than the tolerance:
        {(geom1, geom2): depth (m)}, geom1 < geom2, the deepest contact of each pair.

        Example: ``driver.overlaps()`` → ``{(3, 7): 0.0135}`` for a thumb root inside a palm.
        """
        n = int(self.data.ncon)
        if n == 0:
            return {}
        contact = self.data.contact
        depth = -np.asarray(contact.dist[:n], dtype=float)
        g1, g2 = np.asarray(contact.geom1[:n], dtype=int), np.asarray(contact.geom2[:n], dtype=int)
        counted = np.zeros(self.model.ngeom, dtype=bool)
        counted[np.asarray(self.geoms, dtype=int)] = True
        keep = (depth > self.tolerance) & (counted[g1] | counted[g2])
        found: dict[Pair, float] = {}
        for a, b, d in zip(np.minimum(g1, g2)[keep].tolist(), np.maximum(g1, g2)[keep].tolist(),
                           depth[keep].tolist(), strict=True):
            if d > found.get((a, b), 0.0):
                found[(a, b)] = d
        return found

    def _tolerated(self, found: dict[Pair, float]) -> dict[Pair, float]:
        """The depth (m) each overlap in ``found`` may keep: a pair already tolerated keeps the
        smaller of its allowance and its depth, so an overlap that was backed out of cannot be
        pushed back in; a new pair, or one that something else pushed deeper, gets its depth."""
        allowed = {}
        for pair, depth in found.items():
            old = self._allowed.get(pair)
            allowed[pair] = depth if old is None or depth > old + SAME_DEPTH else min(old, depth)
        return allowed

    @staticmethod
    def _deepened(found: dict[Pair, float], allowed: dict[Pair, float]) -> bool:
        """Whether a pair in ``found`` (all deeper than the tolerance) is new or deeper than
        ``allowed`` lets it be."""
        return any(pair not in allowed or depth > allowed[pair] + SAME_DEPTH
                   for pair, depth in found.items())

    def _unsafe(self, q: np.ndarray) -> bool:
        self._evaluations += 1
        self._write_and_collide(q)
        return self.penetration() > self.tolerance

    # -- the step ------------------------------------------------------------------------------
    def _slewed(self) -> np.ndarray:
        q = self._applied.copy()
        a = self._active
        q[a] = slew_towards(q[a], self._goal[a], self.rate[a] * self.dt, self.lo[a], self.hi[a])
        return self._couple(q)

    def step(self) -> StepReport:
        """Advance one step: slew applied → goal, write it, and project it if it penetrates.

        1. candidate = applied moved towards goal by at most rate·dt per active joint
           (followers set from their leaders);
        2. write and collide it; if it is safe (penetration ≤ tolerance) it becomes applied
           (status ``"free"``);
        3. otherwise pick a safe starting pose: the previous applied pose if it is safe
           (``"projected"``), else the last safe pose if it still is (``"fallback"``); from there
           move the active joints towards the candidate one at a time, the largest step first
           (:func:`~labkit.kinematic.projection.bisect`): a joint that can take its whole step
           takes it; a blocked one is bisected ``iterations`` times between where it is and
           where it was going and keeps the furthest safe value (its followers move with it in
           every trial).  Every accepted trial was safe, so the result is safe;
        4. if no safe starting pose exists (the driver started on an overlap, or was reset
           into one, and never saw a safe pose; or something moved into the hand: a free
           object, a mocap body, an edited model), the previous pose is the start, with its
           overlaps tolerated (status ``"overlap"``): a trial is refused if a geom pair in it is
           deeper than in that pose (or than it has been since: an overlap backed out of
           cannot be pushed back in), or if a pair not overlapping there now penetrates beyond
           the tolerance.  The candidate is kept whole if it passes; else the bisection of
           step 3 runs with that test.  So an overlap that the motion cannot change blocks
           nothing, a command that backs out of one moves the hand, and contacts that the
           motion makes are projected as always.

        Example: ``driver.step().status`` → ``"free"`` while nothing is touched.
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
        found_candidate = self.overlaps()

        status, base = "projected", previous.copy()
        if self._unsafe(base):
            if self._last_safe is not None and not self._unsafe(self._last_safe):
                status, base = "fallback", self._last_safe.copy()
            else:
                return self._step_on_overlap(previous, candidate, found_candidate)
        base, limited = bisect(base, candidate, self._active, self._unsafe, self._couple, self.iterations)
        self._finish(base)
        return StepReport(status, self.penetration(), self._evaluations,
                          tuple(self.joints[i] for i in limited))

    def _step_on_overlap(self, previous: np.ndarray, candidate: np.ndarray,
                         found_candidate: dict[Pair, float]) -> StepReport:
        """Step 4 of :meth:`step`: project from ``previous``, tolerating its overlaps."""
        if self._last_safe is not None:     # data holds the last safe pose: collide previous again
            self._evaluations += 1
            self._write_and_collide(previous)
        allowed = self._allowed = self._tolerated(self.overlaps())
        if not self._deepened(found_candidate, allowed):
            self._finish(candidate)
            return StepReport("overlap", self.penetration(), self._evaluations)

        def unsafe(q: np.ndarray) -> bool:
            self._evaluations += 1
            self._write_and_collide(q)
            return self._deepened(self.overlaps(), allowed)

        base, limited = bisect(previous.copy(), candidate, self._active, unsafe, self._couple,
                               self.iterations)
        self._finish(base)
        return StepReport("overlap", self.penetration(), self._evaluations,
                          tuple(self.joints[i] for i in limited))

    def _finish(self, q: np.ndarray, *, written: bool = False) -> None:
        """Make ``q`` the applied pose; ``written``: data already holds it, collided."""
        if not written or self.final_forward:
            self._evaluations += 1
            self._write_and_collide(q, final=True)
        self._applied = q
        self._allowed = self._tolerated(self.overlaps())
        if self.penetration() <= self.tolerance:
            self._last_safe = q.copy()

    def run(self, steps: int) -> list[StepReport]:
        """Call :meth:`step` ``steps`` times; returns their reports, one per step.

        Example: ``max(r.penetration for r in driver.run(300))`` → worst depth (m) of a close.
        """
        return [self.step() for _ in range(int(steps))]

    def reset(self, pose: Mapping[str, float] | None = None) -> dict[str, float]:
        """Teleport: goal = applied = ``pose`` (couplings applied; joints not named keep their
        applied value), written without projection.  It becomes the last safe pose if it is
        safe.  Returns the applied pose, {joint: value} (rad or m).

        Example: ``driver.reset({"index_mcp": 0.0})``.
        """
        q = self._couple(self._positions(pose, self._applied))
        self._goal = q.copy()
        self._evaluations = 0
        self._finish(q)
        return self.applied

    # -- measures ------------------------------------------------------------------------------
    def tracking_error(self, reference: Mapping[str, float] | None = None) -> float:
        """Largest |position in data.qpos − reference| over the active joints (rad or m; mixed
        units if the driver has both kinds of joint).  reference: default the goal.

        Example: ``driver.tracking_error()`` → ``0.0`` once the goal is reached unobstructed.
        """
        ref = self._positions(reference, self._goal)
        q = np.asarray(self.data.qpos[self._qadr], dtype=float)
        return float(np.max(np.abs(q[self._active] - ref[self._active]))) if self._active.size else 0.0

    def coupling_error(self) -> float:
        """Largest |follower − (ratio·leader + offset)| in ``data.qpos`` (rad or m).

        Example: ``driver.coupling_error()`` → ``0.0``: every written pose is coupled.
        """
        return self._couple.error(np.asarray(self.data.qpos[self._qadr], dtype=float))
