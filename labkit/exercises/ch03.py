"""Checkers of chapter 03 (actuators: from ``ctrl`` to generalized force).

The models are held here: the running arm of ``models/actuator_arm.xml`` with its servo
line (:data:`SERVO`) replaced by another actuator (:func:`arm_xml`), and the small models
the exercises read (:data:`COUNT_ME`, :data:`WHEEL`, :data:`CABLE`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import mujoco
import numpy as np

from ..actuation import explain
from ..display import fmt
from ..models import load, model_path
from ..recording import record
from ..sim import mujoco_warnings
from .answers import INTEGER, NUMBER, array, number
from .core import Exercise, Param, checker

__all__ = ["ARM", "CABLE", "COUNT_ME", "SERVO", "WHEEL", "arm_xml", "cable_xml", "count_me", "joint_spring"]

ARM = model_path("actuator_arm").read_text()
"""The MJCF text of ``models/actuator_arm.xml``: a 1 kg ball 0.5 m out on a shoulder hinge."""
SERVO = '<position name="servo" joint="shoulder" class="servo" ctrlrange="-1.2 1.2" forcerange="-8 8"/>'
"""The arm's actuator line, as written in the file: the text :func:`arm_xml` replaces."""
if SERVO not in ARM:   # the file and this copy of its line must not drift apart
    raise RuntimeError("models/actuator_arm.xml no longer contains labkit.exercises.ch03.SERVO")


def arm_xml(actuator: str) -> str:
    """The arm's MJCF with its servo replaced by ``actuator`` (MJCF text of one or more
    actuator elements)."""
    return ARM.replace(SERVO, actuator)


# --- 3.1 · count the blocks --------------------------------------------------------------------

_COUNTED = """
<mujoco>
  <worldbody>
    <body><joint name="a" axis="0 1 0"/><geom size=".1" mass="1"/>
      <body pos=".3 0 0"><joint name="b" type="ball"/><geom size=".1" mass="1"/></body>
      <body pos="0 .3 0"><joint name="c" axis="1 0 0"/><geom size=".1" mass="1"/></body>
    </body>
  </worldbody>
  <actuator>
{lines}
  </actuator>
</mujoco>"""
_COUNTED_LINES = ('<pid joint="a" input="pos vel" kp="10" ki="2" slewmax="1"/>',
                  '<orientation joint="b" input="quat" kp="3"/>',
                  '<position joint="c" kp="5" timeconst="0.02"/>')


def count_me(pids: float = 1, gazes: float = 1, filters: float = 1) -> str:
    """Exercise 3.1's model: ``pids`` copies of the pid line (inputs pos vel, with ki and
    slewmax), ``gazes`` of the quaternion orientation servo and ``filters`` of the filtered
    position servo, taken in turn (pid, orientation, position, pid, ...) while each lasts."""
    wanted = [round(pids), round(gazes), round(filters)]
    lines = [f"    {line}" for k in range(max(wanted))
             for line, count in zip(_COUNTED_LINES, wanted, strict=True) if k < count]
    return _COUNTED.format(lines="\n".join(lines))


COUNT_ME = count_me()
"""Exercise 3.1's published model (one actuator of each kind), to be read without compiling it."""

# the variants: one to four of each kind, at most 8 actuators in all (a model to read, not a
# census), never the published one; every other set changes nactuator, nu and nout (each grows
# with every count), so the published counts meet at most one requirement
_KINDS = {"pids": "pid servos, input pos vel, with ki and slewmax",
          "gazes": "orientation servos, input quat",
          "filters": "position servos with a timeconst"}
COUNT_PARAMS = {name: Param(1, 1, 4, 1, gap=0, label=f"the number of {what}")
                for name, what in _KINDS.items()}


def _count_valid(v: dict[str, float]) -> bool:
    return sum(v.values()) <= 8 and any(n != 1 for n in v.values())


@checker("3.1", "Count controls, activations and outputs", points=2,
         answers={"counts": array(length=4, integer=True)}, params=COUNT_PARAMS, valid=_count_valid)
