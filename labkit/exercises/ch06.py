"""Checkers of chapter 06 (contacts: filtering and parameters), and the experiments they
share with the chapter's lessons: :func:`incline` and :func:`travel` (the cube on the
ramp of ``models/contact_incline.xml``, with any cone and solver) and :func:`mixed` (two
geoms' parameters mixed into one contact, on ``models/contact_ball.xml``).  Exercise 6.1's
gripper is ``models/contact_gripper.xml``; Exercise 6.3's chute is :func:`chute`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import mujoco
import numpy as np

from ..axes import CONES, SOLVERS
from ..contact import mask_bits, pairs
from ..display import fmt
from ..models import load
from ..models import spec as model_spec
from .answers import NUMBER, array, integer, mapping, number
from .core import Exercise, ExerciseFailed, Param, checker

__all__ = ["CHUTE_ANGLE", "CHUTE_LENGTH", "CHUTE_SPEED", "GRIPPER_BIT", "LINER_FRICTION", "PADS", "RUBBER",
           "STEEL", "WANTED", "MixedContact", "chute", "exit_speed", "gripper_contacts", "incline", "mixed",
           "require_bits", "speed_after", "steel_and_rubber", "travel"]


def _name(pair: Sequence[str]) -> str:
    """A geom pair as text, names sorted: ``"cube–floor"``."""
    return "–".join(sorted(pair))


# -- Exercise 6.1: fingers that grip but do not clash ---------------------------------------

PADS = ("left", "right", "cube")
"""The geoms of ``contact_gripper`` whose masks the learner chooses (the floor keeps 1/1)."""

WANTED: tuple[tuple[tuple[str, str], bool], ...] = (
    (("cube", "floor"), True), (("left", "cube"), True), (("right", "cube"), True),
    (("left", "right"), False), (("left", "floor"), False), (("right", "floor"), False))
"""Exercise 6.1's contact table: (geom pair, whether MuJoCo must report a contact)."""


def gripper_contacts(masks: Mapping[str, Sequence[int]]) -> set[frozenset[str]]:
    """The geom pairs in contact (``labkit.contact.pairs``) after ``mj_forward`` of
    ``contact_gripper`` with ``masks[g] = (contype, conaffinity)`` for each g in :data:`PADS`."""
    gripper = model_spec("contact_gripper")
    for g in PADS:
        gripper.geom(g).contype, gripper.geom(g).conaffinity = (int(v) for v in masks[g])
    grip, grip_data = load(gripper)
    return pairs(grip, grip_data)


# contype and conaffinity are 32-bit masks: non-negative integers below 2**31
_MASK = integer(0, 2**31 - 1,
                why="contype and conaffinity are non-negative integers below 2**31 (32-bit masks)")
MASKS = mapping(array(length=2, integer=True, each=_MASK))


@lru_cache(maxsize=64)
def _contacts(masks: tuple[tuple[int, int], ...]) -> frozenset[frozenset[str]]:
    """:func:`gripper_contacts` for the masks of :data:`PADS`, in order (cached)."""
    return frozenset(gripper_contacts(dict(zip(PADS, masks, strict=True))))


GRIPPER_BIT = 2
"""Exercise 6.1 (published): the number of the bit (counted from 1, value 2**(bit − 1)) that the
model reserves for the gripper; bit 1 is the floor's.  The pads and the cube may use those two only."""

# the variants: any other bit up to 16.  Any correct answer must use the gripper's bit (bit 1 alone
# cannot keep the pads off the floor and on the cube), so the published answer, on bit 2, never
# passes elsewhere, nor does one student's answer on another's bit
GRIPPER_BIT_PARAM = Param(GRIPPER_BIT, 2, 16, 1,
                          label="the number of the gripper's bit, counted from 1: its value is 2**(bit − 1)")


