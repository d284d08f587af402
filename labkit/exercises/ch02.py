"""Checkers of chapter 02 (units, frames and the compiler): what the compiler makes of the
learner's MJCF.

The reference models (the URDF camera mount, the brick, the L-prism of
``models/compiler_mesh_lprism.xml``) are held here; the notebook imports them from here,
so the reader sees the very models the grader uses.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

import mujoco
import numpy as np

from .. import models
from ..actuation import explain
from ..display import fmt
from ..models import load, model_path
from .answers import STRING
from .ch01 import compile_answer, named
from .core import Exercise, ExerciseFailed, checker

__all__ = ["BRICK_XML", "HULL_AREA", "MOUNT_RPY", "MOUNT_URDF", "OLD_XML", "euler_quat", "gap_deg",
           "inertia_tensor", "lprism_model", "modern_reference"]


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

ELBOW_RANGE = (-30.0, 120.0)     # degrees


@checker("2.1", "A servo that respects its joint's range", points=3, answers={"servo_xml": STRING})
def _servo_range(ex: Exercise) -> None:
    model, _ = compile_answer("servo_xml", ex.value("servo_xml"))
    elbow, servo = named(model, "joint", "elbow", "servo_xml"), named(model, "actuator", "servo", "servo_xml")
    want = np.radians(ELBOW_RANGE)
    hinge = model.jnt_type[elbow] == mujoco.mjtJoint.mjJNT_HINGE
    limits = model.jnt_range[elbow]
    kind = mujoco.mjtJoint(int(model.jnt_type[elbow])).name
    ex.require(hinge and bool(model.jnt_limited[elbow]) and np.allclose(limits, want, atol=1e-3),
               "the elbow is limited to -30°..120°",
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

MOUNT_RPY = (0.4, -0.2, 1.1)      # roll, pitch, yaw in radians
MOUNT_URDF = f"""
<robot name="mount">
  <link name="base"/>
  <link name="camera">
    <inertial>
      <mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="pan" type="revolute">
    <parent link="base"/><child link="camera"/>
    <origin rpy="{MOUNT_RPY[0]} {MOUNT_RPY[1]} {MOUNT_RPY[2]}"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>"""
"""A two-link URDF whose only joint has an ``rpy`` origin: the camera's orientation is
what exercise 2.2 asks to port."""


@checker("2.2", "Port a URDF mounting pose", points=3, answers={"mount_xml": STRING})
def _mount(ex: Exercise) -> None:
    model, _ = compile_answer("mount_xml", ex.value("mount_xml"))
    mine = model.body_quat[named(model, "body", "mount", "mount_xml")]
    target = load(MOUNT_URDF)[0].body("camera").quat
    rpy_text = " ".join(map(str, MOUNT_RPY))
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

BRICK_XML = """
<mujoco>
  <compiler inertiafromgeom="{mode}"/>
  <worldbody>
    <body name="brick">
      <freejoint/>
      {inertial}
      <geom type="box" size="0.05 0.1 0.2" pos="0 0 0.1"/>   <!-- half-sizes; density 1000 kg/m³ -->
    </body>
  </worldbody>
</mujoco>"""
"""The brick of exercise 2.3: ``{mode}`` is ``compiler/inertiafromgeom``, ``{inertial}``
the learner's <inertial> element (or nothing)."""


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


@checker("2.3", "An explicit <inertial> when inference is off", points=3, answers={"brick_inertial": STRING})
def _brick(ex: Exercise) -> None:
    text = ex.value("brick_inertial")
    _one_inertial(text)
    auto, _ = load(BRICK_XML.format(mode="auto", inertial=""))
    mine, _ = compile_answer("brick_inertial", text, BRICK_XML.format(mode="false", inertial=text))
    k = auto.body("brick").id
    ex.require(np.isclose(mine.body_mass[k], auto.body_mass[k], rtol=1e-3),
               "the mass is what the geom implies",
               failure=f"mass {fmt(mine.body_mass[k], unit='kg')}",
               hint="mass = density × volume, and size holds half-lengths")
    ex.require(np.allclose(mine.body_ipos[k], auto.body_ipos[k], atol=1e-4),
               "the centre of mass is where the geom's centre is",
               failure=f"pos {fmt(mine.body_ipos[k])}", hint="an inertial's pos is in the body frame")
    theirs, ours = inertia_tensor(mine, k), inertia_tensor(auto, k)
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

OLD_XML = model_path("compiler_mesh_lprism").read_text().replace(
    "<visual>", '<compiler exactmeshinertia="true"/>\n  <visual>', 1).replace(
    'mesh="lprism_hull"', 'mesh="lprism_hull" shellinertia="true"', 1)
"""The L-prism as an old tutorial wrote it: exact mesh inertia asked for with a retired
compiler attribute, and the hull made a thin-walled shell with the geom attribute
``shellinertia``, which MuJoCo 3.17.0 refuses on a mesh geom."""


def modern_reference() -> mujoco.MjModel:
    """The model ``OLD_XML`` means, compiled on 3.17.0: the L exact, the hull a shell."""
    spec = models.spec("compiler_mesh_lprism")
    spec.mesh("lprism").inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_EXACT
    spec.mesh("lprism_hull").inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
    return spec.compile()


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b))


@checker("2.4", "Modernise an old model", points=2, answers={"modern_xml": STRING})
def _modern(ex: Exercise) -> None:
    text = ex.value("modern_xml")
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
    ex.require(np.isclose(mass_L, DENSITY * L_VOLUME, rtol=1e-6),   # 1e-6: single-precision vertices
               "the L gets its exact mass",
               failure=f"the L weighs {fmt(mass_L, unit='kg')}",
               hint="without an inertia mode the mesh falls back to the default, which is not exact")
    solid = np.isclose(mass_hull, DENSITY * (0.1**2 - 0.08**2 / 2) * 0.04, rtol=1e-6)
    ex.require(np.isclose(mass_hull, DENSITY * HULL_AREA, rtol=1e-6),   # density per m² of surface
               "the hull is the thin shell the old model asked for",
               failure=f"the hull weighs {fmt(mass_hull, unit='kg')}"
                       + (", a solid's mass: density × volume" if solid else ""),
               hint="dropping shellinertia makes the hull solid; a shell's mass is density × surface "
                    "area, and in 3.17.0 a mesh's inertia mode is set on the mesh asset")
    want = modern_reference()
    ex.require(_same(mine.mesh_vert, want.mesh_vert) and _same(mine.body_inertia, want.body_inertia),
               "the meshes and the inertias are those the old model meant",
               failure="the mesh or an inertia differs",
               hint="change how the volume is computed, not the vertices, faces or masses")
