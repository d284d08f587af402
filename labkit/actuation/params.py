"""What an actuator's compiled parameters mean, read with MuJoCo's own enums.

The model stores types as integers of MuJoCo's enums (``actuator_dyntype`` holds an
``mujoco.mjtDyn``, ``actuator_gaintype`` an ``mjtGain``, ``actuator_biastype`` an ``mjtBias``,
``actuator_trntype`` an ``mjtTrn``, ``actuator_ctrlspec`` ``mjtCtrlInput`` bits or an
``mjtCtrlChart``, ``jnt_type`` an ``mjtJoint``).  Every comparison and every name here goes
through those enums, so nothing restates MuJoCo's numbering.  Model values are converted
with ``int()`` before they meet an enum: a numpy integer does not compare equal to one.

This module reads: which entries of ``gainprm``/``biasprm``/``dynprm`` a type uses, which
shortcut the parameters read as, the activation slots and the units of every block, and
the names of an actuator's inputs, transmission and DOFs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import gl
from ..models import element_id

if TYPE_CHECKING:
    import mujoco

LENGTH = "m or rad (×gear)"
VELOCITY = "m/s or rad/s (×gear)"
FORCE = "N or N·m (transmission space)"
QFRC = "generalized force (N or N·m per DOF)"
_SETPOINT = (LENGTH, VELOCITY)
_INTEGRAL = ("m·s or rad·s (×gear)", LENGTH)


def mj() -> Any:
    """The ``mujoco`` module, imported only once the GL backend is chosen.

    Example: ``mj().mjtDyn.mjDYN_FILTER``.
    """
    gl.choose()  # MuJoCo must not be imported before the GL backend is chosen
    import mujoco

    return mujoco


def type_name(enum: Any, value: int) -> str:
    """The name of ``value`` in MuJoCo's ``enum``, without its prefix, in lower case;
    ``str(value)`` where the enum has no such value.

    Example: ``type_name(mujoco.mjtDyn, 3)`` → ``"filterexact"``.
    """
    try:
        member = enum(int(value))
    except ValueError:
        return str(value)
    return str(member.name).split("_", 1)[1].lower()


@functools.cache
def _prm_tables() -> dict[str, dict[int, tuple[str, ...]]]:
    mujoco = mj()
    gain, bias, dyn = mujoco.mjtGain, mujoco.mjtBias, mujoco.mjtDyn
    affine = ("const", "length coef", "velocity coef")
    muscle = ("range0", "range1", "force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax")
    tables = {
        "gain": {gain.mjGAIN_FIXED: ("gain",), gain.mjGAIN_AFFINE: affine, gain.mjGAIN_MUSCLE: muscle,
                 gain.mjGAIN_DCMOTOR: ("R", "K", "tempcoef", "reftemp", "kp", "ki", "kd", "Vmax"),
                 gain.mjGAIN_SO3: ("kp",), gain.mjGAIN_PID: ("ki",)},
        "bias": {bias.mjBIAS_NONE: (), bias.mjBIAS_AFFINE: affine, bias.mjBIAS_MUSCLE: muscle,
                 bias.mjBIAS_DCMOTOR: ("cogging amplitude", "cogging poles", "cogging phase",
                                       "coulomb", "static", "stribeck velocity"),
                 bias.mjBIAS_SO3: ("const", "-kp (unused)", "-kv")},
        "dyn": {dyn.mjDYN_NONE: (), dyn.mjDYN_INTEGRATOR: (), dyn.mjDYN_FILTER: ("timeconst",),
                dyn.mjDYN_FILTEREXACT: ("timeconst",),
                dyn.mjDYN_MUSCLE: ("tau act", "tau deact", "tausmooth"),
                dyn.mjDYN_DCMOTOR: ("electrical timeconst", "di/dt max", "thermal resistance",
                                    "thermal capacitance", "ambient", "lugre stiffness", "lugre damping",
                                    "slewmax", "imax"),
                dyn.mjDYN_PID: ("imax", "slewmax")},
    }
    return {kind: {int(k): names for k, names in table.items()} for kind, table in tables.items()}


def prm_names(kind: str, value: int) -> tuple[str, ...] | None:
    """Names of the entries of ``actuator_<kind>prm`` (kind ``"gain"``, ``"bias"`` or
    ``"dyn"``) that type ``value`` reads, in order (the rest are unused zeros); None for a
    user-defined type.

    Example: ``prm_names("dyn", mujoco.mjtDyn.mjDYN_FILTER)`` → ``("timeconst",)``.
    """
    return _prm_tables()[kind].get(int(value))


def joint_dofs(model: mujoco.MjModel, j: int) -> int:
    """Number of DOFs of joint ``j``: 6 free, 3 ball, 1 slide or hinge.

    Example: ``joint_dofs(model, model.joint("neck").id)`` → ``3``.
    """
    kind = mj().mjtJoint
    return {int(kind.mjJNT_FREE): 6, int(kind.mjJNT_BALL): 3, int(kind.mjJNT_SLIDE): 1,
            int(kind.mjJNT_HINGE): 1}[int(model.jnt_type[j])]


def name(model: mujoco.MjModel, obj: Any, i: int) -> str:
    """The name of element ``i`` of type ``obj`` (an ``mjtObj``); ``"#i"`` when unnamed, ``""`` for -1.

    Example: ``name(model, mujoco.mjtObj.mjOBJ_JOINT, 0)`` → ``"hinge"``.
    """
    if i < 0:
        return ""
    return mj().mj_id2name(model, obj, i) or f"#{i}"


def actuator_id(model: mujoco.MjModel, actuator: str | int) -> int:
    """The id of ``actuator`` (a name or an id), with errors that list the model's actuators.

    Example: ``actuator_id(model, "elbow")`` → ``1``.
    """
    __tracebackhide__ = True
    obj = mj().mjtObj.mjOBJ_ACTUATOR
    if model.nactuator == 0:
        raise KeyError("this model has no actuators: add an <actuator> section to the MJCF")
    if isinstance(actuator, bool) or not isinstance(actuator, str | int | np.integer):
        raise TypeError(f"actuator must be a name or an id, got {actuator!r}")
    if isinstance(actuator, str):
        return int(element_id(model, "actuator", actuator))
    if not 0 <= int(actuator) < model.nactuator:
        names = [name(model, obj, i) for i in range(model.nactuator)]
        raise IndexError(f"actuator id {int(actuator)} is out of range: the model has "
                         f"{model.nactuator} actuators (0..{model.nactuator - 1}): {names}")
    return int(actuator)


def input_names(model: mujoco.MjModel, i: int) -> list[str]:
    """Names of actuator ``i``'s inputs in ``data.ctrl`` order (``["pos", "vel"]``; ``["ctrl"]`` for one).

    Example: ``input_names(model, model.actuator("pid").id)`` → ``["pos", "vel"]``.
    """
    mujoco = mj()
    names = []
    for k in range(int(model.actuator_ctrlnum[i])):
        text = mujoco.mj_actuatorInputName(model, i, k)
        names.append(text if text else ("ctrl" if model.actuator_ctrlnum[i] == 1 else f"ctrl{k}"))
    return names


def spec_text(model: mujoco.MjModel, i: int) -> str:
    """``actuator_ctrlspec`` in words: the chart of an orientation, else the input bits.

    Example: ``spec_text(model, i)`` → ``"vel ff"`` for a pid with ``input="vel ff"``.
    """
    mujoco = mj()
    spec = int(model.actuator_ctrlspec[i])
    if int(model.actuator_gaintype[i]) == mujoco.mjtGain.mjGAIN_SO3:
        return type_name(mujoco.mjtCtrlChart, spec)
    if spec == 0:
        return "type default"
    return " ".join(type_name(mujoco.mjtCtrlInput, bit) for bit in mujoco.mjtCtrlInput.__members__.values()
                    if spec & int(bit))


def family(model: mujoco.MjModel, i: int) -> str:
    """What the compiled parameters read as (the model does not record the MJCF element).

    Example: ``family(model, i)`` → ``"position"`` for ``<position kp="10"/>``.
    """
    mujoco = mj()
    gains, biases, dyns = mujoco.mjtGain, mujoco.mjtBias, mujoco.mjtDyn
    dyn, gain, bias = (int(model.actuator_dyntype[i]), int(model.actuator_gaintype[i]),
                       int(model.actuator_biastype[i]))
    g, b, spec = model.actuator_gainprm[i], model.actuator_biasprm[i], int(model.actuator_ctrlspec[i])
    if gain == gains.mjGAIN_SO3:
        return "orientation" if dyn == dyns.mjDYN_NONE else "orientation (integrated setpoint)"
    if gain == gains.mjGAIN_PID:
        return "pid"
    if gain == gains.mjGAIN_DCMOTOR:
        return "dcmotor"
    if dyn == dyns.mjDYN_MUSCLE or gain == gains.mjGAIN_MUSCLE or bias == biases.mjBIAS_MUSCLE:
        return "muscle"
    # MuJoCo 3.15 has no pressure input (labkit drift); there a cylinder reads as "general"
    pressure = getattr(mujoco.mjtCtrlInput, "mjINPUT_PRESSURE", None)
    if pressure is not None and spec == pressure:
        return "cylinder"
    if gain == gains.mjGAIN_FIXED and bias == biases.mjBIAS_AFFINE and b[0] == 0:
        if g[0] == -b[1] and g[0] != 0:
            if dyn == dyns.mjDYN_NONE:
                return "position"
            if dyn == dyns.mjDYN_FILTEREXACT:
                return "position (filtered setpoint)"
            if dyn == dyns.mjDYN_INTEGRATOR:
                return "intvelocity"
        if b[1] == 0 and g[0] == -b[2] and dyn == dyns.mjDYN_NONE:
            return "velocity"
    if (gain == gains.mjGAIN_AFFINE and bias == biases.mjBIAS_NONE and dyn == dyns.mjDYN_NONE
            and g[0] == 0 and g[1] == 0 and g[2] <= 0):
        return "damper"
    if gain == gains.mjGAIN_FIXED and bias == biases.mjBIAS_NONE and dyn == dyns.mjDYN_NONE:
        if int(model.actuator_trntype[i]) == mujoco.mjtTrn.mjTRN_BODY:
            return "adhesion"
        return "motor" if g[0] == 1 else "motor (gain ≠ 1)"
    return "general"


def wrap_period(model: mujoco.MjModel, i: int) -> float:
    """Period of a rotational servo's setpoint (2π·|gear|, rad), 0 when the setpoint does not wrap.

    Servo-shaped actuators (fixed gain, affine bias with kp = gain, no dynamics or an
    integrator) and pid actuators on a ball joint or a purely rotational site+refsite
    interpret their setpoint on the circle (``mj_fwdActuation``; see docs ``gear``).
    Example: ``wrap_period(model, i)`` → ``6.283`` for ``<position joint="neck" gear="0 0 1"/>``.
    """
    mujoco = mj()
    gains, dyns, trns = mujoco.mjtGain, mujoco.mjtDyn, mujoco.mjtTrn
    dyn, gain = int(model.actuator_dyntype[i]), int(model.actuator_gaintype[i])
    servo = (gain == gains.mjGAIN_FIXED and int(model.actuator_biastype[i]) == mujoco.mjtBias.mjBIAS_AFFINE
             and model.actuator_gainprm[i, 0] == -model.actuator_biasprm[i, 1]
             and dyn in (dyns.mjDYN_NONE, dyns.mjDYN_INTEGRATOR))
    if not servo and gain != gains.mjGAIN_PID:
        return 0.0
    gear = model.actuator_gear[model.actuator_outadr[i]]
    trn = int(model.actuator_trntype[i])
    if trn == trns.mjTRN_SITE and model.actuator_trnid[i, 1] >= 0 and not np.any(gear[:3]):
        return 2 * math.pi * float(np.linalg.norm(gear[3:]))
    if (trn in (trns.mjTRN_JOINT, trns.mjTRN_JOINTINPARENT)
            and int(model.jnt_type[model.actuator_trnid[i, 0]]) == mujoco.mjtJoint.mjJNT_BALL):
        return 2 * math.pi * float(np.linalg.norm(gear[:3]))
    return 0.0


def dcmotor_slots(dynprm: np.ndarray, gainprm: np.ndarray) -> dict[str, int]:
    """Activation slots of a dcmotor, in the engine's order: slew, integral, temperature, bristle, current.

    dynprm, gainprm: the actuator's rows (10,).  Example: ``dcmotor_slots(model.actuator_dynprm[i],
    model.actuator_gainprm[i])`` → ``{"current": 0}`` for a dcmotor with only an inductance.
    """
    present = (("slew", dynprm[7] > 0), ("integral", gainprm[5] > 0), ("temperature", dynprm[2] > 0),
               ("bristle", dynprm[5] > 0), ("current", dynprm[0] > 0))
    slots: dict[str, int] = {}
    for slot, on in present:
        if on:
            slots[slot] = len(slots)
    return slots


def unpack(u: np.ndarray, spec: int) -> tuple[float, float, float, float]:
    """Present inputs of a pid/dcmotor block in canonical order (pos, vel, ff, voltage); absent: 0.

    u: the actuator's slice of the inputs (ctrlnum,).  Example: ``unpack(np.array([0.5, 0.2]),
    mjINPUT_VEL | mjINPUT_FF)`` → ``(0.0, 0.5, 0.2, 0.0)``.
    """
    bits = mj().mjtCtrlInput
    values, k = [], 0
    for bit in (bits.mjINPUT_POS, bits.mjINPUT_VEL, bits.mjINPUT_FF, bits.mjINPUT_VOLTAGE):
        if spec & int(bit):
            values.append(float(u[k]))
            k += 1
        else:
            values.append(0.0)
    return values[0], values[1], values[2], values[3]


def input_units(model: mujoco.MjModel, i: int, kind: str) -> list[str]:
    """The unit of each input of actuator ``i`` (``kind``: its :func:`family`).

    Example: ``input_units(model, i, "pid")`` → ``["m or rad (×gear)", "m/s or rad/s (×gear)"]``.
    """
    units = {"pos": LENGTH, "vel": VELOCITY, "ff": FORCE, "voltage": "V", "pressure": "pressure",
             "rx": "rad (exp-map)", "ry": "rad (exp-map)", "rz": "rad (exp-map)",
             "qw": "quaternion (w x y z)", "qx": "quaternion (w x y z)", "qy": "quaternion (w x y z)",
             "qz": "quaternion (w x y z)"}
    default = {"muscle": "excitation (0–1)", "adhesion": "ctrl units (×gain = N)"}.get(kind, "ctrl units")
    return [units.get(label, default) for label in input_names(model, i)]


def act_slots(model: mujoco.MjModel, i: int, kind: str) -> list[tuple[str, str, str]]:
    """(label, unit, unit of its rate) of each activation slot of actuator ``i``
    (``kind``: its :func:`family`).

    Example: ``act_slots(model, i, "pid")`` → ``[("integral", "m·s or rad·s (×gear)", "m or rad (×gear)")]``.
    """
    dyns = mj().mjtDyn
    dyn, actnum = int(model.actuator_dyntype[i]), int(model.actuator_actnum[i])
    if actnum == 0:
        return []
    if dyn == dyns.mjDYN_PID:
        slots = []
        if model.actuator_dynprm[i, 1] > 0:
            slots.append(("slew", *_SETPOINT))  # the rate-limited position setpoint
        if model.actuator_gainprm[i, 0] > 0:
            slots.append(("integral", *_INTEGRAL))  # the integrated position error
        return slots
    if dyn == dyns.mjDYN_DCMOTOR:
        first = (input_units(model, i, kind) or ["ctrl units"])[0]
        units = {"slew": ("slew", first, f"({first})/s"), "integral": ("integral", *_INTEGRAL),
                 "temperature": ("temperature", "K above ambient", "K/s"),
                 "bristle": ("bristle", "rad or m", "rad/s or m/s"), "current": ("current", "A", "A/s")}
        present = dcmotor_slots(model.actuator_dynprm[i], model.actuator_gainprm[i])
        return [units[slot] for slot in sorted(present, key=present.__getitem__)]
    if dyn == dyns.mjDYN_MUSCLE:
        return [("activation", "0–1", "1/s")] * actnum
    if kind.startswith("orientation"):
        return [(axis, "rad (exp-map)", "rad/s") for axis in ("rx", "ry", "rz")][:actnum]
    if kind == "intvelocity" or kind.startswith("position"):
        return [("setpoint", *_SETPOINT)] * actnum
    if dyn == dyns.mjDYN_INTEGRATOR:
        return [("integral", "ctrl units·s", "ctrl units")] * actnum
    if dyn in (dyns.mjDYN_FILTER, dyns.mjDYN_FILTEREXACT):
        return [("filtered", "ctrl units", "ctrl units/s")] * actnum
    return [("state", "user units", "user units/s")] * actnum


def joined(units: Sequence[str], labels: Sequence[str]) -> str:
    """One unit for a block: the common one, else ``"label: unit; ..."``; ``""`` for none.

    Example: ``joined(["V", "A"], ["voltage", "current"])`` → ``"voltage: V; current: A"``.
    """
    if not units:
        return ""
    if len(set(units)) == 1:
        return units[0]
    return "; ".join(f"{label}: {unit}" for label, unit in zip(labels, units, strict=True))


def dof_names(model: mujoco.MjModel, dofs: np.ndarray) -> tuple[str, ...]:
    """``"joint (dof k)"`` for each DOF in ``dofs`` (d,), with ``[axis]`` for multi-DOF joints.

    Example: ``dof_names(model, np.array([0]))`` → ``("hinge (dof 0)",)``.
    """
    obj = mj().mjtObj.mjOBJ_JOINT
    names = []
    for dof in dofs:
        j = int(model.dof_jntid[dof])
        joint = name(model, obj, j)
        names.append(f"{joint}[{dof - model.jnt_dofadr[j]}]" if joint_dofs(model, j) > 1 else joint)
    return tuple(f"{n} (dof {int(dof)})" for n, dof in zip(names, dofs, strict=True))


def transmission_text(model: mujoco.MjModel, i: int) -> str:
    """Actuator ``i``'s transmission and its target(s) in words.

    Example: ``transmission_text(model, i)`` → ``"joint → hinge"``.
    """
    mujoco = mj()
    trns, objs = mujoco.mjtTrn, mujoco.mjtObj
    trn = int(model.actuator_trntype[i])
    a, b = int(model.actuator_trnid[i, 0]), int(model.actuator_trnid[i, 1])
    if trn in (trns.mjTRN_JOINT, trns.mjTRN_JOINTINPARENT):
        return f"{type_name(trns, trn)} → {name(model, objs.mjOBJ_JOINT, a)}"
    if trn == trns.mjTRN_SO3:
        if b < 0:
            return f"so3 → ball joint {name(model, objs.mjOBJ_JOINT, a)}"
        return (f"so3 → site {name(model, objs.mjOBJ_SITE, a)} relative to refsite "
                f"{name(model, objs.mjOBJ_SITE, b)}")
    if trn == trns.mjTRN_TENDON:
        return f"tendon → {name(model, objs.mjOBJ_TENDON, a)}"
    if trn == trns.mjTRN_SITE:
        ref = f" relative to refsite {name(model, objs.mjOBJ_SITE, b)}" if b >= 0 else ""
        return f"site → {name(model, objs.mjOBJ_SITE, a)}{ref}"
    if trn == trns.mjTRN_SLIDERCRANK:
        return (f"slidercrank → cranksite {name(model, objs.mjOBJ_SITE, a)}, slidersite "
                f"{name(model, objs.mjOBJ_SITE, b)}")
    if trn == trns.mjTRN_BODY:
        return f"body (adhesion) → {name(model, objs.mjOBJ_BODY, a)}"
    return f"transmission type {trn}"
