"""Checkers of chapter 01 (MJCF foundations): models written by the learner as MJCF text.

The worlds the learner's MJCF is compiled into (a floor, a two-link servo arm) are held
here, and :func:`compile_answer` compiles an answer string the same way in the notebook
and in the grader: text only, no files.
"""

from __future__ import annotations

import re

import mujoco
import numpy as np

from ..display import fmt
from ..models import ModelError, load
from ..sim import mujoco_warnings
from .answers import STRING, number
from .core import Exercise, ExerciseFailed, checker

__all__ = ["BOX_WORLD", "CAPSULE_LINK", "PUCK_WORLD", "SERVO_ARM", "compile_answer", "named"]

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


@checker("1.1", "A puck that moves in a plane", points=3, answers={"puck_xml": STRING})
def _puck(ex: Exercise) -> None:
    text = ex.value("puck_xml")
    model, data = compile_answer("puck_xml", text, PUCK_WORLD.format(body=text))
    # the shape of the answer, not the lesson: it earns nothing, but nothing else can be judged without it
    ex.precondition(model.nbody == 2, "one body besides the world", failure=f"found {model.nbody - 1} bodies")
    ex.require(model.nv == 3, "exactly three degrees of freedom", failure=f"nv = {model.nv}",
               hint="a free joint has six; build the motion from primitive joints in one body")
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    mujoco.mj_jacBody(model, data, jacp, jacr, 1)        # columns: how each dof moves and turns the body
    moves = bool(np.linalg.matrix_rank(np.vstack([jacp[:2], jacr[2:]])) == 3)
    ex.require(moves, "its joints slide it along x and along y and spin it about z",
               failure="some of these motions are missing", hint="two slides with horizontal axes")
    # "neither rise nor tilt" alone is met by a body with no joints or one slide: it counts only
    # together with the three motions the puck must have
    planar = model.nv > 0 and np.allclose(jacp[2], 0) and np.allclose(jacr[:2], 0)
    ex.require(moves and planar, "it can neither rise nor tilt",
               failure=("it has no joints" if model.nv == 0 else
                        "a joint moves it out of the table's plane" if not planar else
                        "it stays in the plane, but without all three motions above that is no puck"),
               hint="slide axes lie in the x-y plane; the hinge axis is z")


# --- 1.2 · a box that rests on the floor -------------------------------------------------------

BOX_WORLD = '<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>{body}</worldbody></mujoco>'
"""The world the learner's box body is dropped into: a floor at z = 0."""
BOX_EDGES = (0.1, 0.2, 0.4)   # m, the asked edge lengths, sorted
BOX_REST = 0.05               # m: the centre height of the box lying on its largest face


@checker("1.2", "A box that rests on the floor", points=3, answers={"box_xml": STRING})
def _box(ex: Exercise) -> None:
    text = ex.value("box_xml")
    model, data = compile_answer("box_xml", text, BOX_WORLD.format(body=text))
    boxes = [g for g in range(model.ngeom) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX]
    ex.precondition(len(boxes) == 1 and model.nv == 6, "one box geom in one free body",
                    failure=f"{len(boxes)} box geoms, nv = {model.nv}", hint="<freejoint/> makes a body free")
    edges = np.sort(2 * model.geom_size[boxes[0]])
    ex.require(np.allclose(edges, BOX_EDGES), "its edges are 0.4 m, 0.2 m and 0.1 m long",
               failure=f"its edges are {fmt(edges)} m long", hint="size holds half-lengths")
    body = int(model.geom_bodyid[boxes[0]])
    start = data.xpos[body].copy()
    with mujoco_warnings():
        mujoco.mj_step(model, data, nstep=250)           # 0.5 s
    centre = data.xpos[body]
    ex.require(abs(centre[2] - BOX_REST) < 1e-3, "it lies flat on its largest face",
               failure=f"its centre settles {fmt(centre[2], unit='m')} above the floor")
    moved = float(np.linalg.norm(centre - start))
    ex.require(moved < 2e-3, "it starts at rest on the floor",
               failure=f"it moved {fmt(moved, unit='m')} in 0.5 s",
               hint="the body's pos is the box's centre: how high is the centre of a box lying on the floor?")


# --- 1.3 · a link of a given weight ----------------------------------------------------------

