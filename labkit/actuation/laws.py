"""MuJoCo's actuator laws, evaluated for one actuator at a time (``mj_fwdActuation``).

The activation rate of a dcmotor's states, the force law of every gain and bias type
(with the so3, pid and dcmotor laws), a dcmotor's mechanical terms, and the scalar laws
they share (slew limiting, setpoints on the circle, C rounding).  Each writes into the
:class:`~labkit.actuation.chain.Chain` that :func:`~labkit.actuation.chain.recompute` is
filling in, which compares the outcome with MuJoCo.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..display import fmt
from .params import FORCE, dcmotor_slots, mj, unpack, wrap_period
from .rounding import agree

if TYPE_CHECKING:
    import mujoco

    from .chain import Chain


def c_round(x: float) -> float:
    """C's round(): halves away from zero (Python's round() rounds halves to even).

    Example: ``c_round(-2.5)`` → ``-3.0``.
    """
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _nearest(u: float, length: float, period: float) -> float:
    """The representative of setpoint ``u`` (mod ``period``) nearest to ``length``."""
    return u - period * c_round((u - length) / period)


def slew(u: float, previous: float, rate: float, dt: float, period: float) -> tuple[float, float]:
    """Rate-limit setpoint ``u`` to ``rate``·``dt`` from ``previous`` (on the circle when
    ``period`` > 0); returns (setpoint, act_dot), in the setpoint's units and per second.

    Example: ``slew(0.5, 0.0, 1.0, 0.002, 0.0)`` → ``(0.002, 1.0)``.
    """
    if period > 0:
        u = _nearest(u, previous, period)
    limited = min(max(u, previous - rate * dt), previous + rate * dt)
    return limited, (limited - previous) / dt


def _stribeck(v: float, coulomb: float, static: float, vs: float) -> float:
    """LuGre Stribeck curve g(v) = F_C + (F_S - F_C)·exp(-(v/v_S)²)."""
    ratio = v / max(mj().mjMINVAL, vs)
    return coulomb + (static - coulomb) * math.exp(-ratio * ratio)


def _dc_voltage(u: np.ndarray, spec: int, length: float, velocity: float, integral: float,
                gainprm: np.ndarray) -> float:
    """Terminal voltage of a dcmotor: on-board torque PID driven as current control, plus raw voltage."""
    bits = mj().mjtCtrlInput
    pos, vel, ff, raw = unpack(u, spec)
    voltage = 0.0
    if spec & int(bits.mjINPUT_POS | bits.mjINPUT_VEL | bits.mjINPUT_FF):
        torque = gainprm[4] * (pos - length) + gainprm[6] * (vel - velocity) + gainprm[5] * integral + ff
        voltage = gainprm[0] / gainprm[1] * torque + gainprm[1] * velocity
        if gainprm[7] > 0:
            voltage = min(max(voltage, -gainprm[7]), gainprm[7])
    return voltage + raw


def _expmap_quat(vec: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of the rotation vector ``vec`` (rad)."""
    angle = float(np.linalg.norm(vec))
    if angle < mj().mjMINVAL:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * vec / angle])


def _next_act(model: mujoco.MjModel, d: mujoco.MjData, i: int, j: int, act_dot: float) -> float:
    """Activation ``j`` after one step, for force laws with ``actearly`` (``mj_nextActivation``).

    Exact integration for filterexact and for a dcmotor's current; Euler otherwise; clamped
    to actrange except for dcmotor.  (The force laws read only these slots early: a dcmotor's
    bristle and integral states enter the force with their current values.)
    """
    mujoco = mj()
    act, h = float(d.act[j]), float(model.opt.timestep)
    dyn = int(model.actuator_dyntype[i])
    dynprm = model.actuator_dynprm[i]
    dcmotor = dyn == mujoco.mjtDyn.mjDYN_DCMOTOR
    slots = dcmotor_slots(dynprm, model.actuator_gainprm[i]) if dcmotor else {}
    current = j - int(model.actuator_actadr[i]) == slots.get("current", -1)
    if dyn == mujoco.mjtDyn.mjDYN_FILTEREXACT or current:
        tau = max(mujoco.mjMINVAL, float(dynprm[0]))
        act += act_dot * tau * (1 - math.exp(-h / tau))
    else:
        act += act_dot * h
    if not dcmotor and model.actuator_actlimited[i]:
        low, high = model.actuator_actrange[i]
        act = min(max(act, low), high)
    return act


