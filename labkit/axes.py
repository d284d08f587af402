"""The standard axes along which a rule is swept: where does a sentence of the course stop?

A sentence that states a rule names its scope ("under Euler and implicitfast", "for hinge,
slide and tendon transmissions", "whatever the cone").  Its check runs the experiment for
every case of an axis, and :func:`labkit.check` with ``scope=`` then shows a validity
table: the rule must hold on the cases inside the scope and must *not* hold on the cases
outside it, so the reader sees where it stops::

    gaps = labkit.sweep(labkit.axes.INTEGRATORS, lambda integrator: gap(integrator))
    labkit.check("Under Euler the read-back <general> moves like its shortcut to the last bit",
                 gaps, 0.0, scope=["Euler"], sources=[...])

Each axis is a name and its cases in MuJoCo's own vocabulary; the axes of ``mjOption``
(integrator, cone, solver) can also write a case into a compiled model
(:meth:`Axis.apply`).  The others (joint and transmission types, angle units, frames and
classes, parent kinds, condim) name the cases a chapter builds a model for; the model is
the chapter's, since only it knows what the rule is about.

MuJoCo is imported only when a case is applied: ``import labkit`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ANGLE_UNITS",
    "CONDIM",
    "CONES",
    "FRAMES",
    "INTEGRATORS",
    "JOINT_TYPES",
    "PARENTS",
    "SOLVERS",
    "TRANSMISSIONS",
    "Axis",
    "sweep",
]


@dataclass(frozen=True)
class Axis:
    """An axis of cases: ``name`` (for the table's header), ``cases`` (case name → the
    value MuJoCo uses: an enum name, an MJCF attribute value, a number) and, for the
    axes of ``mjOption``, ``option``: the ``model.opt`` field :meth:`apply` writes."""

    name: str
    cases: Mapping[str, Any]
    option: str | None = None
    enum: str | None = field(default=None, repr=False)   # the mujoco enum the values name

    def __iter__(self) -> Iterator[str]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def only(self, *names: str) -> Axis:
        """The same axis restricted to ``names`` (in that order); a name it lacks raises."""
        unknown = [n for n in names if n not in self.cases]
        if unknown:
            raise KeyError(f"the {self.name} axis has no case {unknown[0]!r}; it has {', '.join(self.cases)}")
        return Axis(self.name, {n: self.cases[n] for n in names}, self.option, self.enum)

    def value(self, case: str) -> Any:
        """MuJoCo's value for ``case`` (the enum member for an option axis)."""
        if case not in self.cases:
            raise KeyError(f"the {self.name} axis has no case {case!r}; it has {', '.join(self.cases)}")
        raw = self.cases[case]
        if self.enum is None:
            return raw
        import mujoco

        return getattr(getattr(mujoco, self.enum), raw)

    def apply(self, model: Any, case: str) -> Any:
        """Write ``case`` into ``model.opt`` (an ``mujoco.MjModel``, changed in place and
        returned).  Only the option axes (integrator, cone, solver) can do this."""
        if self.option is None:
            raise TypeError(f"the {self.name} axis names cases for a model the chapter builds; "
                            "it cannot be applied to a compiled model")
        setattr(model.opt, self.option, self.value(case))
        return model


INTEGRATORS = Axis("integrator", {"Euler": "mjINT_EULER", "implicit": "mjINT_IMPLICIT",
                                  "implicitfast": "mjINT_IMPLICITFAST", "RK4": "mjINT_RK4"},
                   option="integrator", enum="mjtIntegrator")
"""mjOption.integrator: the four integrators of MuJoCo 3.17 (mjtIntegrator)."""

CONES = Axis("cone", {"pyramidal": "mjCONE_PYRAMIDAL", "elliptic": "mjCONE_ELLIPTIC"},
             option="cone", enum="mjtCone")
"""mjOption.cone: the friction cone (mjtCone)."""

SOLVERS = Axis("solver", {"PGS": "mjSOL_PGS", "CG": "mjSOL_CG", "Newton": "mjSOL_NEWTON"},
               option="solver", enum="mjtSolver")
"""mjOption.solver: the constraint solvers (mjtSolver)."""

CONDIM = Axis("condim", {"1": 1, "3": 3, "4": 4, "6": 6})
"""geom/pair condim: frictionless, sliding, + torsional, + rolling friction."""

JOINT_TYPES = Axis("joint", {"hinge": "hinge", "slide": "slide", "ball": "ball", "free": "free"})
"""joint/@type (mjtJoint)."""

TRANSMISSIONS = Axis("transmission", {"hinge": "joint", "slide": "joint", "ball": "joint", "free": "joint",
                                      "jointinparent": "jointinparent", "tendon": "tendon",
                                      "site": "site", "site+refsite": "site", "body": "body"})
"""What an actuator pulls on (mjtTrn), with the joint types a joint transmission sees and a
site with and without a refsite: the cases where a rule about moment arms can differ."""

ANGLE_UNITS = Axis("angle", {"degree": "degree", "radian": "radian"})
"""compiler/@angle."""

FRAMES = Axis("frame", {"body": "body", "frame": "frame", "class": "class", "childclass": "childclass"})
"""Where an element's attributes come from: written on it in its body, inside a rotated
<frame>, from a default class, or from a body's childclass."""

PARENTS = Axis("parent", {"free": "free", "jointed": "jointed", "welded": "welded", "world": "world"})
"""What a body hangs from: a free joint, a jointed parent, a parent welded (no joint) to a
moving body, or the world itself (static)."""


def sweep(axis: Axis | Iterable[str], measure: Callable[[str], Any]) -> dict[str, Any]:
    """Run ``measure(case)`` for every case of ``axis`` (an :class:`Axis`, or any case names)
    and return ``{case: measured}`` in the axis's order: the ``observed`` of a scoped
    :func:`labkit.check`.

    Example: ``labkit.sweep(labkit.axes.CONES, lambda cone: creep(cone))``.
    """
    return {case: measure(case) for case in axis}
