"""Checkers of chapter 07 (contact tuning), and the measurements the chapter shares with them.

The notebook imports its measuring helpers from here (:func:`jitter_of`, :func:`bounce`,
:func:`restitution`, :func:`decomposed`, :func:`slot`), so the lesson and the grader use the
same code, and the scenes of its § 1 edge (:func:`frame_on`) and § 6 (:func:`tray`).  The
checkers read nothing but the learner's answers: every baseline they compare with (the undisturbed
arm's jitter, the probe's resting height on the frame) is measured here.

Units: metres, seconds, radians; solref as MuJoCo takes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial
from typing import Any

import mujoco
import numpy as np

from .. import contact, models, sim, solver
from ..display import fmt
from ..models import load
from ..recording import Recording, record
from .answers import AnswerError, Kind, array, mapping
from .ch06 import require_bits
from .core import Exercise, Param, checker

__all__ = [
    "FLOOR_SOLREF",
    "FRAME_BIT",
    "PAIRS",
    "SLOT_PROBES",
    "TEXTBOOK_ZETA",
    "baseline_jitter",
    "bounce",
    "decomposed",
    "frame_on",
    "jitter_of",
    "probe_on_frame_height",
    "restitution",
    "slot",
    "slot_probes",
    "slot_trial",
    "solref_kind",
    "textbook_zeta",
    "tray",
]


# -- § 1 · a joint that jitters (exercise 7.1) -------------------------------------------------------

def jitter_of(model: mujoco.MjModel, seconds: float = 1.0
              ) -> tuple[float, float, mujoco.MjData, Recording]:
    """Simulate ``model`` (``tuning_frame_mesh`` or an edit of it) from its initial state for
    ``seconds``; return the velocity RMS (rad/s) and the mean angle (rad) of joint ``r1`` over
    the second half of the run, the final data, and the recording (``"angle"`` rad and ``"speed"``
    rad/s of ``r1``)."""
    data = mujoco.MjData(model)
    rec = record(model, data, {"angle": data.joint("r1").qpos, "speed": data.joint("r1").qvel},
                 duration=seconds)
    late = rec.t >= seconds / 2
    return float(np.sqrt(np.mean(rec["speed"][late] ** 2))), float(rec["angle"][late].mean()), data, rec


@cache
def baseline_jitter() -> float:
    """Velocity RMS (rad/s) of ``r1`` in the unedited ``tuning_frame_mesh``: the jitter to remove."""
    model, _ = load("tuning_frame_mesh")
    return jitter_of(model)[0]


def probe_on_frame_height(model: mujoco.MjModel | None = None) -> float:
    """Height (m) at which the probe ball rests on the frame's front bar: the bar's top (the
    highest vertex of the frame's mesh, 0.315 m) + the probe's radius − its resting
    penetration (:func:`labkit.solver.rest_penetration` with the probe's solref/solimp)."""
    if model is None:
        model, _ = load("tuning_frame_mesh")
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    frame = model.geom("frame")
    first, count = model.mesh_vertadr[frame.dataid[0]], model.mesh_vertnum[frame.dataid[0]]
    vertices = model.mesh_vert[first:first + count] @ data.geom_xmat[frame.id].reshape(3, 3).T
    top = float((vertices + data.geom_xpos[frame.id])[:, 2].max())
    probe = model.geom("probe")
    sink = solver.rest_penetration(probe.solref, probe.solimp, timestep=model.opt.timestep)
    return top + float(probe.size[0]) - sink


_FRAME_ON = """<mujoco><worldbody>{open}
  <body name="cell">{joint}
    <geom name="frame" type="box" size="0.3 0.3 0.015" pos="0 0 0.3"/>
    <body name="arm" pos="0 0 0.3"><joint name="r1" type="hinge" axis="0 1 0"/>
      <geom name="arm" type="capsule" fromto="0 0 0  0.2 0 0" size="0.02" mass="0.5"/></body>
  </body>{close}
</worldbody></mujoco>"""

_PARENT_OF_CELL = {   # what the frame's body hangs from: (open, joint, close) pieces of _FRAME_ON
    "free": ("", "<freejoint/>", ""),
    "jointed": ("", '<joint type="slide" axis="0 0 1"/>', ""),
    "welded": ('<body name="base"><freejoint/><geom type="sphere" size="0.01" pos="1 0 0"/>', "", "</body>"),
    "world": ("", "", ""),
}


def frame_on(parent: str) -> str:
    """MJCF of § 1's frame as collision sees it (its hull: a 0.6 m × 0.6 m × 3 cm slab) with the
    arm hinged on the frame's own body ``cell``, the arm buried in the slab's mid-plane as in
    ``tuning_frame_mesh``; ``cell`` hangs from ``parent``, a case of :data:`labkit.axes.PARENTS`:
    a free joint, a slide joint, welded (no joint) to a free base, or welded to the world.

    Example: ``labkit.load(frame_on("world"))[1].ncon`` → ``1`` (the arm–frame contact).
    """
    if parent not in _PARENT_OF_CELL:
        raise KeyError(f"parent must be one of {', '.join(_PARENT_OF_CELL)}, got {parent!r}")
    opening, joint, closing = _PARENT_OF_CELL[parent]
    return _FRAME_ON.format(open=opening, joint=joint, close=closing)


PAIRS = (("frame", "arm"), ("frame", "probe"), ("floor", "probe"), ("arm", "probe"))
"""The geom pairs exercise 7.1 asks ``contact.why`` about."""

_WANTED = {("frame", "arm"): False, ("frame", "probe"): True, ("floor", "probe"): True,
           ("arm", "probe"): True}
_MASKABLE = ("frame", "arm", "probe")


def _mask_problem(masks: dict[str, Any]) -> str | None:
    """Why ``masks`` (name → [contype, conaffinity]) cannot be applied, or None."""
    for name, pair in masks.items():
        if name == "floor" and list(pair) != [1, 1]:
            return "the floor keeps contype = conaffinity = 1: leave it out of `masks`"
        if name not in (*_MASKABLE, "floor"):
            return f"`masks` may set the frame, the arm and the probe, not {name!r}"
        if np.shape(pair) != (2,):
            return f"masks[{name!r}] should be two whole numbers (contype, conaffinity)"
        if not all(0 <= v < 2**31 for v in pair):
            return f"masks[{name!r}] = {pair}: bitmasks are whole numbers from 0 to 2³¹ − 1"
    return None


def _masks(value: Any) -> dict[str, list[int]]:
    """Exercise 7.1's answer as data: a dict of (contype, conaffinity) pairs of the frame, the
    arm and the probe (the floor may be restated as 1/1), each a whole number from 0 to
    2³¹ − 1, MuJoCo's int bitmask (AnswerError otherwise, before anything is simulated)."""
    masks = mapping(array(length=2, integer=True)).convert(value)
    problem = _mask_problem(masks)
    if problem:
        raise AnswerError(problem)
    return masks


MASKS = Kind("a dict of (contype, conaffinity) pairs", _masks)

FRAME_BIT = 2
"""Exercise 7.1 (published): the number of the bit (counted from 1, value 2**(bit − 1)) that the
model reserves for the frame; bit 1 is what the floor and the rest of the model use.  The frame,
the arm and the probe may use those two only."""

# the variants: any other bit up to 16.  Any correct answer must use the frame's bit (with bit 1
# alone the frame either meets the arm or misses the probe), so the published answer, on bit 2,
# never passes elsewhere, nor does one student's answer on another's bit
FRAME_BIT_PARAM = Param(FRAME_BIT, 2, 16, 1,
                        label="the number of the frame's bit, counted from 1: its value is 2**(bit − 1)")


@checker("7.1", "Separate the arm from the frame with bitmasks", points=3, answers={"masks": MASKS},
         params={"bit": FRAME_BIT_PARAM})
def _bitmasks(ex: Exercise) -> None:
    masks = ex.value("masks")
    bit = round(ex.param("bit"))
    require_bits(ex, masks, bit, "the frame, the arm and the probe", "frame")
    graded, _ = load("tuning_frame_mesh")
    for name, (ctype, caff) in masks.items():
        graded.geom(name).contype, graded.geom(name).conaffinity = ctype, caff
    pairs = {p: contact.why(graded, *p).collides for p in PAIRS}
    said = "; ".join(f"{a}–{b} {'collide' if hit else 'never collide'}" for (a, b), hit in pairs.items())
    ex.require(pairs == _WANTED, "the frame ignores the arm; the probe collides with frame, floor and arm",
               failure=f"contact.why says: {said}",
               hint="two geoms collide when contype of one shares a bit with conaffinity of the other; "
                    "give the frame its own bit and let the probe accept both bits")
    # one requirement, both sides: switching the frame's collisions off (0/0) stops the jitter,
    # and changing nothing keeps the probe on the frame; only the bitmask fix does both
    rms, _, graded_data, _ = jitter_of(graded)
    quiet = rms < 1e-6 * baseline_jitter()
    rests = abs(graded_data.body("probe").xpos[2] - probe_on_frame_height(graded)) < 1e-3
    ex.require(quiet and rests, "the arm no longer jitters, and the probe still rests on the frame",
               failure="; ".join(([] if quiet else [f"the arm still jitters: RMS {fmt(rms, 3)} rad/s"])
                                 + ([] if rests else ["the probe left the frame"])),
               hint="the frame must share no bit with the arm, but still share one with the probe",
               weight=2)


# -- § 4 · a ball that should bounce (exercise 7.2) ----------------------------------------------------

def restitution(zeta: float | np.ndarray) -> float | np.ndarray:
    """Coefficient of restitution of a linear spring–damper contact that can only push, for
    damping ratio ``zeta`` (0 < ζ < 1): the force-based lift-off criterion (Schwager and
    Pöschel 2007), which tends to e⁻² at critical damping."""
    s = np.sqrt(1 - zeta**2)
    return np.exp(-zeta / s * (np.pi - np.arctan2(2 * zeta * s, 1 - 2 * zeta**2)))


def textbook_zeta(e: float) -> float:
    """The damping ratio for which the textbook formula e^(−πζ/√(1−ζ²)) gives the restitution
    ``e``: it assumes the contact may pull, so MuJoCo's ball bounces back with less."""
    return float(np.log(1 / e) / np.sqrt(np.pi**2 + np.log(e) ** 2))


BOUNCE_E = 0.5
"""Exercise 7.2 (published): the coefficient of restitution asked for, ± 0.02."""
TEXTBOOK_ZETA = textbook_zeta(BOUNCE_E)
"""The damping ratio for which the textbook formula e^(−πζ/√(1−ζ²)) gives e = 0.5 (≈ 0.2155):
it assumes the contact may pull, so MuJoCo's ball bounces back with less."""
# the variants: 0.35 to 0.65, 0.025 apart (twice as many as with bands that never overlap: two
# students then share an e half as often), and at least 0.05 from the published 0.5.
# Both traps stay traps: averaged with the floor's (0.02, 1), a standard solref's damping ratio
# exceeds 0.5, and the ball bounces back with e < 0.29 (below 0.35 that would do); the textbook
# damping ratio misses by more than 0.02 (by 0.025 at 0.65, by less than 0.02 from 0.7 on)
BOUNCE_E_PARAM = Param(BOUNCE_E, 0.35, 0.65, 0.025, gap=0.05,
                       label="the coefficient of restitution to reach, ± 0.02")


def bounce(solref: Sequence[float], model_name: str = "tuning_bounce", seconds: float = 1.3, *,
           priority: int | None = None, options: Mapping[str, Any] | None = None
           ) -> tuple[float, Recording, mujoco.MjModel, mujoco.MjData]:
    """Drop the ball of ``model_name`` (released 1 m above the floor) with ``solref`` on the ball
    geom; return the coefficient of restitution e = √(h₁/h₀) from the first rebound's apex
    (0 if it never lifts off), the recording (``"ball"``: the ball's position, m, shape (T, 3)),
    the model and the final data.

    priority: the ball geom's priority (None: the model's, 1 in ``tuning_bounce``, so the ball's
    solref is used as written; 0 makes the contact mix it with the floor's).  options: ``mjOption``
    fields to set first, e.g. ``{"timestep": 0.002}`` or ``{"integrator": mujoco.mjtIntegrator.mjINT_RK4}``.
    """
    model, data = load(model_name)
    ball = model.geom("ball").id
    model.geom_solref[ball] = solref
    if priority is not None:
        model.geom_priority[ball] = priority
    for name, value in (options or {}).items():
        setattr(model.opt, name, value)
    rec = record(model, data, {"ball": data.body("ball").xpos}, duration=seconds)
    lowest = rec["ball"][:, 2] - model.geom("ball").size[0]        # height of the ball's bottom
    impact = np.argmin(np.where(rec.t < 0.6, lowest, np.inf))           # first impact at ≈0.45 s
    rebound = max(lowest[impact:].max(), 0.0)                            # 0: it never lifts off
    return float(np.sqrt(rebound / lowest[0])), rec, model, data


# solref's ranges: generous for any contact of the course, tight enough that no answer
# reaches MuJoCo as a number it cannot mean
TIMECONST_MAX = 1.0   # s: at 1 s a body resting under gravity sinks metres deep (depth ≈ g·τ²)
DAMPRATIO_MAX = 10.0  # beyond ten times critical damping a contact only creeps; no lesson asks for it
STIFFNESS_MAX = 1e8   # 1/s²: ω = 10⁴ rad/s, a 0.6 ms period, 3 steps of the course's finest (0.2 ms) step
DAMPING_MAX = 1e5     # 1/s: 5 × the critical damping 2·ω of that stiffest contact


def _solref(value: Any) -> list[float]:
    """A solref as data: (timeconst s, dampratio), both > 0, or (-stiffness 1/s², -damping 1/s),
    both < 0, within the ranges above (AnswerError otherwise)."""
    ref = np.asarray(array(length=2).convert(value), dtype=float)
    if ref.ndim != 1:
        raise AnswerError("the answer should be two numbers, (timeconst, dampratio) or (-stiffness, "
                          f"-damping); it has shape {ref.shape}")
    if np.all(ref > 0):
        limits = (("timeconst", TIMECONST_MAX, " s"), ("dampratio", DAMPRATIO_MAX, ""))
    elif np.all(ref < 0):
        limits = (("stiffness", STIFFNESS_MAX, " 1/s²"), ("damping", DAMPING_MAX, " 1/s"))
    else:
        raise AnswerError(f"the answer {fmt(ref.tolist())} is not a solref: (timeconst, dampratio) are both "
                          "> 0, (-stiffness, -damping) both < 0; MuJoCo replaces a mixed-sign solref, or "
                          "one with a zero, by its default")
    for (name, high, unit), entry in zip(limits, np.abs(ref), strict=True):
        if entry > high:
            raise AnswerError(f"the answer's {name} should be at most {high:g}{unit}, got {entry:g}{unit}: "
                              "no contact of the course is that soft or that stiff")
    return ref.tolist()


def solref_kind() -> Kind:
    """The kind of a solref answer (exercises 7.2, 9.3 and the capstone): two numbers, both
    > 0 (timeconst ≤ 1 s, dampratio ≤ 10) or both < 0 (stiffness ≤ 1e8 1/s², damping ≤ 1e5
    1/s); anything else is refused with its reason before it is simulated."""
    return Kind("a solref (two numbers)", _solref)


FLOOR_SOLREF = (0.02, 1.0)
"""The floor's solref in ``tuning_bounce`` (MuJoCo's default), which exercise 7.2's ball is mixed with."""


@checker("7.2", "A bounce with a given restitution", points=3, answers={"bounce_solref": solref_kind()},
         params={"e": BOUNCE_E_PARAM})
def _bounce(ex: Exercise) -> None:
    target = ex.param("e")
    answer = np.asarray(ex.value("bounce_solref"), dtype=float)
    # the exercise's ball has priority 0, like the floor: the contact mixes the two solrefs
    e_answer = bounce(tuple(answer), priority=0)[0]
    standard = bool(answer[0] > 0)
    zeta = answer[1] if standard else -answer[1] / (2 * np.sqrt(-answer[0]))   # the ball's own damping ratio
    if standard:
        mixed = (answer + np.asarray(FLOOR_SOLREF)) / 2
        why = (f": with equal priorities the contact averaged your solref with the floor's "
               f"{fmt(list(FLOOR_SOLREF))} and used {fmt(mixed.tolist(), 3)}")
    elif abs(zeta - textbook_zeta(target)) < 0.005:
        why = ": that damping ratio comes from the textbook formula, which lets the contact pull"
    else:
        why = ""
    ex.require(abs(e_answer - target) <= 0.02, f"the measured restitution is {fmt(target)} ± 0.02",
               failure=f"the ball bounced back with e = {fmt(e_answer, 3)}{why}",
               hint="the ball and the floor have equal priorities: which solref format survives the mixing "
                    "rule as you wrote it?")


# -- § 5 · a peg that will not enter its hole (exercise 7.3) ----------------------------------------

def decomposed(walls: Sequence[Any], as_meshes: bool = False,
               edit: Callable[[mujoco.MjSpec], None] | None = None) -> mujoco.MjModel:
    """``tuning_peg_mesh`` with the tube's collision replaced by ``walls``, a list of
    ``(centre, half_sizes)`` boxes (m, in the fixture's frame; shape (n, 2, 3)).

    as_meshes: write each wall as a mesh of its 8 corners (the compiler takes their hull)
    instead of a box primitive.  edit: a function applied to the ``MjSpec`` first (e.g.
    :func:`slot`).  The tube's mesh stays for looks (``contype = conaffinity = 0``); the
    walls are in geom group 3, hidden by default."""
    spec = models.spec("tuning_peg_mesh")
    if edit:
        edit(spec)
    spec.geom("tube").contype = spec.geom("tube").conaffinity = 0     # the mesh stays for looks
    for i, (centre, half) in enumerate(walls):
        if as_meshes:   # the wall's 8 corners; without faces the compiler takes their hull
            corners = [np.add(centre, np.multiply(half, 2 * np.array(s) - 1)) for s in np.ndindex(2, 2, 2)]
            spec.add_mesh(name=f"wall{i}", uservert=np.ravel(corners))
            spec.body("fixture").add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=f"wall{i}", group=3)
        else:
            spec.body("fixture").add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=centre, size=half, group=3)
    return load(spec)[0]