def _count(ex: Exercise) -> None:
    answer = tuple(ex.value("counts"))
    flat = all(isinstance(n, int) for n in answer)
    # the shape of the answer is a gate; so is a guess: the four counts are not all equal, so the
    # same number four times (which would hit nactuator and na, both 3) is no answer
    ex.precondition(len(answer) == 4 and flat and len(set(answer)) > 1,
                    "`counts` has four entries (nactuator, nu, na, nout)",
                    failure=(f"it has {len(answer)}" if len(answer) != 4 else
                             "its entries should be single numbers" if not flat else
                             f"all four are {answer[0]}: that is a guess, and these four counts differ"),
                    hint="four numbers, in this order")
    compiled, _ = load(count_me(*(ex.param(name) for name in COUNT_PARAMS)))
    truth = (compiled.nactuator, compiled.nu, compiled.na, compiled.nout)
    hints = ("one actuator per element of <actuator>",
             "a quaternion target is four numbers; the pid reads pos and vel",
             "ki and slewmax each add a state to the pid; the timeconst filter is one more",
             "an orientation servo outputs three torques")
    for label, mine, true, hint in zip(("nactuator", "nu", "na", "nout"), answer, truth, hints, strict=True):
        ex.require(mine == true, f"{label} is right", failure=f"{label} = {fmt(mine)} is not right",
                   hint=hint)


# --- 3.2 · write a pid's control block ---------------------------------------------------------

WHEEL = """
<mujoco>
  <worldbody>
    <body><joint name="spin" axis="0 1 0"/><geom type="cylinder" size=".1 .02" mass="1"/></body>
    <body pos="0 .5 0"><joint name="lift" type="slide" axis="0 0 1"/><geom size=".1" mass="1"/></body>
  </worldbody>
  <actuator>
    <motor name="lift" joint="lift"/>
    <pid name="drive" joint="spin" input="vel ff" kp="0" kv="2"/>
  </actuator>
</mujoco>"""
"""Exercise 3.2's model: a wheel's velocity pid (inputs vel, ff) after a motor."""
WHEEL_SPEED, WHEEL_FF = 3.0, 0.5     # rad/s and N·m, the asked inputs (published)
# the variants: speeds of 1-6 rad/s and feed-forwards of 0.1-0.9 N·m, ranges that never meet, so
# that the block written in the wrong order (ff, vel) never gives the right torque
SPEED_PARAM = Param(WHEEL_SPEED, 1.0, 6.0, 0.5, unit="rad/s", label="the target speed")
FF_PARAM = Param(WHEEL_FF, 0.1, 0.9, 0.1, unit="N·m", label="the feed-forward torque")


@lru_cache(maxsize=1)
def _wheel_kv() -> float:
    """The velocity gain (N·m·s/rad) of :data:`WHEEL`'s pid, as labkit.actuation reads it."""
    model, _ = load(WHEEL)
    return float(explain(model, model.actuator("drive").id).parameters["kv"])


# each input within ±1000: a target speed (rad/s) and a torque (N·m) for a 1 kg wheel; the asked
# values are at most 6 and 0.9
BLOCK = array(each=number(-1e3, 1e3, why="a wheel speed (rad/s) or torque (N·m) beyond ±1000 means "
                                          "nothing for this 1 kg wheel"))


@checker("3.2", "Address a multi-input pid", points=2, answers={"drive_block": BLOCK, "ff_index": INTEGER},
         params={"speed": SPEED_PARAM, "ff": FF_PARAM})
def _pid_block(ex: Exercise) -> None:
    speed, ff = ex.param("speed"), ex.param("ff")
    model, data = load(WHEEL)
    drive = model.actuator("drive").id
    adr, num = model.actuator_ctrladr[drive], model.actuator_ctrlnum[drive]
    kv = _wheel_kv()                                 # the pid's velocity gain, 2 N·m·s/rad
    block = np.asarray(ex.value("drive_block"), dtype=float).ravel()
    ex.precondition(block.size == num, "`drive_block` has one value per input of the pid",
                    failure=f"it has {block.size} values",
                    hint="absent inputs take no slot: no zero for 'pos'")
    data.ctrl[adr:adr + num] = block
    mujoco.mj_forward(model, data)
    torque = data.actuator("drive").force[0]
    block_right = abs(torque - (kv * speed + ff)) < 1e-9
    ex.require(block_right, f"at rest the pid gives kv·({fmt(speed)} − 0) + {fmt(ff)} N·m",
               failure=f"it gives {fmt(torque, unit='N·m')}", hint="the order is vel first, then ff")
    index = int(ex.value("ff_index"))
    model, data = load(WHEEL)                        # fresh, at rest, all controls 0
    before = data.actuator("drive").force[0]
    if 0 <= index < model.nu:
        data.ctrl[index] += 1.0
        mujoco.mj_forward(model, data)
    found = 0 <= index < model.nu and abs(data.actuator("drive").force[0] - before - 1.0) < 1e-9
    # an index is a small integer a guess can hit (nu = 3): it counts only together with the block,
    # which shows the packing it comes from
    ex.require(found and block_right, "data.ctrl[ff_index] is the feed-forward input",
               failure=(f"index {index} is not it" if not found else
                        "that is the index, but the block above is not right yet: the index counts "
                        "together with it"),
               hint="start from the pid's ctrladr: the motor's control comes first")


