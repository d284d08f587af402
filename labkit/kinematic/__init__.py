"""Drive joints kinematically, with collision projection: ``labkit.kinematic``.

Many robot bridges do not simulate dynamics at all.  They write joint angles straight into
``qpos``, ask MuJoCo for kinematics and contacts, and read contact distances to keep the
fingers from passing through each other or through the object.  This package is such a driver,
small enough to read, in four modules by job:

* :mod:`.commands`: :func:`command_to_targets` maps raw commands (e.g. 0–255 per motor) to
  joint targets, :func:`joint_ranges` reads the limits, ``slew_towards`` limits the speed;
* :mod:`.couplings`: :class:`Coupling` ("mimic" joints: follower = ratio·leader + offset),
  read from a model's joint equalities by :func:`couplings_from_model`;
* :mod:`.projection`: :func:`penetration` of the geoms that :func:`moved_geoms` lists, and
  the bisection that cuts a penetrating step back;
* :mod:`.driver`: :class:`Driver` holds three poses — the **goal** (the latest command), the
  **applied** pose (what is written into ``qpos``, moving towards the goal at a limited rate)
  and the **last safe** pose (the last applied pose that did not penetrate) — and on every
  :meth:`Driver.step` slew-limits goal → applied, writes it kinematically, and, if the new pose
  penetrates, projects the step back joint by joint by bisection, starting from the last safe
  pose when the previous one penetrates.  When no safe pose is known (it started on an overlap,
  or the world moved into the hand) it takes the overlaps of the pose it holds as given, per
  geom pair (:meth:`Driver.overlaps`): each may stay as deep or get shallower, never deeper, and
  a new one is refused, so an overlap that the motion cannot change blocks nothing.

Every public name is importable from ``labkit.kinematic`` itself.

Nothing here integrates anything: no force is ever applied, so a kinematic hand pushes nothing,
feels no grasp force and can hold nothing.  Contacts only report geometry (``contact.dist``).

Cost.  One pose evaluation writes ``qpos`` and calls ``mj_kinematics`` + ``mj_collision``:
for rigid bodies that is all that ``contact.dist`` needs (body and geom poses, then the
collision pipeline; a flex needs ``mj_flex`` too, which ``evaluate="fwdposition"`` runs).
``mj_fwdPosition`` also builds the inertia matrix and the constraints, and ``mj_forward`` runs
the whole pipeline including the constraint solver; on the chapter-08 hand, at contact, they
cost about 1.2× and 2× as much per evaluation (collision itself dominates the cheap pair).
Every MuJoCo call the driver makes is counted in :attr:`Driver.calls`, a deterministic measure
of cost.

Units: hinge joints in radians, slide joints in metres; rates in rad/s and m/s; distances
and tolerances in metres; ``dt`` in seconds.
"""


from __future__ import annotations

from .commands import command_to_targets, joint_ranges
from .couplings import Coupling, apply_couplings, couplings_from_model
from .driver import Driver, StepReport
from .projection import EVALUATORS, moved_geoms, penetration

__all__ = [
    "EVALUATORS",
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
