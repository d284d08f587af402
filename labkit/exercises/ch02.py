"""Checkers of chapter 02 (units, frames and the compiler): what the compiler makes of the
learner's MJCF.

The reference models (the URDF camera mount, the brick, the L-prism of
``models/compiler_mesh_lprism.xml``) are held here; the notebook imports them from here,
so the reader sees the very models the grader uses.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import lru_cache

import mujoco
import numpy as np

from .. import models
from ..actuation import explain
from ..display import fmt
from ..models import load, model_path
from .answers import STRING
from .ch01 import compile_answer, named
from .core import Exercise, ExerciseFailed, Param, checker

__all__ = ["BRICK_XML", "HULL_AREA", "MOUNT_RPY", "MOUNT_URDF", "OLD_XML", "brick_template",
           "camera_mount_urdf", "euler_quat", "gap_deg", "inertia_tensor", "lprism_model",
           "modern_reference", "old_model"]


def gap_deg(q1: np.ndarray, q2: np.ndarray) -> float:
    """Angle (degrees) of the rotation between two unit quaternions (w, x, y, z), whatever
    their signs."""
    return float(np.degrees(2 * np.arccos(min(1.0, abs(float(np.dot(q1, q2)))))))


def euler_quat(euler: str, compiler: str = "") -> np.ndarray:
    """The quaternion (w, x, y, z) MuJoCo compiles from ``euler`` (the attribute's text)
    under the ``<compiler>`` attributes ``compiler`` (e.g. ``'angle="radian"'``)."""
    xml = (f'<mujoco><compiler {compiler}/><worldbody><body name="b" euler="{euler}">'
           '<geom size="0.1"/></body></worldbody></mujoco>')
    return load(xml)[0].body("b").quat.copy()


# --- 2.1 · a servo that respects its joint's range ---------------------------------------------

ELBOW_RANGE = (-30.0, 120.0)     # degrees (published)
_DEGREE = np.pi / 180
# the variants, in radians as the checker compares them (shown in degrees): a lower end from
# -90° to 0°, an upper end from 60° to 170°, on a 10° grid (the tolerance is 1e-3 rad, 0.06°),
# each 10° or more from the published end, so the published servo misses both requirements
ELBOW_PARAMS = {"low": Param(np.radians(ELBOW_RANGE[0]), np.radians(-90), 0.0, np.radians(10), unit="°",
                             scale=_DEGREE, label="the lower end of the elbow's range"),
                "high": Param(np.radians(ELBOW_RANGE[1]), np.radians(60), np.radians(170), np.radians(10),
                              unit="°", scale=_DEGREE, label="the upper end of the elbow's range")}


@checker("2.1", "A servo that respects its joint's range", points=3, answers={"servo_xml": STRING},
         params=ELBOW_PARAMS)
def _servo_range(ex: Exercise) -> None:
    model, _ = compile_answer("servo_xml", ex.value("servo_xml"))
    elbow, servo = named(model, "joint", "elbow", "servo_xml"), named(model, "actuator", "servo", "servo_xml")
    want = np.array([ex.param("low"), ex.param("high")])
    shown = "..".join(ELBOW_PARAMS["low"].show(v).replace(" ", "") for v in want)
    hinge = model.jnt_type[elbow] == mujoco.mjtJoint.mjJNT_HINGE
    limits = model.jnt_range[elbow]
    kind = mujoco.mjtJoint(int(model.jnt_type[elbow])).name
    ex.require(hinge and bool(model.jnt_limited[elbow]) and np.allclose(limits, want, atol=1e-3),
               f"the elbow is limited to {shown}",
               failure=(f"the compiled jnt_range is {fmt(limits)} rad" if hinge else
                        f"the elbow is a {kind} joint, not a hinge"),
               hint="after compilation jnt_range is in radians; which compiler/angle does your file use?")
    on_elbow = (model.actuator_trntype[servo] == mujoco.mjtTrn.mjTRN_JOINT
                and model.actuator_trnid[servo, 0] == elbow)
    family = explain(model, servo).family
    gear = float(model.actuator(servo).gear[0])
    covered = np.sort(model.actuator_ctrlrange[servo] / gear) if gear else np.full(2, np.inf)  # angles (rad)
    if not on_elbow:
        failure = "`servo` does not drive the joint `elbow`"
    elif not family.startswith("position"):
        failure = f"`servo` reads as a {family}, not a position servo"
    elif not (bool(model.actuator_ctrllimited[servo]) and np.allclose(covered, want, atol=1e-3)):
        failure = f"the compiled ctrlrange is {fmt(model.actuator_ctrlrange[servo])}"
    else:
        failure = ""
    ex.require(not failure, "the servo's control range covers exactly the same angles", failure=failure,
               hint="compiler/angle never converts ctrlrange: a position servo's control is in the "
                    "joint's own units, radians for a hinge, whatever the file's angle setting")


# --- 2.2 · port a URDF mounting pose -----------------------------------------------------------

MOUNT_RPY = (0.4, -0.2, 1.1)      # roll, pitch, yaw in radians (published)
_MOUNT = """
<robot name="mount">
  <link name="base"/>
  <link name="camera">
    <inertial>
      <mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="pan" type="revolute">
    <parent link="base"/><child link="camera"/>
    <origin rpy="{0} {1} {2}"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>"""


def camera_mount_urdf(roll: float = MOUNT_RPY[0], pitch: float = MOUNT_RPY[1], yaw: float = MOUNT_RPY[2]
                      ) -> str:
    """A two-link URDF whose only joint has the origin ``rpy="roll pitch yaw"`` (radians):
    the camera's orientation is what exercise 2.2 asks to port."""
    return _MOUNT.format(roll, pitch, yaw)


MOUNT_URDF = camera_mount_urdf()
"""The published camera mount of exercise 2.2."""

# the variants: a 0.1 rad grid, each angle 0.1 rad or more from the published one, the pitch
# kept within ±0.8 rad (far from the gimbal lock at ±π/2); _mount_apart keeps the mistakes the
# checker names (the intrinsic reading, the angles read as degrees) and the published pose 2° or
# more from the asked one, against a tolerance of 0.05°
MOUNT_PARAMS = {"roll": Param(MOUNT_RPY[0], -1.0, 1.0, 0.1, unit="rad", label="roll, about the fixed x"),
                "pitch": Param(MOUNT_RPY[1], -0.8, 0.8, 0.1, unit="rad", label="pitch, about the fixed y"),
                "yaw": Param(MOUNT_RPY[2], -1.5, 1.5, 0.1, unit="rad", label="yaw, about the fixed z")}


def _turn(axis: int, angle: float) -> np.ndarray:
    """The matrix of a right-handed turn by ``angle`` (rad) about coordinate axis 0, 1 or 2."""
    c, s = np.cos(angle), np.sin(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    turn = np.eye(3)
    turn[i, i] = turn[j, j] = c
    turn[j, i], turn[i, j] = s, -s
    return turn


def _mount_apart(v: dict[str, float]) -> bool:
    r, p, y = v["roll"], v["pitch"], v["yaw"]

    def fixed(r: float, p: float, y: float) -> np.ndarray:
        return _turn(2, y) @ _turn(1, p) @ _turn(0, r)

    def gap(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.degrees(np.arccos(np.clip((np.trace(a.T @ b) - 1) / 2, -1, 1))))

    asked = fixed(r, p, y)
    others = [_turn(0, r) @ _turn(1, p) @ _turn(2, y), fixed(*np.radians([r, p, y])), fixed(*MOUNT_RPY)]
    return all(gap(asked, other) >= 2 for other in others)


@lru_cache(maxsize=64)
def _camera_quat(rpy: tuple[float, float, float]) -> np.ndarray:
    """The camera's body_quat that MuJoCo compiles from :func:`camera_mount_urdf`."""
    return load(camera_mount_urdf(*rpy))[0].body("camera").quat.copy()


@checker("2.2", "Port a URDF mounting pose", points=3, answers={"mount_xml": STRING}, params=MOUNT_PARAMS,
         valid=_mount_apart)
def _mount(ex: Exercise) -> None:
    model, _ = compile_answer("mount_xml", ex.value("mount_xml"))
    mine = model.body_quat[named(model, "body", "mount", "mount_xml")]
    rpy = (ex.param("roll"), ex.param("pitch"), ex.param("yaw"))
    target = _camera_quat(rpy)
    rpy_text = " ".join(map(str, rpy))
    if gap_deg(mine, euler_quat(rpy_text, 'angle="radian"')) < 0.05:
        why = "that is the intrinsic reading (eulerseq 'xyz'): URDF turns about fixed axes"
    elif gap_deg(mine, euler_quat(rpy_text, 'eulerseq="XYZ"')) < 0.05:
        why = "the numbers were read as degrees: URDF angles are radians"
    else:
        why = f"your mount is {fmt(gap_deg(mine, target), unit='°')} away from the URDF's orientation"
    ex.require(gap_deg(mine, target) < 0.05,   # 0.05°: room for a quaternion typed with 4 decimals
               "body 'mount' has the orientation of the URDF's camera link", failure=why,
               hint="check two things: the units your compiler reads, and whether your Euler axes are "
                    "fixed (uppercase) or moving (lowercase)")


# --- 2.3 · an explicit <inertial> when inference is off ----------------------------------------

_BRICK = """
<mujoco>
  <compiler inertiafromgeom="{{mode}}"/>
  <worldbody>
    <body name="brick">
      <freejoint/>
      {{inertial}}
      <geom type="box" size="{hx:g} {hy:g} {hz:g}" pos="0 0 {offset:g}"{density}/>   <!-- half-sizes{said} -->
    </body>
  </worldbody>
</mujoco>"""
BRICK_SIZE, BRICK_OFFSET, BRICK_DENSITY = (0.05, 0.1, 0.2), 0.1, 1000.0   # m (half-sizes), m, kg/m³


def brick_template(hx: float = BRICK_SIZE[0], hy: float = BRICK_SIZE[1], hz: float = BRICK_SIZE[2],
                   offset: float = BRICK_OFFSET, density: float = BRICK_DENSITY) -> str:
    """The brick of exercise 2.3: a free body with one box geom of half-sizes ``hx, hy, hz``
    (m) whose centre is ``offset`` (m) above the body's origin, of ``density`` (kg/m³; the
    default 1000 is not written).  ``{mode}`` is ``compiler/inertiafromgeom``, ``{inertial}``
    the learner's <inertial> element (or nothing)."""
    written = "" if density == BRICK_DENSITY else f' density="{density:g}"'
    said = "; density 1000 kg/m³" if density == BRICK_DENSITY else ""
    return _BRICK.format(hx=hx, hy=hy, hz=hz, offset=offset, density=written, said=said)


BRICK_XML = brick_template()
"""The published brick of exercise 2.3."""

# the variants: every number of the brick away from the published one; a brick 6-18 cm by
# 12-28 cm by 24-60 cm, its centre up to 0.25 m from the body's origin, of a density between
# pine's and granite's (400-3000 kg/m³); the published answer then misses the centre of mass and
# the tensor (its mass may match by chance, which earns it 1 of the 3 points)
BRICK_PARAMS = {"hx": Param(BRICK_SIZE[0], 0.03, 0.09, 0.01, unit="m", label="the box's half-size along x"),
                "hy": Param(BRICK_SIZE[1], 0.06, 0.14, 0.02, unit="m", label="the box's half-size along y"),
                "hz": Param(BRICK_SIZE[2], 0.12, 0.3, 0.02, unit="m", label="the box's half-size along z"),
                "offset": Param(BRICK_OFFSET, -0.1, 0.25, 0.05, unit="m",
                                label="how far the box's centre is above the body's origin"),
                "density": Param(BRICK_DENSITY, 400.0, 3000.0, 200.0, unit="kg/m³",
                                 label="the box's density")}


@lru_cache(maxsize=64)
def _inferred_brick(numbers: tuple[float, ...]) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, inertia tensor) that ``inertiafromgeom="auto"`` gives the brick."""
    auto, _ = load(brick_template(*numbers).format(mode="auto", inertial=""))
    k = auto.body("brick").id
    return float(auto.body_mass[k]), auto.body_ipos[k].copy(), inertia_tensor(auto, k)


def inertia_tensor(model: mujoco.MjModel, body: int) -> np.ndarray:
    """The 3×3 inertia tensor (kg·m²) of ``body`` about its centre of mass, in the body frame."""
    frame = np.zeros(9)
    mujoco.mju_quat2Mat(frame, model.body_iquat[body])
    frame = frame.reshape(3, 3)
    return frame @ np.diag(model.body_inertia[body]) @ frame.T


def _one_inertial(text: str) -> None:
    """Raise :class:`ExerciseFailed` unless ``text`` is a single ``<inertial .../>`` element."""
    try:
        element = ET.fromstring(text.strip())
    except ET.ParseError:
        element = None
    if element is None or element.tag != "inertial" or len(element):
        raise ExerciseFailed("`brick_inertial` should be one <inertial .../> element and nothing else")


@checker("2.3", "An explicit <inertial> when inference is off", points=3, answers={"brick_inertial": STRING},
         params=BRICK_PARAMS)
def _brick(ex: Exercise) -> None:
    text = ex.value("brick_inertial")
    _one_inertial(text)
    numbers = tuple(ex.param(name) for name in BRICK_PARAMS)
    mass, centre, ours = _inferred_brick(numbers)
    mine, _ = compile_answer("brick_inertial", text,
                             brick_template(*numbers).format(mode="false", inertial=text))
    k = mine.body("brick").id
    ex.require(np.isclose(mine.body_mass[k], mass, rtol=1e-3),
               "the mass is what the geom implies",
               failure=f"mass {fmt(mine.body_mass[k], unit='kg')}",
               hint="mass = density × volume, and size holds half-lengths")
    ex.require(np.allclose(mine.body_ipos[k], centre, atol=1e-4),
               "the centre of mass is where the geom's centre is",
               failure=f"pos {fmt(mine.body_ipos[k])}", hint="an inertial's pos is in the body frame")
    theirs = inertia_tensor(mine, k)
    ratio = np.trace(theirs) / np.trace(ours)
    ex.require(np.allclose(theirs, ours, rtol=1e-3, atol=1e-7), "the inertia tensor matches",
               failure="4 times too large: full edge lengths where the formula wants half-sizes?"
               if np.isclose(ratio, 4, rtol=0.01) else
               f"the trace of your tensor is {fmt(ratio)} times the geom's",
               hint="about its centre, a box with half-sizes (a, b, c) has I_xx = m (b² + c²) / 3")


# --- 2.4 · modernise an old model --------------------------------------------------------------

L_VOLUME = (0.1**2 - 0.08**2) * 0.04   # m³: the L's square minus its notch, times its height
DENSITY = 1000.0                       # kg/m³, the default density


def lprism_model(mode: str | None = None, edit: Callable[[mujoco.MjsMesh], None] | None = None
                 ) -> mujoco.MjModel:
    """Compile ``models/compiler_mesh_lprism.xml``, optionally with mesh ``lprism``'s inertia
    mode set to ``mode`` (``"convex"``, ``"exact"``, ``"legacy"``, ``"shell"``) or its
    vertices and faces changed by ``edit(mesh)``."""
    spec = models.spec("compiler_mesh_lprism")
    if mode is not None:
        spec.mesh("lprism").inertia = getattr(mujoco.mjtMeshInertia, f"mjMESH_INERTIA_{mode.upper()}")
    if edit is not None:
        edit(spec.mesh("lprism"))
    return spec.compile()


HULL_AREA = 2 * (0.1**2 - 0.08**2 / 2) + (2 * (0.1 + 0.02) + 0.08 * 2**0.5) * 0.04
"""m²: the hull's surface: top and bottom pentagons plus its five walls (perimeter × height)."""

HULL_DENSITY = DENSITY                 # kg/m² of the hull's surface, the default density read as a shell


def old_model(density_L: float = DENSITY, density_hull: float = HULL_DENSITY) -> str:
    """The L-prism as an old tutorial wrote it: exact mesh inertia asked for with a retired
    compiler attribute, and the hull made a thin-walled shell with the geom attribute
    ``shellinertia``, which MuJoCo 3.17.0 refuses on a mesh geom; the L of density
    ``density_L`` (kg/m³), the hull's surface of ``density_hull`` (kg/m²)."""
    hull = f'mesh="lprism_hull" shellinertia="true" density="{density_hull:g}"'
    return model_path("compiler_mesh_lprism").read_text().replace(
        "<visual>", '<compiler exactmeshinertia="true"/>\n  <visual>', 1).replace(
        'mesh="lprism" ', f'mesh="lprism" density="{density_L:g}" ', 1).replace(
        'mesh="lprism_hull"', hull, 1).replace(
        "from its mesh geom (density 1000)", "from its mesh geom (of the density it says)", 1)


OLD_XML = old_model()
"""The published old model of exercise 2.4 (both geoms of the default density, 1000)."""

# the variants: an L of 400-3000 kg/m³ (pine to granite) and a hull of 200-3000 kg/m², each
# 100 away from the published 1000 or more: the published answer's masses are then 10 % or
# more off (against 1e-6), and so are its inertias
OLD_PARAMS = {"density_L": Param(DENSITY, 400.0, 3000.0, 100.0, unit="kg/m³", label="the L's density"),
              "density_hull": Param(HULL_DENSITY, 200.0, 3000.0, 100.0, unit="kg/m²",
                                    label="the hull's density, per square metre of its shell")}


def modern_reference(density_L: float = DENSITY, density_hull: float = HULL_DENSITY) -> mujoco.MjModel:
    """The model :func:`old_model` means, compiled on 3.17.0: the L exact, the hull a shell."""
    spec = models.spec("compiler_mesh_lprism")
    spec.mesh("lprism").inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_EXACT
    spec.mesh("lprism_hull").inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
    spec.geom("L").density, spec.geom("hull").density = density_L, density_hull
    return spec.compile()


@lru_cache(maxsize=64)
def _modern_arrays(density_L: float, density_hull: float) -> tuple[np.ndarray, np.ndarray]:
    """(mesh_vert, body_inertia) of :func:`modern_reference`."""
    want = modern_reference(density_L, density_hull)
    return want.mesh_vert.copy(), want.body_inertia.copy()


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b))