# --- 3.3, 3.4 · a servo that pulls a cable -----------------------------------------------------

PULLEY, CABLE_GEAR = 0.1, 3.0    # m of cable per rad of shoulder angle; the actuator's gear
CABLE_KP, CABLE_KV = 1000.0, 100.0


def cable_xml(pulley: float = PULLEY) -> str:
    """The arm driven through a cable: a fixed tendon wound on a pulley of radius ``pulley`` (m)
    at the shoulder (``coef``: m of cable per rad), pulled by a position servo with
    ``kp="1000" kv="100" gear="3"``."""
    servo = (f'<position name="servo" tendon="cable" kp="{CABLE_KP:g}" kv="{CABLE_KV:g}" '
             f'gear="{CABLE_GEAR:g}"/>')
    return arm_xml(servo).replace(
        "</worldbody>", "</worldbody>\n  <tendon>\n"
        f'    <fixed name="cable"><joint joint="shoulder" coef="{pulley:g}"/></fixed>\n  </tendon>')


CABLE = cable_xml()
"""The arm driven through a cable on the 0.1 m pulley: exercise 3.3's, and 3.4's published one."""
CABLE_ANGLE = 0.2      # rad, where exercise 3.3's arm should settle (published)
# the variants: -0.3 to 0.3 rad but not 0 (where every mistake below is the right answer), so that
# gear·q, the largest mistake, stays a ctrl the grader simulates and explains (|ctrl| ≤ 1)
ANGLE_PARAM = Param(CABLE_ANGLE, -0.3, 0.3, 0.025, unit="rad", label="where the arm should settle")
# 3.4's pulley: 4-20 cm, a moment arm gear·r of 0.12-0.6 m; never 1/3 m, where kp·(dl/dq) would be
# kp·(dl/dq)², nor 1 m
PULLEY_PARAM = Param(PULLEY, 0.04, 0.2, 0.01, unit="cm", scale=0.01, label="the pulley's radius")


# |ctrl| ≤ 1: the target is a servo length, 0.3 m per rad of shoulder angle, and the shoulder stops at
# ±1.2 rad (±0.36 of length); the answer is 0.3·q (0.06 for 0.2 rad) and the typical mistakes (q, 3q,
# 0.1q, q/3: at most 0.9 for |q| ≤ 0.3 rad) lie inside
CABLE_TARGET = number(-1, 1, why="the servo's length changes by 0.3 per rad of shoulder angle, and the "
                                 "shoulder stops at ±1.2 rad")


@lru_cache(maxsize=64)
def _cable_settles(ctrl: float) -> float:
    """The shoulder angle (rad) after 3 s of the cable servo at target ``ctrl``, gravity off
    (cached: the fuzz tests re-grade the same values)."""
    model, data = load(CABLE)
    model.opt.gravity[:] = 0
    with mujoco_warnings():
        run = record(model, data, {"q": data.joint("shoulder").qpos}, duration=3.0, ctrl=[ctrl])
    return float(run["q"][-1])


@checker("3.3", "Command a servo through a cable", points=1, answers={"ctrl_target": CABLE_TARGET},
         params={"angle": ANGLE_PARAM}, valid=lambda v: abs(v["angle"]) > 1e-9)
def _cable_target(ex: Exercise) -> None:
    ctrl = ex.value("ctrl_target")
    angle = ex.param("angle")
    final = _cable_settles(float(ctrl))
    hint = "ctrl is compared with the actuator length: what is l here? (data.actuator_length)"
    mistakes = {
        angle: "that ctrl is a joint angle, but the servo compares ctrl with its actuator length",
        CABLE_GEAR * angle: "that is gear·q, §5's rule for a geared joint: here the pulley is part of "
                            "the transmission too",
        PULLEY * angle: "that is the cable's length alone: the gear multiplies it",
        angle / CABLE_GEAR: "you divided by the gear instead of multiplying"}
    for wrong, why in mistakes.items():
        if np.isclose(ctrl, wrong, rtol=1e-3, atol=1e-12):
            hint = why
    ex.require(abs(final - angle) < 1e-3, f"the arm settles at {fmt(angle, unit='rad')} (±1 mrad)",
               failure=f"it settles at {fmt(final, unit='rad')}", hint=hint)