def require_bits(ex: Exercise, masks: Mapping[str, Sequence[int]], bit: int, parts: str, owner: str) -> None:
    """The precondition of a bitmask exercise: ``masks`` (``{geom: (contype, conaffinity)}``)
    use only bit 1, the floor's, and bit ``bit`` (counted from 1), the one the model gives
    ``owner``; ``parts`` names the geoms in the requirement."""
    allowed = 1 | 1 << (bit - 1)
    strays = {g: sorted({n for v in pair for n in mask_bits(int(v) & ~allowed)}) for g, pair in masks.items()}
    ex.precondition(not any(strays.values()),
                    f"{parts} use only bit 1 (the floor's) and bit {bit} (the {owner}'s, value "
                    f"{1 << (bit - 1)})",
                    failure="; ".join(f"{g} uses bit{'s' * (len(b) > 1)} {', '.join(map(str, b))}"
                                      for g, b in strays.items() if b),
                    hint=f"your model gives the {owner} bit {bit}, the value {1 << (bit - 1)} = "
                         f"2**({bit} − 1); the other bits belong to other parts of the model")


@checker("6.1", "Fingers that grip but do not clash", points=3, answers={"masks": MASKS},
         params={"bit": GRIPPER_BIT_PARAM})
def _fingers(ex: Exercise) -> None:
    masks = ex.value("masks")
    for g in PADS:
        if g not in masks:
            raise ExerciseFailed(f"`masks` has no entry {g!r}: give (contype, conaffinity) for "
                                 f"{', '.join(repr(p) for p in PADS)}")
    bit = round(ex.param("bit"))
    require_bits(ex, {g: masks[g] for g in PADS}, bit, "the pads and the cube", "gripper")
    got = _contacts(tuple(tuple(int(v) for v in masks[g]) for g in PADS))
    wrong = {pair: f"{_name(pair)}: MuJoCo " + ("does not generate it" if want else "generates it")
             for pair, want in WANTED if (frozenset(pair) in got) != want}
    # each half of the table pairs contacts that must happen with contacts that must not, so that
    # neither "everything collides" (the default masks) nor "nothing collides" meets one; the floor
    # half counts only once the pads grip, or pads that touch nothing would meet it
    grip = [(("left", "cube"), True), (("right", "cube"), True), (("left", "right"), False)]
    floor = [(("cube", "floor"), True), (("left", "floor"), False), (("right", "floor"), False)]
    gripping = not any(pair in wrong for pair, _ in grip)

    def table(half: list[tuple[tuple[str, str], bool]]) -> str:
        return "; ".join(", ".join(_name(pair) for pair, want in half if want is contact)
                         + (": contact" if contact else ": no contact") for contact in (True, False))

    ex.require(gripping, table(grip),
               failure="; ".join(wrong[pair] for pair, _ in grip if pair in wrong),
               hint="a pair collides when contype of one shares a bit with conaffinity of the other; "
                    "the pads must each share a bit with the cube, but not with each other")
    floor_wrong = [wrong[pair] for pair, _ in floor if pair in wrong]
    ex.require(gripping and not floor_wrong, table(floor),
               failure="; ".join(floor_wrong) or "right, but this counts once the pads grip the cube (above)",
               hint="the floor's masks are 1 and 1: the cube shares bit 1 with it, the pads must not")


# -- Exercise 6.2: rubber on steel -------------------------------------------------------

@dataclass(frozen=True)
class MixedContact:
    """The parameters of one contact after mixing (copies of ``mjContact`` fields):
    condim ``dim``, ``friction`` (5), ``solref`` (2), ``solimp`` (5), ``includemargin`` (m)."""

    dim: int
    friction: np.ndarray
    solref: np.ndarray
    solimp: np.ndarray
    includemargin: float


_MIXABLE = {"friction", "solref", "solimp", "solmix", "condim", "margin", "gap"}


def mixed(a: Mapping[str, Any], b: Mapping[str, Any], priority: tuple[int, int] = (0, 0)) -> MixedContact:
    """Give the floor of a fresh ``contact_ball`` the geom parameters ``a`` and the ball ``b``
    (keys: friction, solref, solimp, solmix, condim, margin, gap), and the priorities
    ``priority``; press the ball 1 mm into the floor, run ``mj_forward`` and return its
    contact's mixed parameters."""
    balls, ball_data = load("contact_ball")
    for geom, values, p in (("floor", a, priority[0]), ("ball", b, priority[1])):
        g = balls.geom(geom).id
        balls.geom_priority[g] = p
        for key, value in values.items():
            if key not in _MIXABLE:
                raise KeyError(f"{key!r} is not a mixed contact parameter; use {sorted(_MIXABLE)}")
            getattr(balls, "geom_" + key)[g] = value
    radius = balls.geom("ball").size[0]
    ball_data.qpos[:], ball_data.qvel[:] = [0, 0, radius - 0.001, 1, 0, 0, 0], 0   # 1 mm deep
    mujoco.mj_forward(balls, ball_data)
    c = ball_data.contact[0]
    return MixedContact(int(c.dim), c.friction.copy(), c.solref.copy(), c.solimp.copy(),
                        float(c.includemargin))