SLOT_RIM = 0.05         # m: height of the slot (the tube's 60 mm scaled by 0.05/0.06)
SLOT_INSIDE = (0.025, 0.01)     # m: half-extents (x, y) of the slot's inside, 50 × 20 mm
PEG_HALF = (0.02, 0.007, 0.04)   # m: half-sizes of the flat peg
_TUBE_INSIDE, _TUBE_HEIGHT = 0.04, 0.06   # m: the tube's inside (square) and height, before scaling


def slot_probes(length: float = 2 * SLOT_INSIDE[0], width: float = 2 * SLOT_INSIDE[1]
                ) -> tuple[tuple[float, float], ...]:
    """(x, y) in m of the middle of each wall of a slot whose inside is ``length`` × ``width``
    (m), where exercise 7.3 drops a probe ball: the walls, like the tube's, are a quarter of the
    inside thick, so their middles lie 5/8 of the inside from the centre."""
    return ((0, -5 * width / 8), (0, 5 * width / 8), (-5 * length / 8, 0), (5 * length / 8, 0))


SLOT_PROBES = slot_probes()
"""(x, y) in m of the middle of each wall of the published slot (:func:`slot_probes`)."""

# the variants: the slot's inside and height.  The peg keeps its 40 × 14 mm, so the inside leaves it
# 1 to 11 mm along x and 1 to 9 mm along y on each side; the inside's ends lie 2 mm apart from one
# variant to the next, twice the ± 1 mm within which the pushes must meet a wall, so no variant's
# walls (the published ones included) pass on another's inside.  Heights from 55 mm: with the rim
# above the peg's centre (40 mm up) the pushed peg leans against a wall (at 40 mm it tips over
# one); 5 mm apart, beyond the probes' ± 1 mm on the rim
SLOT_PARAMS = {
    "length": Param(2 * SLOT_INSIDE[0], 0.042, 0.062, 0.004, unit="mm", scale=1e-3,
                    label="the length of the slot's inside, along x"),
    "width": Param(2 * SLOT_INSIDE[1], 0.016, 0.032, 0.004, unit="mm", scale=1e-3,
                   label="the width of the slot's inside, along y"),
    "height": Param(SLOT_RIM, 0.05, 0.07, 0.005, unit="mm", scale=1e-3, label="the slot's height"),
}