def dcmotor_act_dot(model: mujoco.MjModel, d: mujoco.MjData, i: int, u: np.ndarray, chain: Chain) -> None:
    """Write ``chain.act_dot`` of a dcmotor's optional states (slew, integral, temperature,
    bristle, current); ``u`` (nu,) are the inputs, slew-limited in place.

    Example: ``dcmotor_act_dot(model, data, i, chain.ctrl.copy(), chain)``.
    """
    minval = mj().mjMINVAL
    dynprm, gainprm, biasprm = model.actuator_dynprm[i], model.actuator_gainprm[i], model.actuator_biasprm[i]
    slots = dcmotor_slots(dynprm, gainprm)
    if len(slots) != model.actuator_actnum[i]:
        chain.unsupported[i] = f"its {model.actuator_actnum[i]} states do not match the dcmotor parameters"
        return
    adr0, uadr = int(model.actuator_actadr[i]), int(model.actuator_ctrladr[i])
    oadr = int(model.actuator_outadr[i])
    num, spec = int(model.actuator_ctrlnum[i]), int(model.actuator_ctrlspec[i])
    length, velocity = float(d.actuator_length[oadr]), float(d.actuator_velocity[oadr])
    a, h = chain.act_dot, float(model.opt.timestep)
    R, K, te = float(gainprm[0]), float(gainprm[1]), float(dynprm[0])
    if "slew" in slots:
        j = adr0 + slots["slew"]
        u[uadr], a[j] = slew(float(u[uadr]), float(d.act[j]), float(dynprm[7]), h, 0.0)
    integral = 0.0
    if "integral" in slots:
        j = adr0 + slots["integral"]
        integral = float(d.act[j])
        err = float(u[uadr]) - length
        if dynprm[8] > 0 and integral >= dynprm[8]:
            err = min(err, 0.0)
        elif dynprm[8] > 0 and integral <= -dynprm[8]:
            err = max(err, 0.0)
        a[j] = err
    voltage = _dc_voltage(u[uadr:uadr + num], spec, length, velocity, integral, gainprm)
    if "temperature" in slots:
        j = adr0 + slots["temperature"]
        T = float(d.act[j])
        R *= 1 + gainprm[2] * (T + dynprm[4] - gainprm[3])
        current = float(d.act[adr0 + slots["current"]]) if te > 0 else (voltage - K * velocity) / R
        a[j] = (R * current * current - T / dynprm[2]) / dynprm[3]
    if "bristle" in slots:
        j = adr0 + slots["bristle"]
        g = _stribeck(velocity, biasprm[3], biasprm[4], biasprm[5])
        a[j] = -dynprm[5] * abs(velocity) / max(minval, g) * d.act[j] + velocity
    if "current" in slots:
        j = adr0 + slots["current"]
        i_dot = (voltage / R - K / R * velocity - d.act[j]) / te
        if dynprm[1] > 0:
            i_dot = min(max(i_dot, -dynprm[1]), dynprm[1])
        a[j] = i_dot