CAPSULE_LINK = """
<mujoco>
  <worldbody>
    <body name="link">
      <freejoint/>
      <geom name="tube" type="capsule" fromto="0 0 0  0.2 0 0" size="0.02" density="{density}"/>
      <geom name="housing" type="sphere" pos="0.25 0 0" size="0.025" mass="0.05" density="{density}"/>
    </body>
  </worldbody>
</mujoco>"""
"""The link of exercise 1.3: a capsule tube written with fromto (radius 0.02 m, a 0.2 m straight
part) and a sensor housing with an explicit mass; ``{density}`` is the learner's density."""
CAPSULE_MASS = 0.3     # kg, the asked weight of the whole link
_RADIUS, _SEGMENT, _HOUSING, _HOUSING_MASS = 0.02, 0.2, 0.025, 0.05   # m, m, m, kg: as in CAPSULE_LINK


def _link_mistakes() -> dict[float, str]:
    """The densities the typical misreadings of the link give, with what each misreads."""
    area, caps = np.pi * _RADIUS**2, 4 / 3 * np.pi * _RADIUS**3
    tube = area * _SEGMENT + caps                         # fromto: the straight part, the caps beyond it
    rest = CAPSULE_MASS - _HOUSING_MASS
    return {CAPSULE_MASS / (tube + 4 / 3 * np.pi * _HOUSING**3):
            "the housing says mass=, and an explicit mass wins: its density is ignored",
            CAPSULE_MASS / tube: "the housing's 0.05 kg is part of the link's mass too",
            rest / (area * _SEGMENT): "the two half-sphere caps are part of the tube's volume",
            rest / (area * (_SEGMENT - 2 * _RADIUS) + caps):
            "fromto gives the ends of the straight part; the caps stick out beyond them",
            rest / (area * 2 * _SEGMENT + caps):
            "fromto's two points span the whole straight part, not half of it"}


# 0 < rho ≤ 1e5 kg/m³: a density is positive, and the densest element (osmium) is 2.3e4 kg/m³;
# the answer is ≈ 880, and the typical mistakes (466 to 1070) stay well inside
DENSITY = number(0, 1e5, low_open=True, unit=" kg/m³",
                 why="a density must be positive, and no material is denser than about 2.3e4 kg/m³")


@checker("1.3", "A link of a given weight", points=2, answers={"rho": DENSITY})
def _capsule(ex: Exercise) -> None:
    rho = float(ex.value("rho"))
    weighed = float(load(CAPSULE_LINK.format(density=repr(rho)))[0].body("link").mass[0])
    # 1e-3: the mistakes' densities lie 2 % or more apart from each other and from the answer
    said = [text for wrong, text in _link_mistakes().items() if abs(rho - wrong) < 1e-3 * wrong]
    ex.require(abs(weighed - CAPSULE_MASS) < 1e-6, "the link weighs 0.3 kg",
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
SERVO_DAMPING = 1.0    # N·m·s/rad, asked of every joint
SERVO_KP = 25.0        # N·m/rad, asked of every servo
PUSH = 2.5             # N·m, the grader's steady push on j1


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


@checker("1.4", "A servo class", points=3, answers={"servo_defaults": STRING})
def _servo_class(ex: Exercise) -> None:
    text = ex.value("servo_defaults")
    model, data = compile_answer("servo_defaults", text, SERVO_ARM.format(defaults=text))
    ex.require(np.allclose(model.dof_damping, SERVO_DAMPING), "every joint of the arm has damping 1",
               failure=f"dof_damping = {fmt(model.dof_damping)}", hint="a <joint> default inside the class")
    servos = joint_stiffness(model, data)             # the servos alone: a joint spring does not count
    data = mujoco.MjData(model)
    data.qfrc_applied[0] = PUSH                       # a steady push on j1; both targets stay 0
    with mujoco_warnings():
        mujoco.mj_step(model, data, nstep=3000)       # 6 s: long enough to settle
    give = float(data.qpos[0])
    if abs(give - PUSH / SERVO_KP) >= 2e-3:
        failure = f"a {fmt(PUSH)} N·m push deflects j1 by {fmt(give, unit='rad')}"
        if abs(give - PUSH) < 0.1:
            failure += ": that is kp = 1, the global default"
    elif not np.allclose(servos, SERVO_KP, rtol=1e-6):
        failure = (f"the servos themselves are {fmt(servos)} N·m/rad stiff: the rest of the stiffness "
                   "comes from elsewhere (a joint spring?)")
    else:
        failure = ""
    ex.require(not failure, "the servo is as stiff as asked", failure=failure,
               hint="an actuator default goes in the class too; one shortcut per class (section 8.4)")