@checker("2.4", "Modernise an old model", points=2, answers={"modern_xml": STRING}, params=OLD_PARAMS)
def _modern(ex: Exercise) -> None:
    text = ex.value("modern_xml")
    density_L, density_hull = ex.param("density_L"), ex.param("density_hull")
    try:
        mine, _ = compile_answer("modern_xml", text)
        problem = ""
    except ExerciseFailed as exc:
        mine, problem = None, str(exc)
    shell_refused = "inertia should be specified in the mesh asset" in problem
    # compiling is the gate, not a share of the grade: the old model itself must not earn points
    ex.precondition(mine is not None, "the model compiles on MuJoCo 3.17.0", failure=problem,
                    hint=("3.17.0 refuses shellinertia on a mesh geom: find in the XML reference which "
                          "attribute of <mesh> now says 'this mesh is a thin shell'") if shell_refused else
                         "exactmeshinertia has a successor on the <mesh> element (section 6)")
    L, hull = named(mine, "body", "L", "modern_xml"), named(mine, "body", "hull", "modern_xml")
    mass_L, mass_hull = float(mine.body_mass[L]), float(mine.body_mass[hull])
    ex.require(np.isclose(mass_L, density_L * L_VOLUME, rtol=1e-6),   # 1e-6: single-precision vertices
               "the L gets its exact mass",
               failure=f"the L weighs {fmt(mass_L, unit='kg')}",
               hint="without an inertia mode the mesh falls back to the default, which is not exact")
    solid = np.isclose(mass_hull, density_hull * (0.1**2 - 0.08**2 / 2) * 0.04, rtol=1e-6)
    ex.require(np.isclose(mass_hull, density_hull * HULL_AREA, rtol=1e-6),   # density per m² of surface
               "the hull is the thin shell the old model asked for",
               failure=f"the hull weighs {fmt(mass_hull, unit='kg')}"
                       + (", a solid's mass: density × volume" if solid else ""),
               hint="dropping shellinertia makes the hull solid; a shell's mass is density × surface "
                    "area, and in 3.17.0 a mesh's inertia mode is set on the mesh asset")
    vertices, inertias = _modern_arrays(density_L, density_hull)
    ex.require(_same(mine.mesh_vert, vertices) and _same(mine.body_inertia, inertias),
               "the meshes and the inertias are those the old model meant",
               failure="the mesh or an inertia differs",
               hint="change how the volume is computed, not the vertices, faces or masses")