def joint_spring(model: mujoco.MjModel, data: mujoco.MjData, dof: int = 0, step: float = 0.01
                 ) -> tuple[float, float]:
    """The actuators' joint-space stiffness −∂τ/∂q (N·m/rad) and damping −∂τ/∂q̇ (N·m·s/rad)
    at dof ``dof``, from central differences of ``qfrc_actuator`` about rest at q = 0."""
    def torque(q: float, v: float) -> float:
        data.qpos[dof], data.qvel[dof] = q, v
        mujoco.mj_forward(model, data)
        return float(data.qfrc_actuator[dof])

    stiffness = -(torque(step, 0) - torque(-step, 0)) / (2 * step)
    damping = -(torque(0, step) - torque(0, -step)) / (2 * step)
    return stiffness, damping


@lru_cache(maxsize=16)
def _cable_joint_spring(pulley: float = PULLEY) -> tuple[float, float]:
    """:func:`joint_spring` of :func:`cable_xml` (the same for every answer)."""
    return joint_spring(*load(cable_xml(pulley)))


@checker("3.4", "Stiffness and damping through a cable", points=2,
         answers={"joint_stiffness": NUMBER, "joint_damping": NUMBER}, params={"pulley": PULLEY_PARAM})
def _cable_spring(ex: Exercise) -> None:
    pulley = ex.param("pulley")
    stiffness, damping = _cable_joint_spring(pulley)
    arm = CABLE_GEAR * pulley                       # the moment arm dl/dq
    kp, kv = CABLE_KP, CABLE_KV
    ex.close("joint_stiffness", stiffness, rtol=1e-6, unit="N·m/rad",
             hint="the length and the force both go through the moment arm dl/dq",
             mistakes={kp: "that is kp in actuator space; the joint sees it through the moment arm twice",
                       kp * CABLE_GEAR**2: "that is kp·gear², §5's rule for a geared joint: here the "
                                           "moment arm is not the gear alone",
                       kp * arm: "one factor of the moment arm is missing: the length is l = (dl/dq)·q "
                                 "and the torque (dl/dq)·p",
                       kp * pulley**2: "the gear is part of the moment arm too"})
    ex.close("joint_damping", damping, rtol=1e-6, unit="N·m·s/rad",
             hint="the velocity goes through the same moment arm: l̇ = (dl/dq)·q̇",
             mistakes={kv: "that is kv in actuator space",
                       kv * CABLE_GEAR**2: "kv·gear²: the moment arm is not the gear alone",
                       kv * arm: "one factor of the moment arm is missing"})


# --- 3.5 · design a servo ----------------------------------------------------------------------

STEP_TARGET = 0.6     # rad (published)
SETTLE_BAND = 0.01    # rad: the step settles within this of its target (published)
PUBLISHED_KP = 1000.0  # N·m/rad: the published solution's stiffness (its sag is m·g·L·cos(0.6)/kp = 4 mrad)


@lru_cache(maxsize=1)
def _arm_gravity() -> float:
    """m·g·L of the arm (N·m): the gravity torque it feels held level, at q = 0."""
    model, data = load(ARM)
    mujoco.mj_forward(model, data)
    return float(data.qfrc_bias[0])


# the variants: a step to 0.3-1 rad (the shoulder stops at 1.2, and 2 % of overshoot stays below),
# settled within 1-3.5 mrad: tighter than the published 10 mrad, so that the stiffness has to be
# chosen for the sag m·g·L·cos(target)/kp.  valid: the published kp's sag exceeds the band by 20 %
# at least, so that the published design never settles; a band of 1 mrad at 0.3 rad asks for kp >
# 4.7e3 (ω·h ≈ 0.3 at twice that), far inside the stability limit 4·I/h² ≈ 2.5e5
TARGET_PARAM = Param(STEP_TARGET, 0.3, 1.0, 0.1, unit="rad", label="the step's target angle")
BAND_PARAM = Param(SETTLE_BAND, 0.001, 0.01, 0.0005, gap=0.0065, unit="mrad", scale=1e-3,
                   label="how close to the target it must settle, over the last 0.2 s of 1.5 s")


