"""Checkers of chapter 01 (MJCF foundations): models written by the learner as MJCF text.

The worlds the learner's MJCF is compiled into (a floor, a two-link servo arm) are held
here, and :func:`compile_answer` compiles an answer string the same way in the notebook
and in the grader: text only, no files.
"""

from __future__ import annotations

import itertools
import re

import mujoco
import numpy as np

from ..display import fmt
from ..models import ModelError, load
from ..sim import mujoco_warnings
from .answers import STRING, number
from .core import Exercise, ExerciseFailed, Param, checker

__all__ = ["BOX_WORLD", "CAPSULE_LINK", "PUCK_WORLD", "SERVO_ARM", "capsule_link", "compile_answer",
           "named", "table_frame"]

_FILE_ATTRIBUTE = re.compile(r"\bfile\w*\s*=", re.IGNORECASE)   # file=, filename=, fileup=, ... and <include>


def compile_answer(name: str, text: str, xml: str | None = None) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Compile the learner's MJCF answer ``name`` (the string ``text``), alone or as the
    part it plays in the complete model ``xml``; returns ``(model, data)`` after
    ``mj_forward``.

    Raises :class:`ExerciseFailed` (the exercise then scores 0 with that message) when
    ``text`` is not MJCF text, refers to a file (the grader compiles text only, so the
    notebook does too), or does not compile.
    """
    if not text.lstrip().startswith("<"):
        raise ExerciseFailed(f"`{name}` should hold MJCF text, starting with '<'")
    if _FILE_ATTRIBUTE.search(text):
        raise ExerciseFailed(f"`{name}` refers to a file: the grader compiles your MJCF text alone, "
                             "so write everything inline (no file=, no <include>)")
    try:
        with mujoco_warnings():
            return load(text if xml is None else xml)
    except ModelError as exc:
        said = " ".join((exc.mujoco or str(exc)).split())
        raise ExerciseFailed(f"MuJoCo could not compile `{name}`: {said}") from None


def named(model: mujoco.MjModel, kind: str, name: str, answer: str) -> int:
    """The id of the ``kind`` element (``"joint"``, ``"actuator"``, ``"body"``) called
    ``name`` in the learner's model; raises :class:`ExerciseFailed` if there is none."""
    obj = getattr(mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
    index = mujoco.mj_name2id(model, obj, name)
    if index < 0:
        raise ExerciseFailed(f"the model of `{answer}` has no {kind} named {name!r}")
    return index


# --- 1.1 · a puck that moves in a plane ------------------------------------------------------

PUCK_WORLD = "<mujoco><worldbody>{body}</worldbody></mujoco>"
"""The world the learner's puck body is written into (no floor: only its joints matter)."""
TABLE_TILT = 0.0       # rad: the air table's tilt about the world x axis (published: level)
# the variants: tilted 10° to 40° either way, so that the published, level puck slides sin 10° =
# 0.17 m or more off the table per metre (see _ROOM for the tolerance)
TILT_PARAM = Param(TABLE_TILT, np.radians(-40), np.radians(40), np.radians(5), unit="°", scale=np.pi / 180,
                   gap=np.radians(10), label="the table's tilt, right-handed about the world x axis")
_IN_PLANE = np.zeros((6, 3))
_IN_PLANE[[0, 1, 5], [0, 1, 2]] = 1   # the twists (v, ω) of a puck, in the table's frame: vx, vy, ωz


def table_frame(tilt: float = TABLE_TILT) -> np.ndarray:
    """The air table's axes in world coordinates, as columns (x, y, normal): the world's,
    turned by ``tilt`` (rad) about the world x axis."""
    c, s = np.cos(tilt), np.sin(tilt)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def _motions(model: mujoco.MjModel, data: mujoco.MjData, frame: np.ndarray) -> np.ndarray:
    """The body's Jacobian (6 × nv: velocity, then angular velocity, each in ``frame``'s
    coordinates): each column is how one dof moves and turns body 1."""
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    mujoco.mj_jacBody(model, data, jacp, jacr, 1)
    return np.vstack([frame.T @ jacp, frame.T @ jacr])


# room for joint axes typed with 4 decimals (an axis off by 0.06°); a level puck on a variant's
# table, or one on a neighbour's (5° off), moves sin 5° = 0.09 or more out of the plane
_ROOM = 1e-3


def _rank(matrix: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(matrix, tol=_ROOM))


def _in_plane(motions: np.ndarray) -> bool:
    """Whether no dof lifts the body off the plane or tilts it (rows vz, ωx, ωy are zero)."""
    return motions.shape[1] > 0 and bool(np.abs(motions[[2, 3, 4]]).max() < _ROOM)


@checker("1.1", "A puck that moves in a plane", points=3, answers={"puck_xml": STRING},
         params={"tilt": TILT_PARAM})
def _puck(ex: Exercise) -> None:
    text = ex.value("puck_xml")
    model, data = compile_answer("puck_xml", text, PUCK_WORLD.format(body=text))
    tilt = ex.param("tilt")
    # the shape of the answer, not the lesson: it earns nothing, but nothing else can be judged without it
    ex.precondition(model.nbody == 2, "one body besides the world", failure=f"found {model.nbody - 1} bodies")
    ex.require(model.nv == 3, "exactly three degrees of freedom", failure=f"nv = {model.nv}",
               hint="a free joint has six; build the motion from primitive joints in one body")
    motions = _motions(model, data, table_frame(tilt))
    # each of the three motions is one the joints can make: adding them adds no new direction
    moves = model.nv > 0 and _rank(np.hstack([motions, _IN_PLANE])) == _rank(motions)
    ex.require(moves, "its joints slide it along the table's x and y and spin it about the table's normal",
               failure="some of these motions are missing",
               hint="two slides with axes in the table's plane, and a hinge about its normal")
    # "neither rise nor tilt" alone is met by a body with no joints or one slide: it counts only
    # together with the three motions the puck must have
    planar = _in_plane(motions)
    if model.nv == 0:
        failure = "it has no joints"
    elif not planar:
        failure = "a joint moves it out of the table's plane"
        if tilt and _in_plane(_motions(model, data, table_frame(0.0))):
            failure += ": it moves in the world's level x-y plane, and the table is tilted"
        elif tilt and _in_plane(_motions(model, data, table_frame(-tilt))):
            failure += ": it moves in a table tilted the other way (a positive tilt turns y towards z)"
    else:
        failure = "it stays in the plane, but without all three motions above that is no puck"
    ex.require(moves and planar, "it can neither rise nor tilt", failure=failure,
               hint="slide axes lie in the table's plane and the hinge axis is its normal: turn the body "
                    "with the table (joint axes are in the body's frame), or turn the axes themselves")


# --- 1.2 · a box that rests on the floor -------------------------------------------------------

BOX_WORLD = '<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>{body}</worldbody></mujoco>'
"""The world the learner's box body is dropped into: a floor at z = 0."""
BOX_EDGES = (0.1, 0.2, 0.4)   # m, the asked edge lengths, sorted (published)
BOX_REST = 0.05               # m: the centre height of the box lying on its largest face (published)
# the variants: every edge differs from the published one, so the published box lies at the
# wrong height (0.01 m or more off, against a 1 mm tolerance); the edges stay 0.04 m and
# 0.08 m apart, so the box on another face rests 0.02 m or more too high
BOX_PARAMS = {"long": Param(0.4, 0.3, 0.6, 0.05, unit="m", label="the longest edge"),
              "middle": Param(0.2, 0.12, 0.28, 0.02, unit="m", label="the middle edge"),
              "short": Param(0.1, 0.04, 0.16, 0.02, unit="m", label="the shortest edge")}


def _box_apart(v: dict[str, float]) -> bool:
    return v["short"] + 0.04 <= v["middle"] + 1e-9 and v["middle"] + 0.08 <= v["long"] + 1e-9


@checker("1.2", "A box that rests on the floor", points=3, answers={"box_xml": STRING},
         params=BOX_PARAMS, valid=_box_apart)
def _box(ex: Exercise) -> None:
    text = ex.value("box_xml")
    model, data = compile_answer("box_xml", text, BOX_WORLD.format(body=text))
    asked = np.array([ex.param("short"), ex.param("middle"), ex.param("long")])
    boxes = [g for g in range(model.ngeom) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX]
    ex.precondition(len(boxes) == 1 and model.nv == 6, "one box geom in one free body",
                    failure=f"{len(boxes)} box geoms, nv = {model.nv}", hint="<freejoint/> makes a body free")
    edges = np.sort(2 * model.geom_size[boxes[0]])
    ex.require(np.allclose(edges, asked),
               f"its edges are {fmt(asked[2])} m, {fmt(asked[1])} m and {fmt(asked[0])} m long",
               failure=f"its edges are {fmt(edges)} m long", hint="size holds half-lengths")
    body = int(model.geom_bodyid[boxes[0]])
    start = data.xpos[body].copy()
    with mujoco_warnings():
        mujoco.mj_step(model, data, nstep=250)           # 0.5 s
    centre = data.xpos[body]
    ex.require(abs(centre[2] - asked[0] / 2) < 1e-3, "it lies flat on its largest face",
               failure=f"its centre settles {fmt(centre[2], unit='m')} above the floor")
    moved = float(np.linalg.norm(centre - start))
    ex.require(moved < 2e-3, "it starts at rest on the floor",
               failure=f"it moved {fmt(moved, unit='m')} in 0.5 s",
               hint="the body's pos is the box's centre: how high is the centre of a box lying on the floor?")


# --- 1.3 · a link of a given weight ----------------------------------------------------------

_LINK = """
<mujoco>
  <worldbody>
    <body name="link">
      <freejoint/>
      <geom name="tube" type="capsule" fromto="0 0 0  {segment:g} 0 0" size="0.02" density="{{density}}"/>
      <geom name="housing" type="sphere" pos="{at:g} 0 0" size="0.025" mass="{h:g}" density="{{density}}"/>
    </body>
  </worldbody>
</mujoco>"""
CAPSULE_MASS = 0.3     # kg, the asked weight of the whole link (published)
_RADIUS, _SEGMENT, _HOUSING, _HOUSING_MASS = 0.02, 0.2, 0.025, 0.05   # m, m, m, kg: as in CAPSULE_LINK


def capsule_link(segment: float = _SEGMENT, housing: float = _HOUSING_MASS) -> str:
    """The link of exercise 1.3 as MJCF with a ``{density}`` slot (the learner's density): a
    capsule tube written with fromto (radius 0.02 m, a straight part ``segment`` m long) and a
    sensor housing beyond it with the explicit mass ``housing`` (kg)."""
    return _LINK.format(segment=segment, at=segment + 0.05, h=housing)


CAPSULE_LINK = capsule_link()
"""The published link of exercise 1.3 (a 0.2 m straight part, a 0.05 kg housing)."""

# the variants: a link of 0.2-0.6 kg, a housing of 20-120 g, a straight part of 0.1-0.4 m,
# each away from the published one; _link_apart keeps the answer, the published answer and
# the typical mistakes 2 % or more apart (the answers then lie between 150 and 3700 kg/m³)
LINK_PARAMS = {"mass": Param(CAPSULE_MASS, 0.2, 0.6, 0.02, unit="kg", label="the weight of the whole link"),
               "housing": Param(_HOUSING_MASS, 0.02, 0.12, 0.01, unit="kg",
                                label="the housing's explicit mass"),
               "segment": Param(_SEGMENT, 0.1, 0.4, 0.05, unit="m",
                                label="the length of the tube's straight part, between fromto's points")}


def _tube_volume(segment: float) -> float:
    """m³: a capsule of radius 0.02 m whose straight part is ``segment`` long, caps included."""
    return np.pi * _RADIUS**2 * segment + 4 / 3 * np.pi * _RADIUS**3


def _link_mistakes(mass: float = CAPSULE_MASS, housing: float = _HOUSING_MASS,
                   segment: float = _SEGMENT) -> dict[float, str]:
    """The densities the typical misreadings of the link give, with what each misreads."""
    area, caps = np.pi * _RADIUS**2, 4 / 3 * np.pi * _RADIUS**3
    tube = _tube_volume(segment)                          # fromto: the straight part, the caps beyond it
    rest = mass - housing
    return {mass / (tube + 4 / 3 * np.pi * _HOUSING**3):
            "the housing says mass=, and an explicit mass wins: its density is ignored",
            mass / tube: f"the housing's {fmt(housing)} kg is part of the link's mass too",
            rest / (area * segment): "the two half-sphere caps are part of the tube's volume",
            rest / (area * (segment - 2 * _RADIUS) + caps):
            "fromto gives the ends of the straight part; the caps stick out beyond them",
            rest / (area * 2 * segment + caps):
            "fromto's two points span the whole straight part, not half of it"}


def _link_apart(v: dict[str, float]) -> bool:
    answer = (v["mass"] - v["housing"]) / _tube_volume(v["segment"])
    published = (CAPSULE_MASS - _HOUSING_MASS) / _tube_volume(_SEGMENT)
    found = sorted([answer, published, *_link_mistakes(v["mass"], v["housing"], v["segment"])])
    return all(b >= 1.02 * a for a, b in itertools.pairwise(found))


# 0 < rho ≤ 1e5 kg/m³: a density is positive, and the densest element (osmium) is 2.3e4 kg/m³;
# the answers lie between about 150 and 3700, and the typical mistakes stay well inside
DENSITY = number(0, 1e5, low_open=True, unit=" kg/m³",
                 why="a density must be positive, and no material is denser than about 2.3e4 kg/m³")


@checker("1.3", "A link of a given weight", points=2, answers={"rho": DENSITY}, params=LINK_PARAMS,
         valid=_link_apart)
def _capsule(ex: Exercise) -> None:
    rho = float(ex.value("rho"))
    mass, housing, segment = ex.param("mass"), ex.param("housing"), ex.param("segment")
    weighed = float(load(capsule_link(segment, housing).format(density=repr(rho)))[0].body("link").mass[0])
    # 1e-3: the mistakes' densities lie 2 % or more apart from each other and from the answer
    said = [text for wrong, text in _link_mistakes(mass, housing, segment).items()
            if abs(rho - wrong) < 1e-3 * wrong]
    ex.require(abs(weighed - mass) < 1e-6, f"the link weighs {fmt(mass)} kg",
               failure=f"it weighs {fmt(weighed, unit='kg')}" + "".join(f": {text}" for text in said),
               hint="the link's mass is the sum of its geoms' masses: which of them does the density "
                    "change, and what volume does a fromto capsule have?")


# --- 1.4 · a servo class -----------------------------------------------------------------------

SERVO_ARM = '''
<mujoco>
  <option gravity="0 0 0"/>
  {defaults}
  <worldbody>
    <body name="link1" childclass="servo">
      <joint name="j1" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <body name="link2" pos="0.3 0 0">
        <joint name="j2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="a1" joint="j1" class="servo"/>
    <position name="a2" joint="j2" class="servo"/>
  </actuator>
</mujoco>'''
"""Exercise 1.4's two-link arm (gravity off); ``{defaults}`` is the learner's <default> element."""
SERVO_DAMPING = 1.0    # N·m·s/rad, asked of every joint (published)
SERVO_KP = 25.0        # N·m/rad, asked of every servo (published)
PUSH = 2.5             # N·m, the grader's steady push on j1
# the variants: the slowest arm (kp 10, damping 3) settles at kp/damping ≈ 3 /s, the liveliest
# (kp 60, damping 0.4) rings down at damping/(2 I) ≥ 3 /s (I = 0.06 kg·m²): after the grader's
# 6 s both are within 1e-9 rad of their rest; the give, 2.5/kp, stays between 0.04 and 0.25 rad
SERVO_PARAMS = {"damping": Param(SERVO_DAMPING, 0.4, 3.0, 0.2, unit="N·m·s/rad",
                                 label="the damping of every joint"),
                "kp": Param(SERVO_KP, 10.0, 60.0, 5.0, unit="N·m/rad", label="the stiffness of every servo")}


def joint_stiffness(model: mujoco.MjModel, data: mujoco.MjData, step: float = 0.01) -> np.ndarray:
    """The actuators' stiffness seen by each dof, −∂qfrc_actuator/∂q (N·m/rad, shape (nv,)),
    by central differences about q = 0 at rest with ctrl = 0 (1-dof joints only)."""
    stiffness = np.zeros(model.nv)
    for dof in range(model.nv):
        forces = []
        for q in (step, -step):
            data.qpos[:], data.qvel[:], data.ctrl[:] = 0, 0, 0
            data.qpos[dof] = q
            mujoco.mj_forward(model, data)
            forces.append(data.qfrc_actuator[dof])
        stiffness[dof] = -(forces[0] - forces[1]) / (2 * step)
    return stiffness


@checker("1.4", "A servo class", points=3, answers={"servo_defaults": STRING}, params=SERVO_PARAMS)
def _servo_class(ex: Exercise) -> None:
    text = ex.value("servo_defaults")
    damping, kp = ex.param("damping"), ex.param("kp")
    model, data = compile_answer("servo_defaults", text, SERVO_ARM.format(defaults=text))
    ex.require(np.allclose(model.dof_damping, damping),
               f"every joint of the arm has damping {fmt(damping)} N·m·s/rad",
               failure=f"dof_damping = {fmt(model.dof_damping)}", hint="a <joint> default inside the class")
    servos = joint_stiffness(model, data)             # the servos alone: a joint spring does not count
    data = mujoco.MjData(model)
    data.qfrc_applied[0] = PUSH                       # a steady push on j1; both targets stay 0
    with mujoco_warnings():
        mujoco.mj_step(model, data, nstep=3000)       # 6 s: long enough to settle
    give = float(data.qpos[0])
    if abs(give - PUSH / kp) >= 2e-3:
        failure = f"a {fmt(PUSH)} N·m push deflects j1 by {fmt(give, unit='rad')}"
        if abs(give - PUSH) < 0.1:
            failure += ": that is kp = 1, the global default"
    elif not np.allclose(servos, kp, rtol=1e-6):
        failure = (f"the servos themselves are {fmt(servos)} N·m/rad stiff: the rest of the stiffness "
                   "comes from elsewhere (a joint spring?)")
    else:
        failure = ""
    ex.require(not failure, f"the servo is {fmt(kp)} N·m/rad stiff", failure=failure,
               hint="an actuator default goes in the class too; one shortcut per class (section 8.4)")