def slot(spec: mujoco.MjSpec, length: float = 2 * SLOT_INSIDE[0], width: float = 2 * SLOT_INSIDE[1],
         height: float = SLOT_RIM) -> None:
    """Edit ``tuning_peg_mesh``'s spec into exercise 7.3's scene: scale the tube into a slot
    whose inside is ``length`` × ``width`` (m; the walls a quarter of that thick, so the outside
    is 1.5 times the inside) and ``height`` tall (published: outside 75 × 30 mm, inside
    50 × 20 mm, 50 mm tall), make the peg flat (:data:`PEG_HALF`) and hang four 2 mm probe
    balls (1 g) 20 mm above the rim, over the middle of each wall."""
    spec.mesh("tube").scale = [length / _TUBE_INSIDE, width / _TUBE_INSIDE, height / _TUBE_HEIGHT]
    spec.geom("peg").size = list(PEG_HALF)
    for i, (x, y) in enumerate(slot_probes(length, width)):
        probe = spec.worldbody.add_body(name=f"probe{i}", pos=[x, y, height + 0.02])
        probe.add_freejoint()
        probe.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.002], mass=0.001)


def _reach(model: mujoco.MjModel, data: mujoco.MjData, axis: int) -> float:
    """How far along ``axis`` (0: x, 1: y) the walls the peg touches reach (m): the largest
    coordinate of the walls' surface points in the peg's contacts with them; NaN if the peg
    touches no wall.  A contact's ``pos`` lies midway between the two surfaces, half its
    penetration from each (about 1 mm here); the wall's own point is ``dist / 2`` back along the
    normal, which points from ``geom[0]`` to ``geom[1]``."""
    peg, walls = model.body("peg").id, model.body("fixture").id
    points = []
    for c in data.contact[:data.ncon]:
        bodies = [model.geom_bodyid[g] for g in c.geom]
        if c.exclude == 0 and sorted(bodies) == sorted((peg, walls)):
            side = 1 if bodies[1] == walls else -1
            points.append(c.pos[axis] + side * c.dist / 2 * c.frame[axis])
    return float(max(points)) if points else float("nan")