def _design_valid(v: dict[str, float]) -> bool:
    return _arm_gravity() * math.cos(v["target"]) / PUBLISHED_KP > 1.2 * v["band"]


# 0 < kp ≤ 1e7 N·m/rad: a servo pulls towards its target, and the explicit spring of the arm
# (I = 0.25 kg·m², h = 2 ms) is stable only below 4·I/h² ≈ 2.5e5, so 1e7 leaves room to be told
# that a design diverges; 0 ≤ kv ≤ 1e4 N·m·s/rad: damping does not feed energy in, and beyond
# kv·h/I = 2 (kv ≈ 250) explicit damping diverges too.  The published answer is near kp = 1000,
# kv = 28; the tightest variant (1 mrad at 0.3 rad) asks for kp ≈ 5e3-1e4 and kv ≈ 60-90.
SERVO_KP = number(0, 1e7, low_open=True, unit=" N·m/rad",
                  why="a position servo pulls towards its target (kp > 0), and at h = 2 ms this arm "
                      "diverges beyond kp ≈ 2.5e5")
SERVO_KV = number(0, 1e4, unit=" N·m·s/rad",
                  why="damping does not feed energy in (kv ≥ 0), and at h = 2 ms this arm diverges "
                      "beyond kv ≈ 250")


@lru_cache(maxsize=64)
def _step_response(kp: float, kv: float, target: float = STEP_TARGET) -> tuple[bool, np.ndarray]:
    """The arm's 0 → ``target`` rad step with a position servo (kp, kv) for 1.5 s at its 2 ms
    step: whether it stayed stable, and the shoulder angle (rad) after every step (cached)."""
    # the gains are set on the compiled model, as <position kp kv> sets them (gain kp, bias
    # (0, −kp, −kv)): any float, however small, is used as given (MJCF text cannot hold 1e-308)
    model, data = load(arm_xml('<position name="servo" joint="shoulder" kp="1"/>'))
    model.actuator_gainprm[0, 0] = kp
    model.actuator_biasprm[0, :3] = 0.0, -kp, -kv
    with mujoco_warnings() as caught:      # an unstable run warns, and MuJoCo then resets the state
        q = record(model, data, {"q": data.joint("shoulder").qpos}, duration=1.5, ctrl=[target])["q"]
    q.setflags(write=False)
    return bool(not caught and np.all(np.isfinite(q)) and np.abs(q).max() < 10), q


@checker("3.5", "A fast, accurate, well-damped servo", points=3,
         answers={"kp_design": SERVO_KP, "kv_design": SERVO_KV},
         params={"target": TARGET_PARAM, "band": BAND_PARAM}, valid=_design_valid)
def _design(ex: Exercise) -> None:
    kp, kv = float(ex.value("kp_design")), float(ex.value("kv_design"))
    target, band = ex.param("target"), ex.param("band")
    h = load(ARM)[0].opt.timestep
    stable, q = _step_response(kp, kv, target)
    ex.precondition(stable, "the servo is stable at h = 2 ms", failure="the simulation blew up",
                    hint="an explicit spring needs kp·h²/I < 4, and the damping kv·h/I must stay small too")
    last = q[-round(0.2 / h):]                      # the last 0.2 s: settled, not passing by
    settled = bool(np.abs(last - target).max() <= band)
    ex.require(settled, f"it stays within {BAND_PARAM.show(band)} of {fmt(target, unit='rad')} over the "
                        "last 0.2 s",
               failure=f"it ranges over {fmt(last.min())}–{fmt(last.max())} rad",
               hint=f"the sag is about m·g·L·cos({fmt(target)})/kp, and an underdamped servo may still be "
                    "swinging")
    # "at most 2 % overshoot" alone is met by a servo too weak to get there: it counts only for a
    # servo that settles at the target
    peak = float(q.max())
    ex.require(settled and peak <= target * 1.02, "it overshoots by at most 2 %",
               failure=(f"it peaks at {fmt(peak, unit='rad')}" if peak > target * 1.02 else
                        "it does not overshoot, but it does not settle at the target either"),
               hint="raise the damping ratio ζ = kv/(2√(kp·I))")
    at = q[round(0.3 / h)]
    ex.require(abs(at - target) <= 0.02, "it is within 0.02 rad of the target by 0.3 s",
               failure=f"at 0.3 s it is at {fmt(at, unit='rad')}",
               hint="a critically damped servo needs about 6/ω to settle: raise kp (ω = √(kp/I))")