_SOLIMP = [0.9, 0.95, 0.001, 0.5, 2]     # MuJoCo's default, on both
STEEL = dict(friction=[0.4, 0.005, 0.0004], solref=[0.04, 0.5], solimp=_SOLIMP, solmix=1.0, condim=3,
             margin=0)
"""Exercise 6.2's steel plate (the floor): priority 0, solmix 1."""
RUBBER = dict(friction=[1.2, 0.01, 0.0001], solref=[0.01, 1.0], solimp=_SOLIMP, solmix=2.0, condim=3,
              margin=0)
"""Exercise 6.2's rubber pad (the ball): priority 0, solmix 2."""


# the variants: each material number that one of the four answers depends on.  Every variant
# changes all five, so the published sliding and rolling friction are always wrong, and so is the
# published damping ratio (on this grid no variant mixes to its 5/6); the rubber keeps the larger
# sliding friction and solmix, the steel the larger rolling friction and time constant and the
# smaller damping ratio, so that the traps of the question stay traps.  The sliding friction's grid
# (0.75, 0.85, ... 1.95) avoids the round 1 and 2 that an answer typed without any work might hold
MATERIAL_PARAMS = {
    "rubber_sliding": Param(RUBBER["friction"][0], 0.75, 1.95, 0.1, label="the rubber's sliding friction"),
    "steel_rolling": Param(STEEL["friction"][2], 0.0002, 0.0012, 0.0001,
                           label="the steel's rolling friction, in m"),
    "rubber_solmix": Param(RUBBER["solmix"], 1.5, 5.0, 0.5, label="the rubber's solmix"),
    "steel_timeconst": Param(STEEL["solref"][0], 0.02, 0.08, 0.01, unit="s",
                             label="the steel's solref time constant"),
    "steel_dampratio": Param(STEEL["solref"][1], 0.3, 0.9, 0.1, label="the steel's solref damping ratio"),
}