def force_law(model: mujoco.MjModel, d: mujoco.MjData, i: int, u: np.ndarray, chain: Chain) -> None:
    """Write ``chain.force_raw`` of actuator ``i``: gain·(input or act) + bias, or the so3 /
    pid / dcmotor law; ``u`` (nu,) are the effective inputs.

    Example: ``force_law(model, data, i, chain.inputs, chain)``.
    """
    mujoco = mj()
    gains, biases, dyns = mujoco.mjtGain, mujoco.mjtBias, mujoco.mjtDyn
    uadr, num = int(model.actuator_ctrladr[i]), int(model.actuator_ctrlnum[i])
    oadr = int(model.actuator_outadr[i])
    adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
    gaintype, biastype, dyn = (int(model.actuator_gaintype[i]), int(model.actuator_biastype[i]),
                               int(model.actuator_dyntype[i]))
    gainprm, biasprm, dynprm = model.actuator_gainprm[i], model.actuator_biasprm[i], model.actuator_dynprm[i]
    length, velocity = float(d.actuator_length[oadr]), float(d.actuator_velocity[oadr])
    early = bool(model.actuator_actearly[i])

    def act(j: int) -> float:  # the activation the force law uses: current, or next with actearly
        return _next_act(model, d, i, j, float(chain.act_dot[j])) if early else float(d.act[j])

    if gaintype == gains.mjGAIN_SO3:
        if int(model.actuator_ctrlspec[i]) == mujoco.mjtCtrlChart.mjCHART_QUAT:
            target = np.array(u[uadr:uadr + 4], dtype=float)
            norm = float(np.linalg.norm(target))
            target = target / norm if norm >= mujoco.mjMINVAL else np.array([1.0, 0, 0, 0])
        else:
            vec = (u[uadr:uadr + 3] if dyn == dyns.mjDYN_NONE
                   else np.array([act(adr0 + k) for k in range(3)]))
            target = _expmap_quat(np.asarray(vec, dtype=float))
            chain.detail(i, "target quaternion", target, "w x y z")
        current = _expmap_quat(np.asarray(d.actuator_length[oadr:oadr + 3], dtype=float))
        error = np.zeros(3)
        mujoco.mju_subQuat(error, target, current)
        chain.detail(i, "orientation error", error, "rad (child frame)")
        chain.force_raw[oadr:oadr + 3] = (gainprm[0] * error + biasprm[0]
                                          + biasprm[2] * d.actuator_velocity[oadr:oadr + 3])
        return

    period = wrap_period(model, i)
    if gaintype == gains.mjGAIN_FIXED:
        gain = float(gainprm[0])
    elif gaintype == gains.mjGAIN_PID:
        gain = 0.0
    elif gaintype == gains.mjGAIN_AFFINE:
        gain = gainprm[0] + gainprm[1] * length + gainprm[2] * velocity
    elif gaintype == gains.mjGAIN_MUSCLE:
        gain = mujoco.mju_muscleGain(length, velocity, model.actuator_lengthrange[oadr],
                                     float(model.actuator_acc0[oadr]), gainprm[:9])
    elif gaintype == gains.mjGAIN_DCMOTOR:
        slots = dcmotor_slots(dynprm, gainprm)
        R, K = float(gainprm[0]), float(gainprm[1])
        if "temperature" in slots:
            T = float(d.act[adr0 + slots["temperature"]])
            R *= 1 + gainprm[2] * (T + dynprm[4] - gainprm[3])
            chain.detail(i, "resistance at temperature", R, "Ω")
        gain = K if dynprm[0] > 0 else K / max(mujoco.mjMINVAL, R)
        if int(model.actuator_ctrlspec[i]) != mujoco.mjtCtrlInput.mjINPUT_VOLTAGE and num > 0:
            integral = float(d.act[adr0 + slots["integral"]]) if "integral" in slots else 0.0
            u = u.copy()
            u[uadr] = _dc_voltage(u[uadr:uadr + num], int(model.actuator_ctrlspec[i]), length, velocity,
                                  integral, gainprm)
        chain.detail(i, "terminal voltage", float(u[uadr]) if num else 0.0, "V")
    else:
        chain.unsupported[i] = "its gain is user-defined (mjcb_act_gain)"
        return

    def wrapped(value: float) -> float:  # rotational servos read their setpoint on the circle
        near = _nearest(value, length, period)
        if not agree(near, value):
            chain.detail(i, f"setpoint {fmt(value)} read on the circle (period {fmt(period)}) as", near,
                         "rad (×gear)")
        return near

    if gaintype == gains.mjGAIN_PID:
        qref, vref, ff, _ = unpack(u[uadr:uadr + num], int(model.actuator_ctrlspec[i]))
        if period > 0:
            qref = wrapped(qref)
        force = -biasprm[1] * qref - biasprm[2] * vref + ff
        if actnum and gainprm[0] > 0:
            force += gainprm[0] * act(adr0 + actnum - 1)
    elif actnum == 0 or (gaintype == gains.mjGAIN_DCMOTOR and dynprm[0] <= 0):
        value = float(u[uadr]) if num else 0.0
        force = gain * (wrapped(value) if period > 0 else value)
    else:
        value = act(adr0 + actnum - 1)
        force = gain * (wrapped(value) if period > 0 else value)

    if biastype == biases.mjBIAS_NONE:
        bias = 0.0
    elif biastype == biases.mjBIAS_AFFINE:
        bias = biasprm[0] + biasprm[1] * length + biasprm[2] * velocity
    elif biastype == biases.mjBIAS_MUSCLE:
        bias = mujoco.mju_muscleBias(length, model.actuator_lengthrange[oadr],
                                     float(model.actuator_acc0[oadr]), biasprm[:9])
    elif biastype == biases.mjBIAS_DCMOTOR:
        bias = -gain * gainprm[1] * velocity if dynprm[0] <= 0 else 0.0
    else:
        chain.unsupported[i] = "its bias is user-defined (mjcb_act_bias)"
        return
    chain.force_raw[oadr] = force + bias


def dcmotor_mechanical(model: mujoco.MjModel, d: mujoco.MjData, i: int, chain: Chain) -> float:
    """Cogging and LuGre friction of a dcmotor (N or N·m), added after forcerange (not current-limited).

    Example: ``force[outadr] += dcmotor_mechanical(model, data, i, chain)``.
    """
    biasprm, dynprm = model.actuator_biasprm[i], model.actuator_dynprm[i]
    oadr = int(model.actuator_outadr[i])
    extra = 0.0
    if biasprm[0] != 0:
        cogging = biasprm[0] * math.sin(biasprm[1] * d.actuator_length[oadr] + biasprm[2])
        chain.detail(i, "cogging torque (after forcerange)", cogging, FORCE)
        extra += cogging
    if dynprm[5] > 0:
        j = int(model.actuator_actadr[i]) + dcmotor_slots(dynprm, model.actuator_gainprm[i])["bristle"]
        friction = -(dynprm[5] * d.act[j] + dynprm[6] * chain.act_dot[j])
        chain.detail(i, "LuGre friction (after forcerange)", friction, FORCE)
        extra += friction
    return extra