def slot_trial(walls: Sequence[Any], length: float = 2 * SLOT_INSIDE[0], width: float = 2 * SLOT_INSIDE[1],
               height: float = SLOT_RIM) -> tuple[float, list[float], np.ndarray]:
    """Exercise 7.3's trial of ``walls`` ((centre, half_sizes) boxes, m) in the :func:`slot` of
    ``length``, ``width`` and ``height``: drop the flat peg and the probes for 0.6 s, then push
    the peg with 1 N (its weight is 0.44 N) along +x for 0.2 s, then along +y for 0.2 s.  Returns
    how deep the peg went into the slot (m, ``height`` = to the floor), the four probes' heights
    after the drop (m), and where the walls stopped each push: the largest x of the peg's contacts
    with the walls at the end of the first push, the largest y at the end of the second (m; NaN
    where it touched no wall): a wall's surface, however the peg leans (:func:`_reach`)."""
    slot_model = decomposed(walls, edit=partial(slot, length=length, width=width, height=height))
    slot_data = mujoco.MjData(slot_model)
    sim.run(slot_model, slot_data, duration=0.6)
    depth = height - (slot_data.body("peg").xpos[2] - PEG_HALF[2])
    rims = [float(slot_data.body(f"probe{i}").xpos[2]) for i in range(len(SLOT_PROBES))]
    stops = []
    for axis in (0, 1):
        slot_data.xfrc_applied[slot_model.body("peg").id, :3] = np.eye(3)[axis]   # 1 N along the axis
        sim.run(slot_model, slot_data, duration=0.2)
        stops.append(_reach(slot_model, slot_data, axis))
    return float(depth), rims, np.array(stops)


