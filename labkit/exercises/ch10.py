"""Checkers of chapter 10 (stability and scale), and the experiments they share with the
chapter's lessons:

- :func:`diverges` and :func:`stability_limit`: does a one-dof model blow up at a timestep,
  and the largest timestep at which it does not (found by bisection).  Section 1 measures
  the integrators' limits with them; Exercise 10.1 grades a timestep with them.
- :func:`servo`: the ball of ``models/stability_servo.xml`` with a given kp, kv and joint or
  tendon damping (section 1's damping kinds, Exercise 10.1's :func:`exercise_servo`).
- :func:`finger`: the finger of ``models/stability_finger.xml`` with armature, a velocity gain,
  scaled, or on a slide (section 2, section 4, Exercise 10.2's :func:`exercise_finger`).
- :func:`with_units` and :func:`arm_motion`: ``models/scale_arm*.xml`` with the physical
  constants of a unit system, and the motion to compare (sections 3–4, Exercise 10.3).

Every exercise is graded by simulating the learner's numbers in a freshly loaded course model.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from .. import models, sim
from ..display import fmt
from ..models import load
from ..recording import Recording, record
from .answers import number
from .core import Exercise, Param, checker

if TYPE_CHECKING:
    import mujoco

__all__ = ["EX_DAMPING", "EX_KP", "EX_KV", "EX_TENDON_DAMPING", "FINGER_KV", "GROWTH", "MM", "NSTEP", "SI",
           "arm_motion", "diverges", "exercise_finger", "exercise_servo", "finger", "servo",
           "stability_limit", "with_units"]

NSTEP = 10_000
"""Steps a run lasts before :func:`diverges` judges it."""

GROWTH = 1e3
"""How far (times the starting offset) a stable run may wander before it counts as diverged."""

EX_KP, EX_KV, EX_DAMPING, EX_TENDON_DAMPING = 3600.0, 60.0, 24.0, 48.0
"""Exercise 10.1's published servo on the 1 kg ball: omega = sqrt(kp/m) = 60 rad/s; the actuator's
kv gives the damping ratio kv / (2 sqrt(kp m)) = 0.5, the joint's damping (N·s/m) 0.2, the damping
of a fixed tendon that follows the joint 0.4.  Under Euler the kv and the tendon's damping are
integrated explicitly, the joint's implicitly: no row of the chapter's table covers the mix, and
the exercise's text and its ``labkit.given("10.1")`` box, not a builder, hand the learner the
numbers (each student's own in a handout)."""

FINGER_KV = 4e-4         # N·m·s/rad: Exercise 10.2's finger servo has this velocity gain (published)
FINGER_TIMESTEP = 0.002  # s: Exercise 10.2's finger must run at this step, the default (published)

# Exercise 10.1's variants: ω from 45 to 77 rad/s, and dampings whose net explicit ratio
# ζ(kv) + ζ(tendon) − ζ(joint) stays between 0.1 and 1.7, so Euler's limit lies between 0.012 and
# 0.04 s, far from 1 s and from 0 (the kv and tendon dampings always outweigh the joint's: the
# damping lowers the limit, as in the chapter's table).  valid= keeps a variant only where the
# published answers miss it and every typical mistake stays a mistake (:func:`_servo_apart`).
SERVO_KP_PARAM = Param(EX_KP, 2000.0, 6000.0, 400.0, unit="N/m", label="the servo's kp")
SERVO_KV_PARAM = Param(EX_KV, 30.0, 90.0, 10.0, unit="N·s/m", label="the servo's kv")
JOINT_DAMPING_PARAM = Param(EX_DAMPING, 12.0, 36.0, 4.0, unit="N·s/m", label="the slide joint's damping")
TENDON_DAMPING_PARAM = Param(EX_TENDON_DAMPING, 24.0, 72.0, 8.0, unit="N·s/m",
                             label="the damping of the fixed tendon that follows the joint")
# Exercise 10.2's: kv 0.2-1.4 mN·m·s/rad (ζ 0.14-1.1 at the least armature) and steps of 1-3 ms;
# valid= keeps the least armature at least half the finger's own inertia (so the bare finger
# diverges clearly) and 30 % away from the published one (:func:`_finger_apart`).
FINGER_KV_PARAM = Param(FINGER_KV, 2e-4, 1.4e-3, 2e-4, unit="N·m·s/rad",
                        label="the velocity gain kv of the finger's servo")
FINGER_TIMESTEP_PARAM = Param(FINGER_TIMESTEP, 0.001, 0.003, 0.00025, unit="ms", scale=1e-3, gap=0.0005,
                              label="the timestep the finger must run at, under Euler")
ARMATURE_SLACK = 1.25    # Exercise 10.2: at most this factor above the least armature that works

SI = {"gravity": 9.81, "density": 1000.0, "damping": 0.05, "width": 0.001}
"""The numbers ``scale_arm.xml`` relies on, in SI: MuJoCo's default gravity (m/s²), geom density
(kg/m³) and solimp width (m), and the file's hinge damping (N·m·s/rad)."""

MM = {"gravity": 9.81e3, "density": 1000.0e-9, "damping": 0.05e6, "width": 1.0}
"""The same in millimetres, kilograms and seconds: mm/s², kg/mm³, kg·mm²/s per rad, mm."""


def _key_scale(model: mujoco.MjModel) -> float:
    """The size of a one-dof model's starting offset: |qpos| + |ctrl| of its first keyframe."""
    return float(np.abs(model.key_qpos[0]).sum() + np.abs(model.key_ctrl[0]).sum())


def diverges(model: mujoco.MjModel, data: mujoco.MjData, timestep: float, *, nstep: int = NSTEP,
             growth: float = GROWTH) -> bool:
    """Whether a one-dof model, started from its first keyframe, blows up within ``nstep``
    steps of ``timestep`` seconds (the model's own timestep is put back afterwards).

    Blowing up: MuJoCo raised a warning (a NaN, Inf or value beyond mjMAXVAL in qpos, qvel or
    qacc, after which it resets the data; a run is stopped at the first such warning), or
    |qpos| over the last 10 steps exceeds ``growth`` times the keyframe's |qpos| + |ctrl|.
    Near a stability limit the amplitude grows (or decays) by a factor per step close to 1;
    the 10 000 steps let a growth of 0.1 % per step pass the 1000× threshold, so the limit is
    found to a few parts in 10⁴.
    """
    import mujoco

    def warned() -> bool:
        return any(w.number > 0 for w in data.warning)

    saved = model.opt.timestep
    model.opt.timestep = timestep
    try:
        mujoco.mj_resetDataKeyframe(model, data, 0)
        with sim.mujoco_warnings():   # MuJoCo's message is not the point here: its counters are
            for done in range(0, nstep - 10, 1000):          # in chunks: a run MuJoCo flagged ends early
                mujoco.mj_step(model, data, nstep=min(1000, nstep - 10 - done))
                if warned():
                    return True
            peak = 0.0
            for _ in range(10):                              # the last steps: any of them may peak
                mujoco.mj_step(model, data)
                peak = max(peak, float(np.abs(data.qpos).max()))
    finally:
        model.opt.timestep = saved
    return warned() or not peak <= growth * _key_scale(model)   # NaN is not <= anything


def stability_limit(model: mujoco.MjModel, data: mujoco.MjData, *, low: float = 1e-6, high: float = 1.0,
                    iterations: int = 24) -> float:
    """The largest timestep (s) at which ``model`` does not diverge (:func:`diverges`), found by
    bisection in log scale between a stable ``low`` and an unstable ``high``; after 24 halvings
    of a 10⁶ range the bracket is 1 + 10⁻⁶ wide.  Returns the stable end of the bracket."""
    if diverges(model, data, low) or not diverges(model, data, high):
        raise ValueError(f"the bracket [{low}, {high}] s does not hold the stability limit")
    for _ in range(iterations):
        middle = math.sqrt(low * high)
        if diverges(model, data, middle):
            high = middle
        else:
            low = middle
    return low


def servo(kp: float = 1e4, kv: float = 200.0, *, joint_damping: float = 0.0,
          tendon_damping: float = 0.0, actuator_damping: float = 0.0,
          tendon_transmission: bool = False) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The 1 kg ball of ``stability_servo`` on a position servo of ``kp`` (N/m) and ``kv``
    (N·s/m), with ``joint_damping`` on its slide joint, ``tendon_damping`` on a fixed tendon
    of that joint, and the actuator's own ``damping`` attribute set to ``actuator_damping``
    (all N·s/m), at its keyframe (1 cm off target, at rest).  ``tendon_transmission`` makes the
    servo act on that tendon (length = x) instead of the joint."""
    import mujoco

    spec = models.spec("stability_servo")
    spec.joint("x").damping[0] = joint_damping
    if tendon_damping or tendon_transmission:
        tendon = spec.add_tendon(name="x_tendon", damping=tendon_damping)
        tendon.wrap_joint("x", 1.0)                   # length = x: its damping force is -c·ẋ
    actuator = spec.actuator("servo")
    if tendon_transmission:
        actuator.trntype, actuator.target = mujoco.mjtTrn.mjTRN_TENDON, "x_tendon"
    actuator.set_to_position(kp=kp, kv=kv)
    actuator.damping[0] = actuator_damping            # force -damping·(actuator velocity)
    return load(spec, keyframe="pulled")


def exercise_servo(kp: float = EX_KP, kv: float = EX_KV, joint_damping: float = EX_DAMPING,
                   tendon_damping: float = EX_TENDON_DAMPING) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Exercise 10.1's servo: :func:`servo` with ``kp`` (N/m), ``kv``, ``joint_damping`` and the
    ``tendon_damping`` of a fixed tendon of the joint (N·s/m); published: 3600, 60, 24 and 48."""
    return servo(kp, kv, joint_damping=joint_damping, tendon_damping=tendon_damping)


def finger(armature: float = 0.0, scale: float = 1.0, *, kv: float = 0.0,
           joint: str = "hinge") -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The finger of ``stability_finger``, with ``armature`` (kg·m², or kg on a slide) on its
    joint, a servo velocity gain ``kv``, and its segment ``scale`` times as large (same density,
    same kp), at its keyframe.  ``joint="slide"`` puts the segment on a horizontal slide along
    x instead of the hinge (the joint keeps its name, the servo its kp, now in N/m)."""
    spec = models.spec("stability_finger")
    segment = spec.geom("segment")
    segment.size = np.asarray(segment.size) * scale
    segment.pos = np.asarray(segment.pos) * scale
    hinge = spec.joint("hinge")
    hinge.armature = armature
    if joint == "slide":
        import mujoco

        hinge.type, hinge.axis = mujoco.mjtJoint.mjJNT_SLIDE, [1.0, 0.0, 0.0]   # gravity ⟂ the slide
    elif joint != "hinge":
        raise ValueError(f"joint is 'hinge' or 'slide', not {joint!r}")
    model, data = load(spec, keyframe="step")
    model.actuator_biasprm[0, 2] = -kv                # position servo: bias = -kp·q - kv·q̇
    return model, data


def exercise_finger(armature: float = 0.0, kv: float = FINGER_KV) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Exercise 10.2's finger: :func:`finger` with ``armature`` and the servo's velocity gain ``kv``
    (published: FINGER_KV)."""
    return finger(armature, kv=kv)


def with_units(name: str, *, gravity: float, density: float, damping: float,
               width: float) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Course model ``name`` (``scale_arm``, ``scale_arm_mm`` or ``scale_arm_cm``) with gravity
    (magnitude, straight down), every geom's density and solimp width, and the hinge's damping
    set to the given numbers (read in the file's units)."""
    spec = models.spec(name)
    spec.option.gravity = [0.0, 0.0, -gravity]
    for geom in spec.geoms:
        geom.density = density
        geom.solimp[2] = width                 # solimp = (dmin, dmax, width, midpoint, power)
    spec.joint("hinge").damping[0] = damping
    return load(spec)


def arm_motion(model: mujoco.MjModel, data: mujoco.MjData, duration: float = 1.0) -> Recording:
    """Record the arm's ``"angle"`` (rad) and the block's ``"pose"`` (its free joint's qpos:
    position in the model's length unit, then the quaternion) of a ``scale_arm`` model."""
    return record(model, data, {"angle": data.joint("hinge").qpos, "pose": data.joint("block").qpos},
                  duration=duration)


# -- Exercise 10.1 ------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _servo_limit(kp: float = EX_KP, kv: float = EX_KV, joint_damping: float = EX_DAMPING,
                 tendon_damping: float = EX_TENDON_DAMPING) -> float:
    """The largest stable Euler timestep (s) of :func:`exercise_servo` (measured once per servo)."""
    return stability_limit(*exercise_servo(kp, kv, joint_damping, tendon_damping))


def _euler_limit(zeta_explicit: float, zeta_implicit: float, omega: float) -> float:
    """The Euler limit h (s) of one linear mode with explicit and implicit damping ratios: the
    growth factor reaches -1 where (ωh)² + 4(ζe - ζi)(ωh) - 4 = 0 (the typical mistakes below)."""
    z = zeta_explicit - zeta_implicit
    return 2 * (math.sqrt(z**2 + 1) - z) / omega


def _servo_mistakes(kp: float = EX_KP, kv: float = EX_KV, joint_damping: float = EX_DAMPING,
                    tendon_damping: float = EX_TENDON_DAMPING) -> tuple[float, dict[float, str]]:
    """Exercise 10.1's servo: its Euler limit by hand (s), and the typical wrong timesteps with
    their explanations."""
    omega = math.sqrt(kp)                                             # the ball weighs 1 kg
    kv, joint, tendon = (c / (2 * omega) for c in (kv, joint_damping, tendon_damping))
    return _euler_limit(kv + tendon, joint, omega), {
        2 / omega: "that is the limit of an undamped oscillator; damping changes it",
        _euler_limit(kv + tendon + joint, 0, omega): "that treats the joint damping as explicit too; "
        "Euler integrates joint damping implicitly (the eulerdamp flag)",
        _euler_limit(0, kv + tendon + joint, omega): "that treats all three as implicit; under Euler "
        "only the joint's damping is",
        _euler_limit(kv, tendon + joint, omega): "that treats the tendon's damping as implicit; under "
        "Euler only the joint's damping is",
        _euler_limit(kv + tendon, 0, omega): "that leaves out the joint damping, which Euler "
        "integrates implicitly and which raises the limit",
        _euler_limit(kv, joint, omega): "that leaves out the tendon's damping, which Euler "
        "integrates explicitly and which lowers the limit",
        _euler_limit(kv, 0, omega): "that is the table's kv row alone; the servo has two more dampings",
        _euler_limit(joint + tendon, kv, omega): "that swaps them: the servo's kv is explicit",
    }


def _servo_apart(values: dict[str, float]) -> bool:
    """A variant of 10.1 whose accepted band [0.95, 1]·limit misses the published one (with 2 % to
    spare), and in which no typical mistake lands in the band (or within 1 % above it)."""
    limit, mistakes = _servo_mistakes(**values)
    published, _ = _servo_mistakes()
    return (not 0.93 * published <= limit <= 1.08 * published
            and all(not 0.93 * limit <= wrong <= 1.01 * limit for wrong in mistakes))


@checker("10.1", "The largest stable timestep of a servo with three kinds of damping, under Euler",
         points=2, answers={"servo_timestep": number(0, 1, low_open=True, high_open=True, unit=" s",
                                                     why="a timestep is positive, and this servo (period "
                                                         "about 0.1 s) diverges long before 1 s")},
         params={"kp": SERVO_KP_PARAM, "kv": SERVO_KV_PARAM, "joint_damping": JOINT_DAMPING_PARAM,
                 "tendon_damping": TENDON_DAMPING_PARAM}, valid=_servo_apart)
def _servo_timestep(ex: Exercise) -> None:
    h = ex.value("servo_timestep")
    numbers = {name: ex.param(name) for name in ("kp", "kv", "joint_damping", "tendon_damping")}
    model, data = exercise_servo(**numbers)
    _, mistakes = _servo_mistakes(**numbers)
    why = next((text for value, text in mistakes.items() if math.isclose(h, value, rel_tol=1e-3)), "")
    # one requirement, both sides: any tiny step is stable, and only the limit is both
    stable = not diverges(model, data, h)
    close = h >= 0.95 * _servo_limit(**numbers)
    if not stable:
        failure = f"it diverges at {fmt(h, unit='s')}" + (f": {why}" if why else "")
        hint = ("write one Euler step of the ball: the joint damping c sits with the mass, "
                "(m + h·c)·v' = m·v - h·(kp·x + (kv + tendon damping)·v), then x' = x + h·v'; find "
                "where the growth factor reaches -1")
    else:
        failure = f"{fmt(h, unit='s')} is stable but more than 5 % too cautious" + (f": {why}" if why else "")
        hint = "which of the three dampings does Euler treat implicitly? Section 1's table says"
    ex.require(stable and close, "the servo stays bounded at this timestep under Euler, within 5 % of the "
               "largest stable one", failure=failure, hint=hint)


# -- Exercise 10.2 ------------------------------------------------------------------------------

MAX_ARMATURE = 1e-3   # kg·m²: over 5000 times the 2 cm finger's own inertia about its hinge


@cache
def _finger_facts() -> tuple[float, float]:
    """(kp in N·m/rad, the hinge's own inertia dof_M0 in kg·m²) of :func:`exercise_finger`."""
    bare, _ = exercise_finger()
    return float(bare.actuator_gainprm[0, 0]), float(bare.dof_M0[0])


def _least_armature(kv: float = FINGER_KV, timestep: float = FINGER_TIMESTEP) -> float:
    """Exercise 10.2's least armature (kg·m²) by hand: kv explicit under Euler, so the hinge needs
    (kp·h² + 2·kv·h)/4 in all, of which the finger brings dof_M0."""
    kp, inertia = _finger_facts()
    return (kp * timestep**2 + 2 * kv * timestep) / 4 - inertia


def _finger_apart(values: dict[str, float]) -> bool:
    """A variant of 10.2 whose least armature is at least half the finger's own inertia, and 30 %
    away from the published one (its accepted band is 25 % wide, so the two bands do not meet)."""
    least, published = _least_armature(values["kv"], values["timestep"]), _least_armature()
    return least >= _finger_facts()[1] / 2 and not 0.77 * published < least < 1.3 * published


@checker("10.2", "Armature that tames a damped finger", points=2,
         answers={"finger_armature": number(0, MAX_ARMATURE, unit=" kg·m²",
                                            why="armature adds inertia to the hinge; it cannot remove any, "
                                                "and 1e-3 kg·m² is thousands of times the finger's own")},
         params={"kv": FINGER_KV_PARAM, "timestep": FINGER_TIMESTEP_PARAM}, valid=_finger_apart)
def _armature(ex: Exercise) -> None:
    armature = ex.value("finger_armature")
    kv, h = ex.param("kv"), ex.param("timestep")
    kp, inertia = _finger_facts()
    undamped, needed = kp * h**2 / 4, (kp * h**2 + 2 * kv * h) / 4    # total inertia at the limit
    why = {undamped - inertia: "that is the least armature of an undamped servo; this one's kv is "
                               "integrated explicitly under Euler and lowers the limit",
           undamped: "that is the inertia an undamped servo needs in all, and the finger already brings "
                     "some of its own (dof_M0)",
           needed: "that is the inertia the hinge needs in all; the finger already brings some of its own "
                   "(dof_M0)"}
    note = next((f": {text}" for value, text in why.items()
                 if math.isclose(armature, value, rel_tol=1e-3)), "")
    # one requirement, both sides: any huge armature is stable, and only the least one is both
    stable = not diverges(*exercise_finger(armature, kv), h)
    least = stable and diverges(*exercise_finger(armature / ARMATURE_SLACK, kv), h)
    if not stable:
        failure = f"with {fmt(armature, unit='kg·m²')} it still diverges{note}"
        hint = ("the servo is a spring kp and an actuator damper kv on the hinge's inertia I + armature; "
                "armature changes both ω and the damping ratio. Which of Euler's limits applies to an "
                "actuator's kv?")
    else:
        failure = (f"{fmt(armature, unit='kg·m²')} works, but so does {fmt(1 / ARMATURE_SLACK)}× as much"
                   f"{note}")
        hint = f"the hinge's own inertia is dof_M0 = {fmt(inertia, unit='kg·m²')}"
    ex.require(least, f"the finger stays bounded at the {FINGER_TIMESTEP_PARAM.show(h)} step under Euler, "
               "with at most 25 % more armature than the least that works", failure=failure, hint=hint)


# -- Exercise 10.3 ------------------------------------------------------------------------------

# the variants: the SI arm's density (500-3000 kg/m³, plastic to aluminium), hinge damping and solimp
# width; every one converts exactly, so neighbouring variants never accept each other's numbers.
# Gravity stays Earth's, MuJoCo's default.  valid= keeps damping/density (which sets the swing) off
# the published ratio, so that the published answer's swing does not match.
CGS_DENSITY_PARAM = Param(SI["density"], 500.0, 3000.0, 250.0, unit="kg/m³",
                          label="the density of every geom of the SI model")
CGS_DAMPING_PARAM = Param(SI["damping"], 0.02, 0.1, 0.01, unit="N·m·s/rad",
                          label="the SI model's hinge damping")
# widths on a 1 mm grid: at 1.5 mm (alone of 0.2-5 mm in 0.1 mm steps) the SI and CGS landings part
# by 2 nm, above the 1 nm the comparison allows
CGS_WIDTH_PARAM = Param(SI["width"], 0.001, 0.005, 0.001, unit="m",
                        label="the SI model's solimp width, on every geom")


def _cgs_apart(values: dict[str, float]) -> bool:
    """A variant of 10.3 whose damping per density differs from the published one by 5 % or more."""
    return abs(values["damping"] / values["density"] / (SI["damping"] / SI["density"]) - 1) >= 0.05


def _cgs_mistakes(si: dict[str, float]) -> dict[str, dict[float, str]]:
    """Exercise 10.3's typical wrong numbers for the SI numbers ``si``, by answer, with their
    explanations."""
    return {
        "cgs_gravity": {si["gravity"]: "that is the number in m/s²",
                        si["gravity"] * 1e3: "that is the number in mm/s²"},
        "cgs_density": {si["density"]: "that is the number in kg/m³",
                        si["density"] * 1e-6: "that is kg/cm³: the mass unit is the gram"},
        "cgs_damping": {si["damping"]: "that is the SI number",
                        si["damping"] * 1e4: "that converts the lengths but not the mass",
                        si["damping"] * 1e3: "that converts the mass but not the lengths"},
        "cgs_width": {si["width"]: "that is the SI number: solimp's width is a length"},
    }


def _mistake(ex: Exercise, si: dict[str, float], *names: str) -> str:
    """The explanation of the first of ``names`` whose answer is a typical wrong number for the SI
    numbers ``si``, or ""."""
    mistakes = _cgs_mistakes(si)
    for name in names:
        value = ex.value(name)
        for wrong, text in mistakes[name].items():
            if math.isclose(value, wrong, rel_tol=1e-3):
                return f"`{name}` = {fmt(value)}: {text}"
    return ""


# the four numbers' ranges: positive, and wide enough to explain every unit slip between SI, CGS and
# mm–kg–s (the typical mistakes below), but no wider than the physics allows
_CGS_KINDS = {
    "cgs_gravity": number(0, 1e5, low_open=True, unit=" cm/s²",
                          why="gravity's magnitude is positive, and 1e5 cm/s² is 100 g"),
    "cgs_density": number(0, 1e4, low_open=True, unit=" g/cm³",
                          why="a density is positive, and 1e4 g/cm³ is 400 times osmium's"),
    "cgs_damping": number(0, 1e10, low_open=True, unit=" g·cm²/s",
                          why="a damping is positive, and at 1e10 g·cm²/s (1000 N·m·s/rad) the arm "
                              "barely moves in the trial"),
    "cgs_width": number(0, 100, low_open=True, unit=" cm",
                        why="solimp's width is a positive length, and 100 cm is larger than the whole scene"),
}


@checker("10.3", "The arm and the cube in centimetres and grams", points=3, answers=_CGS_KINDS,
         params={"density": CGS_DENSITY_PARAM, "damping": CGS_DAMPING_PARAM, "width": CGS_WIDTH_PARAM},
         valid=_cgs_apart)
def _cgs(ex: Exercise) -> None:
    si_numbers = {**SI, **{name: ex.param(name) for name in ("density", "damping", "width")}}
    values = {key: ex.value(f"cgs_{key}") for key in SI}
    si_model, si_data = with_units("scale_arm", **si_numbers)
    model, data = with_units("scale_arm_cm", **values)
    si, cgs = arm_motion(si_model, si_data), arm_motion(model, data)
    fall = si.t <= 0.1                                   # before the cube lands: free fall only
    # 1e-9 m: both runs compute the same numbers up to rounding and the solver's 1e-8 tolerance
    falls = np.allclose(cgs["pose"][fall, :3] / 100, si["pose"][fall, :3], rtol=0, atol=1e-9)
    weighs = np.allclose(model.body_mass, 1e3 * si_model.body_mass, rtol=1e-9, atol=0)
    # 1 g/cm³ is what a guess of 1 gives: the masses count only with the fall, which no guess meets
    ex.require(weighs and falls, "the bodies weigh what they weigh in SI (in grams)",
               failure=(_mistake(ex, si_numbers, "cgs_density") or "the masses differ") if not weighs
               else "the masses are right, but they count only once the cube falls as in SI",
               hint="1 kg/m³ is 1000 g per 10⁶ cm³")
    ex.require(falls, "the cube falls as in SI",
               failure=_mistake(ex, si_numbers, "cgs_gravity") or "it falls at another rate",
               hint="an acceleration is a length per time²")
    ex.require(np.allclose(cgs["angle"], si["angle"], rtol=0, atol=1e-9), "the arm swings as in SI",
               failure=(_mistake(ex, si_numbers, "cgs_gravity", "cgs_density", "cgs_damping")
                        or "it swings differently"),
               hint="a hinge's damping is a torque per angular velocity: mass·length²/time")
    ex.require(np.allclose(cgs["pose"][:, :3] / 100, si["pose"][:, :3], rtol=0, atol=1e-9),
               "the cube lands and rests as in SI",
               failure=(_mistake(ex, si_numbers, "cgs_gravity", "cgs_width")
                        or "its contact behaves differently"),
               hint="solimp's third number is a length")
