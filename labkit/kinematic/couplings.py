""""Mimic" joints: ``follower = ratio · leader + offset``, read from a model or given by hand.

Units: rad for hinges, m for slides (a ratio between a hinge and a slide is in m/rad or rad/m).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import mujoco

__all__ = ["Coupling", "PoseCoupler", "apply_couplings", "check_coupling_range", "couplings_from_model",
           "order_couplings"]


@dataclass(frozen=True)
class Coupling:
    """A "mimic" joint: ``follower = ratio · leader + offset`` (rad or m).

    The follower never gets a target of its own: whenever the leader moves, the follower is
    set from it, so the relation holds exactly in every pose the driver writes.

    Example: ``Coupling("index_dip", "index_pip", 0.8)`` (the dip follows at 0.8 × the pip).
    """

    follower: str
    leader: str
    ratio: float = 1.0
    offset: float = 0.0

    def value(self, leader_value: float) -> float:
        """The follower's position (rad or m) for a leader position (rad or m).

        Example: ``Coupling("f", "l", 2.0, 0.1).value(1.0)`` → ``2.1``.
        """
        return self.ratio * leader_value + self.offset

    def leader_for(self, follower_value: float) -> float:
        """The leader position (rad or m) that puts the follower at ``follower_value``.

        Example: ``Coupling("f", "l", 2.0, 0.1).leader_for(2.1)`` → ``1.0``.
        """
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

    Example: ``couplings_from_model(labkit.load("hand")[0])`` → the hand's mimic joints.
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


def order_couplings(couplings: Sequence[Coupling]) -> list[Coupling]:
    """Couplings sorted so that every leader is final before its followers are set (chains
    such as a → b → c are allowed); cycles and double followers raise ValueError.

    Example: ``order_couplings([Coupling("c", "b"), Coupling("b", "a")])`` → b ← a first.
    """
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
    """A copy of ``pose`` ({joint: value}, rad or m) with every follower set from its leader.

    Followers are always overwritten, so a pose that breaks a coupling is corrected rather than
    trusted.  A coupling whose leader is missing from ``pose`` raises KeyError.

    Example: ``apply_couplings({"l": 1.0}, [Coupling("f", "l", 0.5)])`` → ``{"l": 1.0, "f": 0.5}``.
    """
    out = dict(pose)
    for c in order_couplings(couplings):
        if c.leader not in out:
            raise KeyError(f"pose has no value for {c.leader!r}, the leader of {c.follower!r}")
        out[c.follower] = c.value(out[c.leader])
    return out


def check_coupling_range(c: Coupling, leader: tuple[float, float], follower: tuple[float, float]) -> None:
    """Raise ValueError if ``c`` maps the leader's range (lo, hi) outside the follower's range
    (lo, hi), both in rad or m; a leader without finite limits is not checked.

    Example: ``check_coupling_range(Coupling("f", "l", 2.0), (0, 1), (0, 1))`` raises.
    """
    (lo_l, hi_l), (lo_f, hi_f) = leader, follower
    if not (math.isfinite(lo_l) and math.isfinite(hi_l)):
        return
    ends = sorted((c.value(lo_l), c.value(hi_l)))
    if ends[0] < lo_f - 1e-12 or ends[1] > hi_f + 1e-12:
        raise ValueError(
            f"coupling {c.follower} = {c.ratio:g}·{c.leader} + {c.offset:g} maps {c.leader}'s range "
            f"[{lo_l:g}, {hi_l:g}] to [{ends[0]:g}, {ends[1]:g}], outside {c.follower}'s range "
            f"[{lo_f:g}, {hi_f:g}]: widen the follower's range or narrow the leader's")


class PoseCoupler:
    """Couplings applied to pose vectors, shape (n,), whose entry ``index[name]`` is joint
    ``name`` (rad or m).  ``couplings`` must be ordered (:func:`order_couplings`) and name
    only joints in ``index``.

    Example: ``PoseCoupler([Coupling("f", "l", 0.5)], {"l": 0, "f": 1})(np.array([1.0, 0.0]))``
    → ``array([1. , 0.5])``.
    """

    def __init__(self, couplings: Sequence[Coupling], index: Mapping[str, int]) -> None:
        self.follower = np.asarray([index[c.follower] for c in couplings], dtype=int)
        self.leader = np.asarray([index[c.leader] for c in couplings], dtype=int)
        self.ratio = np.asarray([c.ratio for c in couplings], dtype=float)
        self.offset = np.asarray([c.offset for c in couplings], dtype=float)

    def __call__(self, q: np.ndarray) -> np.ndarray:
        """Set every follower of ``q`` (shape (n,)) from its leader, in place; returns ``q``.

        Example: ``coupler(q)`` after changing a leader in ``q``.
        """
        for f, ld, r, o in zip(self.follower, self.leader, self.ratio, self.offset, strict=True):
            q[f] = r * q[ld] + o
        return q

    def error(self, q: np.ndarray) -> float:
        """Largest |follower − (ratio·leader + offset)| in ``q`` (shape (n,)), rad or m; 0 without
        couplings.

        Example: ``coupler.error(np.asarray(data.qpos[qadr]))`` → ``0.0`` for a coupled pose.
        """
        if not self.follower.size:
            return 0.0
        return float(np.max(np.abs(q[self.follower] - (self.ratio * q[self.leader] + self.offset))))