def steel_and_rubber(rubber_sliding: float = RUBBER["friction"][0],
                     steel_rolling: float = STEEL["friction"][2], rubber_solmix: float = RUBBER["solmix"],
                     steel_timeconst: float = STEEL["solref"][0], steel_dampratio: float = STEEL["solref"][1]
                     ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Exercise 6.2's steel plate and rubber pad (:data:`STEEL` and :data:`RUBBER` with the
    given numbers replaced), ready for ``mixed(steel, rubber)``."""
    steel = dict(STEEL, friction=[STEEL["friction"][0], STEEL["friction"][1], steel_rolling],
                 solref=[steel_timeconst, steel_dampratio])
    rubber = dict(RUBBER, friction=[rubber_sliding, *RUBBER["friction"][1:]], solmix=rubber_solmix)
    return steel, rubber


@lru_cache(maxsize=64)
def _steel_rubber(**numbers: float) -> MixedContact:
    """``mixed(*steel_and_rubber(**numbers))``, the contact of Exercise 6.2 (the same for every answer)."""
    return mixed(*steel_and_rubber(**numbers))


@checker("6.2", "Rubber on steel", points=4,
         answers={"mixed_sliding": NUMBER, "mixed_rolling": NUMBER, "mixed_timeconst": NUMBER,
                  "mixed_dampratio": NUMBER}, params=MATERIAL_PARAMS)
def _rubber_on_steel(ex: Exercise) -> None:
    v = {name: ex.param(name) for name in MATERIAL_PARAMS}
    c = _steel_rubber(**v)
    steel, rubber = steel_and_rubber(**v)
    w = rubber["solmix"] / (rubber["solmix"] + steel["solmix"])       # the rubber's weight
    (slide_r, _, roll_r), slide_s = rubber["friction"], steel["friction"][0]
    (tau_r, zeta_r), (tau_s, zeta_s) = rubber["solref"], steel["solref"]
    steel_heavier = f"that gives the steel the larger weight; the rubber has solmix {fmt(rubber['solmix'])}"
    ex.close("mixed_sliding", c.friction[0], rtol=1e-6, hint="friction is not averaged",
             mistakes={w * slide_r + (1 - w) * slide_s:
                       "that is the solmix-weighted average; friction takes the maximum",
                       (slide_r + slide_s) / 2: "that is the plain average; friction takes the maximum"})
    ex.close("mixed_rolling", c.friction[3], rtol=1e-6, hint="the same rule as for sliding friction",
             mistakes={roll_r: "that is the rubber's value; with equal priority neither geom wins outright"})
    ex.close("mixed_timeconst", c.solref[0], rtol=1e-6, unit="s",
             hint="weight of a geom = its solmix / (sum of both solmix)",
             mistakes={(1 - w) * tau_r + w * tau_s: steel_heavier,
                       (tau_r + tau_s) / 2: "that is the plain average; solmix weights it",
                       tau_r: "that is the rubber's alone; only a higher priority would make it win"})
    ex.close("mixed_dampratio", c.solref[1], rtol=1e-6,
             hint="solref's second number is mixed with the same weights as the first",
             mistakes={(1 - w) * zeta_r + w * zeta_s: steel_heavier})


# -- Exercise 6.3: a friction coefficient for an exit speed -------------------------------------------

def incline(theta: float, mu: float = 0.5, condim: int = 3, *, cone: str | None = None,
            solver: str | None = None) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """``contact_incline`` tilted by ``theta`` degrees, with the ramp's sliding friction ``mu``
    and ``condim`` (the ramp has priority: its values decide); ``cone`` and ``solver``, case
    names of ``labkit.axes.CONES`` and ``SOLVERS``, replace the model's (elliptic, Newton);
    ``mj_forward`` already run."""
    ramp = model_spec("contact_incline")
    ramp.frame("slope").alt.euler = [0, theta, 0]
    ramp.geom("ramp").friction[0] = mu
    ramp.geom("ramp").condim = condim      # the ramp has priority: its values decide (section 5)
    model, data = load(ramp)
    for axis, case in ((CONES, cone), (SOLVERS, solver)):
        if case is not None:
            axis.apply(model, case)
    mujoco.mj_forward(model, data)
    return model, data


def travel(theta: float, mu: float, condim: int = 3, seconds: float = 1.0, *, cone: str | None = None,
           solver: str | None = None) -> float:
    """Distance (m) the cube of :func:`incline` moves downhill in ``seconds`` on a ramp
    tilted by ``theta`` degrees with sliding friction ``mu`` (``cone``, ``solver``: as in
    :func:`incline`)."""
    model, data = incline(theta, mu, condim, cone=cone, solver=solver)
    start = data.qpos[:3].copy()
    mujoco.mj_step(model, data, nstep=round(seconds / model.opt.timestep))
    tilt = np.radians(theta)
    return float((data.qpos[:3] - start) @ np.array([np.cos(tilt), 0, -np.sin(tilt)]))


def _speed_when(model: mujoco.MjModel, data: mujoco.MjData, theta: float, distance: float,
                seconds: float) -> float:
    """Speed (m/s, along a slope tilted by ``theta`` degrees) of the first free body once it
    has slid ``distance`` m downhill (interpolated between the two steps around that point);
    0.0 if it has not got that far after ``seconds``."""
    tilt = np.radians(theta)
    downhill = np.array([np.cos(tilt), 0, -np.sin(tilt)])
    start, h = data.qpos[:3].copy(), model.opt.timestep
    before = (0.0, 0.0)                                   # (distance, speed) at the previous step
    for _ in range(round(seconds / h)):
        mujoco.mj_step(model, data)
        now = (float((data.qpos[:3] - start) @ downhill), float(data.qvel[:3] @ downhill))
        if now[0] >= distance:
            share = (distance - before[0]) / (now[0] - before[0])
            return before[1] + share * (now[1] - before[1])
        before = now
    return 0.0


def speed_after(theta: float, mu: float, distance: float, seconds: float = 3.0) -> float:
    """Speed (m/s, along the slope) of the cube of :func:`incline`, released at rest on a ramp
    tilted by ``theta`` degrees with sliding friction ``mu``, once it has slid ``distance`` m
    downhill (interpolated between the two steps around that point); 0.0 if it has not got
    that far after ``seconds``."""
    return _speed_when(*incline(theta, mu), theta, distance, seconds)


CHUTE_ANGLE, CHUTE_LENGTH, CHUTE_SPEED = 30.0, 0.3, 1.0   # degrees, m, m/s: Exercise 6.3's chute
# the variants: exit speeds from 0.4 m/s (a friction of 0.55, just under tan 30° ≈ 0.577: the part
# still slides) to 1.6 m/s (0.07, just above frictionless, which reaches 1.72 m/s), 0.2 m/s apart,
# so that the ±5 % bands of two variants never overlap
CHUTE_SPEED_PARAM = Param(CHUTE_SPEED, 0.4, 1.6, 0.2, unit="m/s",
                          label="the speed at which the parts must leave the chute, ± 5 %")
LINER_FRICTION = 0.6
"""Exercise 6.3: the sliding friction of the chute's liner, the ramp of ``contact_incline``
(which keeps its ``priority="1"``); above tan 30° ≈ 0.577, so the liner alone holds a part."""


def chute(part_friction: float, part_priority: int) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Exercise 6.3's chute: ``contact_incline`` tilted by :data:`CHUTE_ANGLE`, its ramp (the
    liner, priority 1) with sliding friction :data:`LINER_FRICTION`, and the cube (the part)
    with sliding friction ``part_friction`` and priority ``part_priority``; ``mj_forward`` run."""
    spec = model_spec("contact_incline")
    spec.frame("slope").alt.euler = [0, CHUTE_ANGLE, 0]
    spec.geom("ramp").friction[0] = LINER_FRICTION
    spec.geom("cube").friction[0] = part_friction
    spec.geom("cube").priority = part_priority
    return load(spec)