MAX_WALLS = 64
WALL_REACH = 0.5   # m: the slot is 75 × 30 × 50 mm; no wall of it is centred or sized beyond half a metre


def _walls(value: Any) -> list[Any]:
    """Exercise 7.3's answer as data: 1 to :data:`MAX_WALLS` (centre, half_sizes) boxes (m),
    shape (n, 2, 3), positive half-sizes, every number within ±:data:`WALL_REACH` (AnswerError
    otherwise, before anything is simulated)."""
    walls = np.asarray(array().convert(value), dtype=float)
    if walls.ndim != 3 or walls.shape[1:] != (2, 3):
        raise AnswerError(f"the answer should be a list of (centre, half_sizes) pairs of three numbers "
                          f"each, i.e. of shape (n, 2, 3); it has shape {walls.shape}")
    if not 1 <= len(walls) <= MAX_WALLS:
        raise AnswerError(f"the answer should hold between 1 and {MAX_WALLS} boxes; it holds {len(walls)}")
    if np.any(walls[:, 1] <= 0):
        raise AnswerError("every half-size in the answer must be positive (a box's size holds half-lengths "
                          "in metres)")
    if np.any(np.abs(walls) > WALL_REACH):
        raise AnswerError(f"every centre and half-size in the answer should be within ±{WALL_REACH:g} m: the "
                          "slot is 75 mm × 30 mm × 50 mm (sizes are in metres)")
    return walls.tolist()


@checker("7.3", "Decompose a slot", points=3,
         answers={"slot_walls": Kind("a list of (centre, half_sizes) boxes", _walls)}, params=SLOT_PARAMS)
def _slot(ex: Exercise) -> None:
    walls = np.asarray(ex.value("slot_walls"), dtype=float)
    length, width, height = (ex.param(name) for name in SLOT_PARAMS)
    depth, rims, stops = slot_trial(walls, length, width, height)
    # one requirement, both sides: no walls at all let the peg drop in, and one solid box (the
    # hull again) keeps it in place; only a slot does both.  Pushed along +x, then +y, the peg
    # must meet walls where the slot's inside ends: not before (walls in the way), not beyond
    # (walls too far out), not never (a side left open)
    inner = np.array([length, width]) / 2
    dropped, placed = depth >= 0.9 * height, bool(np.all(np.abs(stops - inner) <= 1e-3))
    inside = f"{fmt(length * 1e3)} mm × {fmt(width * 1e3)} mm"
    met = ", ".join(f"{axis} = {fmt(s * 1e3, 3)} mm" if np.isfinite(s) else f"no wall along {axis}"
                    for axis, s in zip("xy", stops, strict=True))
    ex.require(dropped and placed,
               "the peg drops into the slot and, pushed along x and then y, meets walls where the "
               "slot's inside ends (± 1 mm)",
               failure="; ".join(([] if dropped else [f"it went {fmt(depth * 1e3, 3)} mm deep"])
                                 + ([] if placed else [f"pushed, the peg met {met}; the slot's inside "
                                                       f"ends at x = {fmt(inner[0] * 1e3, 3)} mm, "
                                                       f"y = {fmt(inner[1] * 1e3, 3)} mm"])),
               hint=f"the walls must leave the inside ({inside}) free, no more and no less, and cover "
                    "all four sides; size= holds half-lengths", weight=2)
    rim = height + 0.002                                     # a probe's centre on the rim: rim + its radius
    on_rim = all(abs(z - rim) < 1e-3 for z in rims)
    # the solid hull holds the probes on the rim too: the rim counts only once the peg is in
    ex.require(dropped and on_rim, "probes dropped on the walls rest on the rim",
               failure="; ".join(([] if on_rim else [f"probe heights {fmt(rims, 3)} m"])
                                 + ([] if dropped else ["it counts only once the peg drops into the slot"])),
               hint=f"each wall must reach the rim ({fmt(height * 1e3)} mm) and span the slot")