@lru_cache(maxsize=64)
def exit_speed(part_friction: float, part_priority: int) -> tuple[float, float]:
    """On :func:`chute`: (the sliding friction of the part's contact with the liner, the
    part's speed in m/s once it has slid :data:`CHUTE_LENGTH` from rest, 0.0 if it has not
    got that far in 3 s); cached."""
    model, data = chute(part_friction, part_priority)
    mu = float(data.contact[0].friction[0]) if data.ncon else float("nan")
    return mu, _speed_when(model, data, CHUTE_ANGLE, CHUTE_LENGTH, 3.0)


# 0 ≤ μ ≤ 10: a friction coefficient is not negative and no real material pair exceeds ~2; the
# answer is 0.07–0.55 (≈ 0.38 published), and the typical mistakes (the liner's 0.6, Coulomb's
# threshold tan 30°, a μ chosen so that an average with the liner gives the answer, where that is
# not negative) stay inside
FRICTION = number(0, 10, why="a friction coefficient is not negative, and no real material pair exceeds ~2")
# priority only ranks two geoms: any whole number from -100 to 100 is more than a model needs
PRIORITY = integer(-100, 100, why="a geom's priority is a whole number; only which one is higher matters")


@checker("6.3", "A friction coefficient for an exit speed", points=3,
         answers={"part_friction": FRICTION, "part_priority": PRIORITY}, params={"speed": CHUTE_SPEED_PARAM})
def _exit_speed(ex: Exercise) -> None:
    target = ex.param("speed")
    mu, speed = exit_speed(float(ex.value("part_friction")), int(ex.value("part_priority")))
    # sliding is the gate, not a share: a frictionless part slides too
    ex.precondition(speed > 0, "the part slides down the 30° chute",
                    failure=f"it does not get 0.3 m down the chute in 3 s: its contact with the liner "
                            f"has sliding friction {fmt(mu)}",
                    hint="which geom's friction does the contact take (section 5)? A part holds "
                         "when that friction is at least tan θ")
    ex.require(abs(speed - target) <= 0.05 * target,
               f"it leaves the chute, after sliding 0.3 m along it, at {fmt(target, unit='m/s')} (±5 %)",
               failure=f"it passes 0.3 m at {fmt(speed, unit='m/s')}",
               hint="while it slides the acceleration is constant, g·(sin θ − μ·cos θ), with μ the "
                    "contact's friction; from rest, speed² = 2·acceleration·distance")