# -- § 6 · body order and fill-in (the chapter's scene; no exercise) --------------------------------

def tray(n: int, hub_first: bool, jacobian: mujoco.mjtJacobian = mujoco.mjtJacobian.mjJAC_SPARSE
         ) -> mujoco.MjModel:
    """A free 5 kg tray (1.2 m × 1.2 m × 4 cm) on a floor, carrying ``n`` free cubes (8 cm edges,
    8 per row, 12 cm between centres), with the tray's body written before the cubes
    (``hub_first``) or after them.  ``jacobian``: the model's ``<option jacobian>``.
    nv = 6·(n + 1).

    Example: ``tray(8, hub_first=False).body(9).name`` → ``"tray"``.
    """
    spec = mujoco.MjSpec()
    spec.option.jacobian = jacobian
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1, 1, 0.1], pos=[0, 0, -0.02])

    def add_tray() -> None:
        body = spec.worldbody.add_body(name="tray")
        body.add_freejoint()
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.6, 0.6, 0.02], mass=5)
    if hub_first:
        add_tray()
    for i in range(n):
        cube = spec.worldbody.add_body(pos=[0.12 * (i % 8) - 0.42, 0.12 * (i // 8) - 0.42, 0.06])
        cube.add_freejoint()
        cube.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.04] * 3)
    if not hub_first:
        add_tray()
    return load(spec)[0]
