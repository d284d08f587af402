"""Trace an actuator's force chain: ``labkit.trace`` and ``labkit.explain``.

MuJoCo turns a control into generalized force in stages (``mj_fwdActuation`` in
``engine_forward.c``)::

    request (data.ctrl) → input (delay, ctrlrange, slew) → activation (act, act_dot)
      → force_raw (gain·input + bias, or the pid/so3/dcmotor law) → force (forcerange)
      → qfrc = momentᵀ·force (transmission) → qfrc_actuator (sum, gravcomp, joint limits)

:func:`trace` recomputes every stage of one actuator from the model's parameters (and
the transmission lengths, velocities and moments MuJoCo computed) and cross-checks each
stage against MuJoCo's own arrays wherever MuJoCo exposes it; a disagreement raises
:class:`TraceMismatch` naming the stage and both values.  :func:`explain` reads back what
an MJCF shortcut (``position``, ``pid``, ...) became in the compiled model.

Every actuator of the model is recomputed, not only the traced one: several actuators can
act on one joint or tendon, and the final ``qfrc_actuator`` is checked as a whole.

Tolerance: MuJoCo and labkit evaluate the same double-precision formulas, in a possibly
different order, so they agree to rounding (about 1e-16 relative per operation, a few
dozen operations per stage).  Stages are compared with ``|a - b| <= 1e-9·max(1, |a|, |b|)``:
six orders of magnitude above rounding, yet a missing gear, a wrong sign or a forgotten
clamp differs by far more.
"""

from __future__ import annotations

import copy
import functools
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import gl
from .formatting import fmt
from .sources import Source, doc, engine, header

if TYPE_CHECKING:
    import mujoco

__all__ = ["RTOL", "Explanation", "Stage", "Trace", "TraceMismatch", "explain", "trace"]

#: Relative (and, below magnitude 1, absolute) tolerance of every cross-check; see the module docstring.
RTOL = 1e-9

_MINVAL = 1e-15  # mjMINVAL: the engine's guard against division by zero
_MAXVAL = 1e10  # mjMAXVAL: larger controls count as "bad" (mju_isBad)

# enum values of mjtTrn, mjtDyn, mjtGain, mjtBias, mjtCtrlInput, mjtCtrlChart, mjtJoint (mjtype.h)
_TRN_JOINT, _TRN_JOINTINPARENT, _TRN_SLIDERCRANK, _TRN_TENDON, _TRN_SITE, _TRN_BODY, _TRN_SO3 = range(7)
_DYN_NONE, _DYN_INTEGRATOR, _DYN_FILTER, _DYN_FILTEREXACT, _DYN_MUSCLE, _DYN_DCMOTOR, _DYN_PID = range(7)
_GAIN_FIXED, _GAIN_AFFINE, _GAIN_MUSCLE, _GAIN_DCMOTOR, _GAIN_SO3, _GAIN_PID = range(6)
_BIAS_NONE, _BIAS_AFFINE, _BIAS_MUSCLE, _BIAS_DCMOTOR, _BIAS_SO3 = range(5)
_IN_POS, _IN_VEL, _IN_FF, _IN_VOLTAGE, _IN_NONE, _IN_PRESSURE = 1, 2, 4, 8, 16, 32
_CHART_EXPMAP, _CHART_QUAT = 1, 2
_JNT_FREE, _JNT_BALL, _JNT_SLIDE, _JNT_HINGE = range(4)
_JNT_DOFNUM = (6, 3, 1, 1)

_DYN_NAMES = ("none", "integrator", "filter", "filterexact", "muscle", "dcmotor", "pid", "user")
_GAIN_NAMES = ("fixed", "affine", "muscle", "dcmotor", "so3", "pid", "user")
_BIAS_NAMES = ("none", "affine", "muscle", "dcmotor", "so3", "user")
_TRN_NAMES = ("joint", "jointinparent", "slidercrank", "tendon", "site", "body", "so3")
_INPUT_NAMES = ((_IN_POS, "pos"), (_IN_VEL, "vel"), (_IN_FF, "ff"), (_IN_VOLTAGE, "voltage"),
                (_IN_NONE, "none"), (_IN_PRESSURE, "pressure"))

# Parameter names per type: the entries the engine reads (the rest are unused zeros).
_GAINPRM = {_GAIN_FIXED: ("gain",), _GAIN_AFFINE: ("const", "length coef", "velocity coef"),
            _GAIN_MUSCLE: ("range0", "range1", "force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"),
            _GAIN_DCMOTOR: ("R", "K", "tempcoef", "reftemp", "kp", "ki", "kd", "Vmax"),
            _GAIN_SO3: ("kp",), _GAIN_PID: ("ki",)}
_BIASPRM = {_BIAS_NONE: (), _BIAS_AFFINE: ("const", "length coef", "velocity coef"),
            _BIAS_MUSCLE: _GAINPRM[_GAIN_MUSCLE],
            _BIAS_DCMOTOR: ("cogging amplitude", "cogging poles", "cogging phase",
                            "coulomb", "static", "stribeck velocity"),
            _BIAS_SO3: ("const", "-kp (unused)", "-kv")}
_DYNPRM = {_DYN_NONE: (), _DYN_INTEGRATOR: (), _DYN_FILTER: ("timeconst",), _DYN_FILTEREXACT: ("timeconst",),
           _DYN_MUSCLE: ("tau act", "tau deact", "tausmooth"),
           _DYN_DCMOTOR: ("electrical timeconst", "di/dt max", "thermal resistance", "thermal capacitance",
                          "ambient", "lugre stiffness", "lugre damping", "slewmax", "imax"),
           _DYN_PID: ("imax", "slewmax")}

_LENGTH = "m or rad (×gear)"
_FORCE = "N or N·m (transmission space)"
_QFRC = "generalized force (N or N·m per DOF)"


class TraceMismatch(AssertionError):
    """A stage that labkit recomputed disagrees with MuJoCo's own array."""


# ---------------------------------------------------------------------------------------
# looking things up


def _mj() -> Any:
    gl.choose()  # MuJoCo must not be imported before the GL backend is chosen
    import mujoco

    return mujoco


def _actuator_id(model: mujoco.MjModel, actuator: str | int) -> int:
    __tracebackhide__ = True
    mujoco = _mj()
    if model.nactuator == 0:
        raise KeyError("this model has no actuators: add an <actuator> section to the MJCF")
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"#{i}"
             for i in range(model.nactuator)]
    if isinstance(actuator, bool) or not isinstance(actuator, str | int | np.integer):
        raise TypeError(f"actuator must be a name or an id, got {actuator!r}")
    if isinstance(actuator, str):
        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, actuator)
        if i < 0:
            raise KeyError(f"the model has no actuator named {actuator!r}; its actuators: {names}")
        return int(i)
    if not 0 <= int(actuator) < model.nactuator:
        raise IndexError(f"actuator id {int(actuator)} is out of range: the model has "
                         f"{model.nactuator} actuators (0..{model.nactuator - 1}): {names}")
    return int(actuator)


def _name(model: mujoco.MjModel, obj: Any, i: int) -> str:
    mujoco = _mj()
    if i < 0:
        return ""
    return mujoco.mj_id2name(model, obj, i) or f"#{i}"


def _input_names(model: mujoco.MjModel, i: int) -> list[str]:
    mujoco = _mj()
    names = []
    for k in range(int(model.actuator_ctrlnum[i])):
        name = mujoco.mj_actuatorInputName(model, i, k)
        names.append(name if name else ("ctrl" if model.actuator_ctrlnum[i] == 1 else f"ctrl{k}"))
    return names


def _spec_text(model: mujoco.MjModel, i: int) -> str:
    spec = int(model.actuator_ctrlspec[i])
    if model.actuator_gaintype[i] == _GAIN_SO3:
        return {_CHART_EXPMAP: "expmap", _CHART_QUAT: "quat"}.get(spec, str(spec))
    if spec == 0:
        return "type default"
    return " ".join(name for bit, name in _INPUT_NAMES if spec & bit)


def _family(model: mujoco.MjModel, i: int) -> str:
    """What the compiled parameters read as (the model does not record the MJCF element)."""
    dyn, gain, bias = (int(model.actuator_dyntype[i]), int(model.actuator_gaintype[i]),
                       int(model.actuator_biastype[i]))
    g, b, spec = model.actuator_gainprm[i], model.actuator_biasprm[i], int(model.actuator_ctrlspec[i])
    if gain == _GAIN_SO3:
        return "orientation" if dyn == _DYN_NONE else "orientation (integrated setpoint)"
    if gain == _GAIN_PID:
        return "pid"
    if gain == _GAIN_DCMOTOR:
        return "dcmotor"
    if dyn == _DYN_MUSCLE or gain == _GAIN_MUSCLE or bias == _BIAS_MUSCLE:
        return "muscle"
    if spec == _IN_PRESSURE:
        return "cylinder"
    if gain == _GAIN_FIXED and bias == _BIAS_AFFINE and b[0] == 0:
        if g[0] == -b[1] and g[0] != 0:
            if dyn == _DYN_NONE:
                return "position"
            if dyn == _DYN_FILTEREXACT:
                return "position (filtered setpoint)"
            if dyn == _DYN_INTEGRATOR:
                return "intvelocity"
        if b[1] == 0 and g[0] == -b[2] and dyn == _DYN_NONE:
            return "velocity"
    if (gain == _GAIN_AFFINE and bias == _BIAS_NONE and dyn == _DYN_NONE
            and g[0] == 0 and g[1] == 0 and g[2] <= 0):
        return "damper"
    if gain == _GAIN_FIXED and bias == _BIAS_NONE and dyn == _DYN_NONE:
        if model.actuator_trntype[i] == _TRN_BODY:
            return "adhesion"
        return "motor" if g[0] == 1 else "motor (gain ≠ 1)"
    return "general"


# ---------------------------------------------------------------------------------------
# the recomputation (all actuators at once)


def _wrap_period(model: mujoco.MjModel, i: int) -> float:
    """Period of a rotational servo's setpoint (2π·|gear|), 0 when the setpoint does not wrap.

    Servo-shaped actuators (fixed gain, affine bias with kp = gain, no dynamics or an
    integrator) and pid actuators on a ball joint or a purely rotational site+refsite
    interpret their setpoint on the circle (``mj_fwdActuation``; see docs ``gear``).
    """
    dyn = int(model.actuator_dyntype[i])
    servo = (model.actuator_gaintype[i] == _GAIN_FIXED and model.actuator_biastype[i] == _BIAS_AFFINE
             and model.actuator_gainprm[i, 0] == -model.actuator_biasprm[i, 1]
             and dyn in (_DYN_NONE, _DYN_INTEGRATOR))
    if not servo and model.actuator_gaintype[i] != _GAIN_PID:
        return 0.0
    gear = model.actuator_gear[model.actuator_outadr[i]]
    trn = int(model.actuator_trntype[i])
    if trn == _TRN_SITE and model.actuator_trnid[i, 1] >= 0 and not np.any(gear[:3]):
        return 2 * math.pi * float(np.linalg.norm(gear[3:]))
    if trn in (_TRN_JOINT, _TRN_JOINTINPARENT) and model.jnt_type[model.actuator_trnid[i, 0]] == _JNT_BALL:
        return 2 * math.pi * float(np.linalg.norm(gear[:3]))
    return 0.0


def _nearest(u: float, length: float, period: float) -> float:
    """The representative of setpoint ``u`` (mod ``period``) nearest to ``length``."""
    return u - period * _round((u - length) / period)


def _round(x: float) -> float:
    """C's round(): halves away from zero (Python's round() rounds halves to even)."""
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _slew(u: float, previous: float, rate: float, dt: float, period: float) -> tuple[float, float]:
    """Rate-limit setpoint ``u`` to ``rate``·``dt`` from ``previous``; returns (setpoint, act_dot)."""
    if period > 0:
        u = _nearest(u, previous, period)
    limited = min(max(u, previous - rate * dt), previous + rate * dt)
    return limited, (limited - previous) / dt


def _dcmotor_slots(dynprm: np.ndarray, gainprm: np.ndarray) -> dict[str, int]:
    """Activation slots of a dcmotor, in the engine's order: slew, integral, temperature, bristle, current."""
    present = (("slew", dynprm[7] > 0), ("integral", gainprm[5] > 0), ("temperature", dynprm[2] > 0),
               ("bristle", dynprm[5] > 0), ("current", dynprm[0] > 0))
    slots: dict[str, int] = {}
    for name, on in present:
        if on:
            slots[name] = len(slots)
    return slots


def _stribeck(v: float, coulomb: float, static: float, vs: float) -> float:
    """LuGre Stribeck curve g(v) = F_C + (F_S - F_C)·exp(-(v/v_S)²)."""
    ratio = v / max(_MINVAL, vs)
    return coulomb + (static - coulomb) * math.exp(-ratio * ratio)


def _unpack(u: np.ndarray, spec: int) -> tuple[float, float, float, float]:
    """Present inputs of a pid/dcmotor block in canonical order (pos, vel, ff, voltage); absent: 0."""
    values, k = [], 0
    for bit in (_IN_POS, _IN_VEL, _IN_FF, _IN_VOLTAGE):
        if spec & bit:
            values.append(float(u[k]))
            k += 1
        else:
            values.append(0.0)
    return values[0], values[1], values[2], values[3]


def _dc_voltage(u: np.ndarray, spec: int, length: float, velocity: float, integral: float,
                gainprm: np.ndarray) -> float:
    """Terminal voltage of a dcmotor: on-board torque PID driven as current control, plus raw voltage."""
    pos, vel, ff, raw = _unpack(u, spec)
    voltage = 0.0
    if spec & (_IN_POS | _IN_VEL | _IN_FF):
        torque = gainprm[4] * (pos - length) + gainprm[6] * (vel - velocity) + gainprm[5] * integral + ff
        voltage = gainprm[0] / gainprm[1] * torque + gainprm[1] * velocity
        if gainprm[7] > 0:
            voltage = min(max(voltage, -gainprm[7]), gainprm[7])
    return voltage + raw


def _next_act(model: mujoco.MjModel, d: mujoco.MjData, i: int, j: int, act_dot: float) -> float:
    """Activation ``j`` after one step, for force laws with ``actearly`` (``mj_nextActivation``).

    Exact integration for filterexact and for a dcmotor's current; Euler otherwise; clamped
    to actrange except for dcmotor.  (The force laws read only these slots early: a dcmotor's
    bristle and integral states enter the force with their current values.)
    """
    act, h = float(d.act[j]), float(model.opt.timestep)
    dyn = int(model.actuator_dyntype[i])
    dynprm = model.actuator_dynprm[i]
    slots = _dcmotor_slots(dynprm, model.actuator_gainprm[i]) if dyn == _DYN_DCMOTOR else {}
    if dyn == _DYN_FILTEREXACT or j - int(model.actuator_actadr[i]) == slots.get("current", -1):
        tau = max(_MINVAL, float(dynprm[0]))
        act += act_dot * tau * (1 - math.exp(-h / tau))
    else:
        act += act_dot * h
    if dyn != _DYN_DCMOTOR and model.actuator_actlimited[i]:
        low, high = model.actuator_actrange[i]
        act = min(max(act, low), high)
    return act


@dataclass
class _Chain:
    """Every stage, recomputed for all actuators (arrays indexed like MuJoCo's)."""

    ctrl: np.ndarray  # (nu,) local copy: delayed, clamped (before slew)
    inputs: np.ndarray  # (nu,) what the force law reads: after slew limiting
    act_dot: np.ndarray  # (na,)
    force_raw: np.ndarray  # (nout,) force law output
    force: np.ndarray  # (nout,) after tendon limits, forcerange and dcmotor mechanical terms
    moment: np.ndarray  # (nout, nv) dense, from data
    gravcomp: np.ndarray  # (nv,) gravity compensation routed through actuators
    qfrc_actuator: np.ndarray  # (nv,) after joint actuator-force limits
    qfrc_total: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (nv,) before them
    force_clamped: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (nout,) right after forcerange
    unsupported: dict[int, str] = field(default_factory=dict)  # actuator -> why not recomputed
    notes: dict[int, list[str]] = field(default_factory=dict)
    details: dict[int, list[tuple[str, Any, str]]] = field(default_factory=dict)
    bad_ctrl: bool = False

    def note(self, i: int, text: str) -> None:
        self.notes.setdefault(i, []).append(text)

    def detail(self, i: int, label: str, value: Any, unit: str) -> None:
        self.details.setdefault(i, []).append((label, value, unit))


def _read_input(model: mujoco.MjModel, d: mujoco.MjData) -> tuple[np.ndarray, list[int]]:
    """data.ctrl, with delayed actuators' blocks read from the history buffer at time - delay."""
    mujoco = _mj()
    ctrl = np.array(d.ctrl, dtype=float)
    delayed = []
    for i in range(model.nactuator):
        if model.actuator_delay[i]:
            adr, num = int(model.actuator_ctrladr[i]), int(model.actuator_ctrlnum[i])
            result = np.zeros(num)
            value = mujoco.mj_readCtrl(model, d, i, d.time, result, int(model.actuator_history[i, 1]))
            ctrl[adr:adr + num] = np.asarray(value, dtype=float).reshape(-1)[:num]
            delayed.append(i)
    return ctrl, delayed


def _chain(model: mujoco.MjModel, d: mujoco.MjData) -> _Chain:
    """Recompute mj_fwdActuation's stages for every actuator (see the module docstring)."""
    mujoco = _mj()
    nu, nv, nout = model.nu, model.nv, model.nout
    moment = np.zeros((nout, nv))
    if nout and nv:
        mujoco.mju_sparse2dense(moment, d.actuator_moment, d.moment_rownnz, d.moment_rowadr,
                                d.moment_colind)
    chain = _Chain(np.zeros(nu), np.zeros(nu), np.zeros(model.na), np.zeros(nout), np.zeros(nout),
                   moment, np.zeros(nv), np.zeros(nv))
    disabled = int(model.opt.disableflags)
    if disabled & mujoco.mjtDisableBit.mjDSBL_ACTUATION:
        for i in range(model.nactuator):
            chain.note(i, "actuation is disabled (option/flag actuation=\"disable\"): no force at all")
        chain.ctrl[:] = chain.inputs[:] = d.ctrl
        chain.qfrc_total = np.zeros(nv)
        return chain
    if int(model.opt.enableflags) & mujoco.mjtEnableBit.mjENBL_SLEEP:
        for i in range(model.nactuator):
            chain.note(i, "sleep is enabled: labkit assumes every actuator is awake")

    # 1. input: delay (history buffer), ctrlrange clamp on a local copy, bad-control guard
    ctrl, delayed = _read_input(model, d)
    for i in delayed:
        chain.note(i, f"delayed by {fmt(float(model.actuator_delay[i]))} s: input read from the history "
                      f"buffer at t - delay = {fmt(float(d.time - model.actuator_delay[i]))} s (mj_readCtrl)")
    if not disabled & mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL:
        limited = model.actuator_ctrllimited.astype(bool)
        ctrl[limited] = np.clip(ctrl[limited], model.actuator_ctrlrange[limited, 0],
                                model.actuator_ctrlrange[limited, 1])
    if np.any(~np.isfinite(ctrl) | (np.abs(ctrl) > _MAXVAL)):
        ctrl[:] = 0
        chain.bad_ctrl = True
    chain.ctrl = ctrl.copy()
    u = ctrl.copy()  # the engine modifies its local copy further (slew limiting)

    # 2. act_dot of stateful actuators
    h = float(model.opt.timestep)
    for i in range(model.nactuator):
        adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
        if adr0 < 0:
            continue
        if model.actuator_plugin[i] >= 0:
            chain.unsupported[i] = "it is an actuator plugin"
            continue
        dyn = int(model.actuator_dyntype[i])
        uadr, oadr = int(model.actuator_ctrladr[i]), int(model.actuator_outadr[i])
        last = adr0 + actnum - 1
        dynprm, gainprm = model.actuator_dynprm[i], model.actuator_gainprm[i]
        length = float(d.actuator_length[oadr])
        a = chain.act_dot
        if dyn == _DYN_INTEGRATOR:
            num = int(model.actuator_ctrlnum[i])
            a[last - num + 1:last + 1] = u[uadr:uadr + num]
        elif dyn in (_DYN_FILTER, _DYN_FILTEREXACT):
            a[last] = (u[uadr] - d.act[last]) / max(_MINVAL, float(dynprm[0]))
        elif dyn == _DYN_MUSCLE:
            a[last] = mujoco.mju_muscleDynamics(float(u[uadr]), float(d.act[last]), dynprm[:3])
        elif dyn == _DYN_PID:
            period, adr = _wrap_period(model, i), adr0
            if dynprm[1] > 0:
                u[uadr], a[adr] = _slew(float(u[uadr]), float(d.act[adr]), float(dynprm[1]), h, period)
                adr += 1
            if gainprm[0] > 0:
                err = float(u[uadr]) - length
                if period > 0:
                    err -= period * _round(err / period)
                imax = float(dynprm[0])
                if imax > 0 and d.act[adr] >= imax:
                    err = min(err, 0.0)
                elif imax > 0 and d.act[adr] <= -imax:
                    err = max(err, 0.0)
                a[adr] = err
        elif dyn == _DYN_DCMOTOR:
            _dcmotor_act_dot(model, d, i, u, chain)
        else:
            chain.unsupported[i] = "its dynamics are user-defined (mjcb_act_dyn)"
    chain.inputs = u.copy()

    # 3. force law, per actuator
    for i in range(model.nactuator):
        if model.actuator_plugin[i] >= 0:
            chain.unsupported[i] = "it is an actuator plugin"
        if i in chain.unsupported:
            continue
        group = int(model.actuator_group[i])
        if 0 <= group <= 30 and int(model.opt.disableactuator) & (1 << group):
            chain.note(i, f"actuator group {group} is disabled (option/actuatorgroupdisable): force 0")
            continue
        _force_law(model, d, i, u, chain)
    for i in chain.unsupported:
        out = slice(int(model.actuator_outadr[i]), int(model.actuator_outadr[i] + model.actuator_outnum[i]))
        chain.force_raw[out] = d.actuator_force[out]

    # 4. tendon actuator-force limits, forcerange, dcmotor mechanical terms
    force = chain.force_raw.copy()
    _tendon_limits(model, force, chain)
    for i in range(model.nactuator):
        if not model.actuator_forcelimited[i] or i in chain.unsupported:
            continue
        low, high = model.actuator_forcerange[i]
        out = slice(int(model.actuator_outadr[i]), int(model.actuator_outadr[i] + model.actuator_outnum[i]))
        if model.actuator_gaintype[i] == _GAIN_SO3:
            norm = float(np.linalg.norm(force[out]))
            if norm > high:
                force[out] *= high / norm
        else:
            force[out] = np.clip(force[out], low, high)
    chain.force_clamped = force.copy()
    for i in range(model.nactuator):
        if model.actuator_biastype[i] == _BIAS_DCMOTOR and i not in chain.unsupported:
            group = int(model.actuator_group[i])
            if not (0 <= group <= 30 and int(model.opt.disableactuator) & (1 << group)):
                force[model.actuator_outadr[i]] += _dcmotor_mechanical(model, d, i, chain)
    chain.force = force

    # 5. transmission, gravity compensation, joint actuator-force limits
    qfrc = moment.T @ force if nout else np.zeros(nv)
    gravity_on = not disabled & mujoco.mjtDisableBit.mjDSBL_GRAVITY and np.any(model.opt.gravity)
    if model.flg_gravcomp and gravity_on:
        for j in np.flatnonzero(model.jnt_actgravcomp):
            dofs = slice(int(model.jnt_dofadr[j]), int(model.jnt_dofadr[j] + _JNT_DOFNUM[model.jnt_type[j]]))
            chain.gravcomp[dofs] = d.qfrc_gravcomp[dofs]
    qfrc = qfrc + chain.gravcomp
    chain.qfrc_total = qfrc.copy()
    for j in np.flatnonzero(model.jnt_actfrclimited):
        dof = int(model.jnt_dofadr[j])
        qfrc[dof] = min(max(qfrc[dof], model.jnt_actfrcrange[j, 0]), model.jnt_actfrcrange[j, 1])
    chain.qfrc_actuator = qfrc
    return chain


def _dcmotor_act_dot(model: mujoco.MjModel, d: mujoco.MjData, i: int, u: np.ndarray, chain: _Chain) -> None:
    """act_dot of a dcmotor's optional states (slew, integral, temperature, bristle, current)."""
    dynprm, gainprm, biasprm = model.actuator_dynprm[i], model.actuator_gainprm[i], model.actuator_biasprm[i]
    slots = _dcmotor_slots(dynprm, gainprm)
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
        u[uadr], a[j] = _slew(float(u[uadr]), float(d.act[j]), float(dynprm[7]), h, 0.0)
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
        a[j] = -dynprm[5] * abs(velocity) / max(_MINVAL, g) * d.act[j] + velocity
    if "current" in slots:
        j = adr0 + slots["current"]
        i_dot = (voltage / R - K / R * velocity - d.act[j]) / te
        if dynprm[1] > 0:
            i_dot = min(max(i_dot, -dynprm[1]), dynprm[1])
        a[j] = i_dot


def _force_law(model: mujoco.MjModel, d: mujoco.MjData, i: int, u: np.ndarray, chain: _Chain) -> None:
    """force_raw of actuator i: gain·(input or act) + bias, or the so3 / pid / dcmotor law."""
    mujoco = _mj()
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

    if gaintype == _GAIN_SO3:
        if int(model.actuator_ctrlspec[i]) == _CHART_QUAT:
            target = np.array(u[uadr:uadr + 4], dtype=float)
            norm = float(np.linalg.norm(target))
            target = target / norm if norm >= _MINVAL else np.array([1.0, 0, 0, 0])
        else:
            vec = (u[uadr:uadr + 3] if dyn == _DYN_NONE
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

    period = _wrap_period(model, i)
    if gaintype == _GAIN_FIXED:
        gain = float(gainprm[0])
    elif gaintype == _GAIN_PID:
        gain = 0.0
    elif gaintype == _GAIN_AFFINE:
        gain = gainprm[0] + gainprm[1] * length + gainprm[2] * velocity
    elif gaintype == _GAIN_MUSCLE:
        gain = mujoco.mju_muscleGain(length, velocity, model.actuator_lengthrange[oadr],
                                     float(model.actuator_acc0[oadr]), gainprm[:9])
    elif gaintype == _GAIN_DCMOTOR:
        slots = _dcmotor_slots(dynprm, gainprm)
        R, K = float(gainprm[0]), float(gainprm[1])
        if "temperature" in slots:
            T = float(d.act[adr0 + slots["temperature"]])
            R *= 1 + gainprm[2] * (T + dynprm[4] - gainprm[3])
            chain.detail(i, "resistance at temperature", R, "Ω")
        gain = K if dynprm[0] > 0 else K / max(_MINVAL, R)
        if int(model.actuator_ctrlspec[i]) != _IN_VOLTAGE and num > 0:
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
        if not _agree(near, value):
            chain.detail(i, f"setpoint {fmt(value)} read on the circle (period {fmt(period)}) as", near,
                         "rad (×gear)")
        return near

    if gaintype == _GAIN_PID:
        qref, vref, ff, _ = _unpack(u[uadr:uadr + num], int(model.actuator_ctrlspec[i]))
        if period > 0:
            qref = wrapped(qref)
        force = -biasprm[1] * qref - biasprm[2] * vref + ff
        if actnum and gainprm[0] > 0:
            force += gainprm[0] * act(adr0 + actnum - 1)
    elif actnum == 0 or (gaintype == _GAIN_DCMOTOR and dynprm[0] <= 0):
        value = float(u[uadr]) if num else 0.0
        force = gain * (wrapped(value) if period > 0 else value)
    else:
        value = act(adr0 + actnum - 1)
        force = gain * (wrapped(value) if period > 0 else value)

    if biastype == _BIAS_NONE:
        bias = 0.0
    elif biastype == _BIAS_AFFINE:
        bias = biasprm[0] + biasprm[1] * length + biasprm[2] * velocity
    elif biastype == _BIAS_MUSCLE:
        bias = mujoco.mju_muscleBias(length, model.actuator_lengthrange[oadr],
                                     float(model.actuator_acc0[oadr]), biasprm[:9])
    elif biastype == _BIAS_DCMOTOR:
        bias = -gain * gainprm[1] * velocity if dynprm[0] <= 0 else 0.0
    else:
        chain.unsupported[i] = "its bias is user-defined (mjcb_act_bias)"
        return
    chain.force_raw[oadr] = force + bias


def _expmap_quat(vec: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of the rotation vector ``vec`` (rad)."""
    angle = float(np.linalg.norm(vec))
    if angle < _MINVAL:
        return np.array([1.0, 0.0, 0.0, 0.0])
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * vec / angle])


def _tendon_limits(model: mujoco.MjModel, force: np.ndarray, chain: _Chain) -> None:
    """Scale the forces of actuators on an actuatorfrcrange-limited tendon so their sum fits the range."""
    on_tendon = [i for i in range(model.nactuator) if model.actuator_trntype[i] == _TRN_TENDON
                 and model.tendon_actfrclimited[model.actuator_trnid[i, 0]]]
    if not on_tendon:
        return
    total: dict[int, float] = {}
    for i in on_tendon:
        t = int(model.actuator_trnid[i, 0])
        total[t] = total.get(t, 0.0) + float(force[model.actuator_outadr[i]])
    for i in on_tendon:
        t = int(model.actuator_trnid[i, 0])
        low, high = model.tendon_actfrcrange[t]
        if total[t] and not low <= total[t] <= high:
            scale = (low if total[t] < low else high) / total[t]
            force[model.actuator_outadr[i]] *= scale
            chain.note(i, f"tendon actuatorfrcrange [{fmt(low)}, {fmt(high)}] scales every actuator on the "
                          f"tendon by {fmt(scale)} (their sum was {fmt(total[t])})")


def _dcmotor_mechanical(model: mujoco.MjModel, d: mujoco.MjData, i: int, chain: _Chain) -> float:
    """Cogging and LuGre friction of a dcmotor, added after forcerange (not current-limited)."""
    biasprm, dynprm = model.actuator_biasprm[i], model.actuator_dynprm[i]
    oadr = int(model.actuator_outadr[i])
    extra = 0.0
    if biasprm[0] != 0:
        cogging = biasprm[0] * math.sin(biasprm[1] * d.actuator_length[oadr] + biasprm[2])
        chain.detail(i, "cogging torque (after forcerange)", cogging, _FORCE)
        extra += cogging
    if dynprm[5] > 0:
        j = int(model.actuator_actadr[i]) + _dcmotor_slots(dynprm, model.actuator_gainprm[i])["bristle"]
        friction = -(dynprm[5] * d.act[j] + dynprm[6] * chain.act_dot[j])
        chain.detail(i, "LuGre friction (after forcerange)", friction, _FORCE)
        extra += friction
    return extra


# ---------------------------------------------------------------------------------------
# cross-checks


def _agree(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    scale = np.maximum(1.0, np.maximum(np.abs(ours), np.abs(theirs)))
    return np.abs(ours - theirs) <= RTOL * scale


def _mismatch(stage: str, what: str, ours: Any, theirs: Any, array: str, hint: str) -> TraceMismatch:
    return TraceMismatch(
        f"stage {stage!r} of {what}: labkit recomputed {fmt(ours, 12)}, but MuJoCo's {array} holds "
        f"{fmt(theirs, 12)} (tolerance {RTOL:g} relative).\n  {hint}"
    )


def _verify(model: mujoco.MjModel, d: mujoco.MjData, chain: _Chain) -> None:
    """Compare act_dot, actuator_force and qfrc_actuator of every actuator with MuJoCo's arrays."""
    __tracebackhide__ = True
    mujoco = _mj()
    hint = ("Either the model uses a feature labkit does not model, or MuJoCo's behaviour changed: "
            "read mj_fwdActuation (engine_forward.c) at the installed version.")
    if int(model.opt.disableflags) & mujoco.mjtDisableBit.mjDSBL_ACTUATION:
        return
    for i in range(model.nactuator):
        if i in chain.unsupported:
            continue
        name = f"actuator {_name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i)!r} (id {i})"
        adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
        if adr0 >= 0:
            acts = slice(adr0, adr0 + actnum)
            ok = _agree(chain.act_dot[acts], d.act_dot[acts])
            if not ok.all():
                raise _mismatch("act_dot", name, chain.act_dot[acts], d.act_dot[acts],
                                f"data.act_dot[{adr0}:{adr0 + actnum}]", hint)
        out = slice(int(model.actuator_outadr[i]), int(model.actuator_outadr[i] + model.actuator_outnum[i]))
        if not _agree(chain.force[out], d.actuator_force[out]).all():
            raise _mismatch("force", name, chain.force[out], d.actuator_force[out],
                            f"data.actuator_force[{out.start}:{out.stop}]", hint)
    ok = _agree(chain.qfrc_actuator, d.qfrc_actuator)
    if not ok.all():
        dofs = np.flatnonzero(~ok)
        raise _mismatch("qfrc_actuator", f"DOFs {dofs.tolist()}", chain.qfrc_actuator[dofs],
                        d.qfrc_actuator[dofs], "data.qfrc_actuator", hint)


# ---------------------------------------------------------------------------------------
# the Trace


@dataclass(frozen=True, eq=False)
class Stage:
    """One row of a :class:`Trace`: name, value (numpy array), unit, sources, and how it was checked."""

    name: str
    value: np.ndarray
    unit: str
    sources: tuple[Source, ...]
    checked: str
    labels: tuple[str, ...] = ()

    def shown(self) -> str:
        """The value as text: labelled entries (``pos=0.5, vel=0``) where labels are known."""
        values = np.asarray(self.value, dtype=float).reshape(-1)
        # round-off (a residual velocity of 3e-12 rad/s) differs between machines: show it as 0
        finite = values[np.isfinite(values)]
        limit = 1e-9 * max(1.0, float(np.max(np.abs(finite), initial=0.0)))
        values = np.where(np.abs(values) < limit, 0.0, values)
        if self.labels and len(self.labels) == len(values) and len(values) > 1:
            return ", ".join(f"{label}={fmt(v)}" for label, v in zip(self.labels, values, strict=True))
        if values.size == 0:
            return "—"
        return fmt(values)


@dataclass(frozen=True, eq=False)
class Trace:
    """The force chain of one actuator, every stage recomputed and cross-checked.

    Shapes (k = ctrlnum, a = actnum, o = outnum, nv = model.nv)::

        request (k,)   data.ctrl[ctrladr:ctrladr+k], as written            ctrl units
        input (k,)     effective input: history read (delay), ctrlrange clamp, slew limit
        act (a,)       data.act[actadr:actadr+a]; empty when stateless
        act_dot (a,)   recomputed; checked against data.act_dot
        length (o,), velocity (o,)   data.actuator_length/velocity (transmission space)
        force_raw (o,) force law output before tendon limits and forcerange (not exposed by
                       MuJoCo: checked through force, exactly where no clamp acts)
        force (o,)     after tendon limits, forcerange (norm for orientation) and dcmotor
                       cogging/friction; checked against data.actuator_force[outadr:outadr+o]
        qfrc (nv,)     momentᵀ·force: this actuator's own generalized force, before joint limits
        qfrc_actuator (len(dofs),)   data.qfrc_actuator at ``dofs`` (all actuators summed,
                       plus actuator-side gravcomp, clamped by joint actuatorfrcrange);
                       the whole vector is checked against labkit's recomputation
        dofs (d,)      DOFs this actuator drives (nonzero columns of its moment rows)

    The trace describes the *current* state: :func:`trace` runs ``mj_forward`` on a copy of
    the data, so after ``mj_step`` it shows the force the next step will apply, while
    ``data.actuator_force`` still holds the one the last step applied (``fresh`` is then
    False and a note says so).
    """

    actuator: str
    id: int
    family: str
    transmission: str
    time: float
    request: np.ndarray
    input: np.ndarray
    act: np.ndarray
    act_dot: np.ndarray
    length: np.ndarray
    velocity: np.ndarray
    force_raw: np.ndarray
    force: np.ndarray
    qfrc: np.ndarray
    qfrc_actuator: np.ndarray
    dofs: np.ndarray
    dof_names: tuple[str, ...]
    stages: tuple[Stage, ...]
    details: tuple[tuple[str, Any, str], ...] = ()
    notes: tuple[str, ...] = ()
    verified: bool = True
    fresh: bool = True

    def stage(self, name: str) -> Stage:
        """The row called ``name`` (``"request"``, ``"force"``, ...)."""
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage {name!r}; stages: {[s.name for s in self.stages]}")

    def _title(self) -> str:
        return (f"Actuator {self.actuator!r} (id {self.id}) · {self.family} · {self.transmission} · "
                f"t = {fmt(self.time)} s")

    def _footer(self) -> list[str]:
        lines = [f"{label}: {fmt(value)}" + (f" {unit}" if unit else "")
                 for label, value, unit in self.details]
        lines += list(self.notes)
        if self.verified:
            lines.append("✔ act_dot, force and qfrc_actuator agree with MuJoCo "
                         f"(rtol {RTOL:g}); input and force_raw are recomputed (MuJoCo does not store them)")
        else:
            lines.append("⚠ this actuator's force law was not recomputed (see above); the rest was checked")
        return lines

    def text(self) -> str:
        """The trace as a plain-text table (deterministic: nbval compares it)."""
        rows = [("stage", "value", "unit", "source")]
        rows += [(s.name, s.shown(), s.unit, " · ".join(src.label for src in s.sources)) for s in self.stages]
        widths = [max(len(r[k]) for r in rows) for k in range(3)]
        lines = [self._title()]
        if len(self.dofs):
            lines.append("DOFs driven: " + ", ".join(self.dof_names))
        for r in rows:
            lines.append("  ".join(r[k].ljust(widths[k]) for k in range(3)) + "  " + r[3])
        lines += ["  " + line for line in self._footer()]
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        def cell(text: str, mono: bool = False) -> str:
            style = ' style="font-family:monospace;text-align:left"' if mono else ' style="text-align:left"'
            return f"<td{style}>{html.escape(text)}</td>"

        def links(sources: Sequence[Source]) -> str:
            return " · ".join(
                f'<a href="{html.escape(s.url)}" target="_blank">{html.escape(s.label)}</a>' if s.url
                else html.escape(s.label) for s in sources)

        body = "".join(
            f"<tr>{cell(s.name)}{cell(s.shown(), True)}{cell(s.unit)}<td style=\"text-align:left\">"
            f"{links(s.sources)}</td></tr>" for s in self.stages)
        dofs = (f"<div>DOFs driven: {html.escape(', '.join(self.dof_names))}</div>" if len(self.dofs) else "")
        footer = "".join(f"<div>{html.escape(line)}</div>" for line in self._footer())
        return (f'<div style="font-family:sans-serif;font-size:90%"><b>{html.escape(self._title())}</b>{dofs}'
                '<table><tr><th style="text-align:left">stage</th><th style="text-align:left">value</th>'
                '<th style="text-align:left">unit</th><th style="text-align:left">source</th></tr>'
                f'{body}</table><div style="color:#555">{footer}</div></div>')


def _input_units(model: mujoco.MjModel, i: int, family: str) -> list[str]:
    units = {"pos": _LENGTH, "vel": "m/s or rad/s (×gear)",
             "ff": _FORCE, "voltage": "V", "pressure": "pressure", "rx": "rad (exp-map)",
             "ry": "rad (exp-map)", "rz": "rad (exp-map)", "qw": "quaternion (w x y z)",
             "qx": "quaternion (w x y z)", "qy": "quaternion (w x y z)", "qz": "quaternion (w x y z)"}
    default = {"muscle": "excitation (0–1)", "adhesion": "ctrl units (×gain = N)"}.get(family, "ctrl units")
    return [units.get(name, default) for name in _input_names(model, i)]


_SETPOINT = (_LENGTH, "m/s or rad/s (×gear)")
_INTEGRAL = ("m·s or rad·s (×gear)", _LENGTH)


def _act_slots(model: mujoco.MjModel, i: int, family: str) -> list[tuple[str, str, str]]:
    """(label, unit, unit of its rate) of each activation slot of actuator i."""
    dyn, actnum = int(model.actuator_dyntype[i]), int(model.actuator_actnum[i])
    if actnum == 0:
        return []
    if dyn == _DYN_PID:
        slots = []
        if model.actuator_dynprm[i, 1] > 0:
            slots.append(("slew", *_SETPOINT))  # the rate-limited position setpoint
        if model.actuator_gainprm[i, 0] > 0:
            slots.append(("integral", *_INTEGRAL))  # the integrated position error
        return slots
    if dyn == _DYN_DCMOTOR:
        first = (_input_units(model, i, family) or ["ctrl units"])[0]
        units = {"slew": ("slew", first, f"({first})/s"), "integral": ("integral", *_INTEGRAL),
                 "temperature": ("temperature", "K above ambient", "K/s"),
                 "bristle": ("bristle", "rad or m", "rad/s or m/s"), "current": ("current", "A", "A/s")}
        present = _dcmotor_slots(model.actuator_dynprm[i], model.actuator_gainprm[i])
        return [units[name] for name in sorted(present, key=present.__getitem__)]
    if dyn == _DYN_MUSCLE:
        return [("activation", "0–1", "1/s")] * actnum
    if family.startswith("orientation"):
        return [(axis, "rad (exp-map)", "rad/s") for axis in ("rx", "ry", "rz")][:actnum]
    if family == "intvelocity" or family.startswith("position"):
        return [("setpoint", *_SETPOINT)] * actnum
    if dyn == _DYN_INTEGRATOR:
        return [("integral", "ctrl units·s", "ctrl units")] * actnum
    if dyn in (_DYN_FILTER, _DYN_FILTEREXACT):
        return [("filtered", "ctrl units", "ctrl units/s")] * actnum
    return [("state", "user units", "user units/s")] * actnum


def _joined(units: Sequence[str], labels: Sequence[str]) -> str:
    if not units:
        return ""
    if len(set(units)) == 1:
        return units[0]
    return "; ".join(f"{label}: {unit}" for label, unit in zip(labels, units, strict=True))


def _dof_names(model: mujoco.MjModel, dofs: np.ndarray) -> tuple[str, ...]:
    mujoco = _mj()
    names = []
    for dof in dofs:
        j = int(model.dof_jntid[dof])
        name = _name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        width = _JNT_DOFNUM[model.jnt_type[j]]
        names.append(f"{name}[{dof - model.jnt_dofadr[j]}]" if width > 1 else name)
    return tuple(f"{n} (dof {int(dof)})" for n, dof in zip(names, dofs, strict=True))


def _transmission_text(model: mujoco.MjModel, i: int) -> str:
    mujoco = _mj()
    trn = int(model.actuator_trntype[i])
    a, b = int(model.actuator_trnid[i, 0]), int(model.actuator_trnid[i, 1])
    if trn in (_TRN_JOINT, _TRN_JOINTINPARENT):
        return f"{_TRN_NAMES[trn]} → {_name(model, mujoco.mjtObj.mjOBJ_JOINT, a)}"
    if trn == _TRN_SO3:
        if b < 0:
            return f"so3 → ball joint {_name(model, mujoco.mjtObj.mjOBJ_JOINT, a)}"
        return (f"so3 → site {_name(model, mujoco.mjtObj.mjOBJ_SITE, a)} relative to refsite "
                f"{_name(model, mujoco.mjtObj.mjOBJ_SITE, b)}")
    if trn == _TRN_TENDON:
        return f"tendon → {_name(model, mujoco.mjtObj.mjOBJ_TENDON, a)}"
    if trn == _TRN_SITE:
        ref = f" relative to refsite {_name(model, mujoco.mjtObj.mjOBJ_SITE, b)}" if b >= 0 else ""
        return f"site → {_name(model, mujoco.mjtObj.mjOBJ_SITE, a)}{ref}"
    if trn == _TRN_SLIDERCRANK:
        return (f"slidercrank → cranksite {_name(model, mujoco.mjtObj.mjOBJ_SITE, a)}, slidersite "
                f"{_name(model, mujoco.mjtObj.mjOBJ_SITE, b)}")
    if trn == _TRN_BODY:
        return f"body (adhesion) → {_name(model, mujoco.mjtObj.mjOBJ_BODY, a)}"
    return f"transmission type {trn}"


def trace(model: mujoco.MjModel, data: mujoco.MjData, actuator: str | int) -> Trace:
    """Trace actuator ``actuator`` (name or id) from ctrl to generalized force.

    Call it after ``mj_forward`` or ``mj_step``: it runs ``mj_forward`` on a *copy* of
    ``data`` (``data`` itself is not modified), recomputes every stage of every actuator
    from the model's parameters and the copy's transmission lengths, velocities and moments,
    and raises :class:`TraceMismatch` where a stage disagrees with MuJoCo's own array
    (``act_dot``, ``actuator_force``, ``qfrc_actuator``).  See :class:`Trace` for the stages,
    their shapes and units.  A control callback (``mjcb_control``) installed globally runs
    in that ``mj_forward`` too, as it would in the next step.
    """
    __tracebackhide__ = True
    mujoco = _mj()
    i = _actuator_id(model, actuator)
    work = copy.copy(data)
    mujoco.mj_forward(model, work)
    chain = _chain(model, work)
    _verify(model, work, chain)

    family = _family(model, i)
    uadr, num = int(model.actuator_ctrladr[i]), int(model.actuator_ctrlnum[i])
    adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
    oadr, outnum = int(model.actuator_outadr[i]), int(model.actuator_outnum[i])
    ins, outs = slice(uadr, uadr + num), slice(oadr, oadr + outnum)
    acts = slice(adr0, adr0 + actnum) if adr0 >= 0 else slice(0, 0)
    # verified stages are reported as MuJoCo's own values (equal to labkit's within RTOL)
    force = np.array(work.actuator_force[outs])
    act_dot = np.array(work.act_dot[acts])
    rows = chain.moment[outs]
    dofs = np.flatnonzero(np.any(rows != 0, axis=0)) if rows.size else np.zeros(0, dtype=int)
    qfrc = rows.T @ force if rows.size else np.zeros(model.nv)

    notes = list(chain.notes.get(i, []))
    request, effective = np.array(work.ctrl[ins]), chain.inputs[ins]
    if chain.bad_ctrl:
        notes.append("a control is NaN, infinite or beyond 1e10: MuJoCo zeroes every input (mjWARN_BADCTRL)")
    clamped = [k for k in range(num) if model.actuator_ctrllimited[uadr + k]
               and not _agree(chain.ctrl[uadr + k], request[k]) and not model.actuator_delay[i]]
    if clamped:
        notes.append(f"ctrlrange clamps a local copy: data.ctrl keeps the request {fmt(request)}, the force "
                     f"law reads {fmt(chain.ctrl[ins])}")
    if not _agree(chain.inputs[ins], chain.ctrl[ins]).all():
        notes.append(f"slew limiting: clamped input {fmt(chain.ctrl[ins])} → effective {fmt(effective)}")
    raw = chain.force_raw[outs]
    clamped_force = chain.force_clamped[outs] if chain.force_clamped.size else force
    if model.actuator_forcelimited[i] and not _agree(raw, clamped_force).all():
        low, high = model.actuator_forcerange[i]
        what = "the norm of force_raw" if model.actuator_gaintype[i] == _GAIN_SO3 else "force_raw"
        after = (", then the dcmotor's cogging and friction are added"
                 if model.actuator_biastype[i] == _BIAS_DCMOTOR else "")
        notes.append(f"forcerange [{fmt(low)}, {fmt(high)}] clamps {what}: {fmt(raw)} → "
                     f"{fmt(clamped_force)}{after}")
    own = qfrc[dofs]
    others = chain.qfrc_total[dofs] - own - chain.gravcomp[dofs]
    if not _agree(others, np.zeros_like(others)).all():
        notes.append(f"other actuators add {fmt(others)} at these DOFs")
    if np.any(chain.gravcomp[dofs]):
        notes.append(f"actuator-side gravity compensation adds {fmt(chain.gravcomp[dofs])} "
                     "(data.qfrc_gravcomp)")
    for j in np.flatnonzero(model.jnt_actfrclimited):
        dof = int(model.jnt_dofadr[j])
        total, final = chain.qfrc_total[dof], chain.qfrc_actuator[dof]
        if dof in dofs and not _agree(total, final):
            low, high = model.jnt_actfrcrange[j]
            joint = _name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
            notes.append(f"joint {joint!r} actuatorfrcrange [{fmt(low)}, {fmt(high)}] clamps the summed "
                         f"actuator force at dof {dof}: {fmt(total)} → {fmt(final)}")
    if np.any(model.actuator_damping[i]) or model.actuator_armature[i]:
        notes.append("this actuator's damping/armature act on its joint or tendon as passive force and "
                     "inertia (×gear², in qfrc_passive and the mass matrix), not in qfrc_actuator")
    if i in chain.unsupported:
        notes.append(f"labkit cannot recompute this actuator: {chain.unsupported[i]}; force is MuJoCo's")
    fresh = bool(_agree(data.actuator_force, work.actuator_force).all()
                 and _agree(data.qfrc_actuator, work.qfrc_actuator).all())
    if not fresh:
        notes.append("your data.actuator_force/qfrc_actuator differ from this state's: they were "
                     "computed before the last mj_step (or before ctrl/qpos changed); this trace is of "
                     "the current state")

    names = _input_names(model, i)
    in_unit = _joined(_input_units(model, i, family), names)
    slots = _act_slots(model, i, family)
    act_labels = tuple(label for label, _, _ in slots)
    act_unit = _joined([unit for _, unit, _ in slots], act_labels)
    dot_unit = _joined([rate for _, _, rate in slots], act_labels)
    out_unit = "N·m (child frame)" if family.startswith("orientation") else _FORCE
    fwd = engine("engine_forward.c", "mj_fwdActuation")
    stages = (
        Stage("request", request, in_unit or "no inputs",
              (header("mjdata.h", "ctrl"), header("mjmodel.h", "actuator_ctrladr")), "read from data.ctrl",
              tuple(names)),
        Stage("input", effective, in_unit or "no inputs",
              (fwd, header("mjmodel.h", "actuator_ctrlrange"))
              + ((header("mujoco.h", "mj_readCtrl"),) if model.actuator_delay[i] else ()),
              "recomputed (MuJoCo's local copy is not stored); checked through act_dot and force",
              tuple(names)),
        Stage("act", np.array(work.act[acts]), act_unit or "stateless",
              (header("mjdata.h", "act"), header("mjmodel.h", "actuator_actadr")), "read from data.act",
              act_labels),
        Stage("act_dot", act_dot, dot_unit or "stateless",
              (header("mjdata.h", "act_dot"), fwd), "checked against data.act_dot", act_labels),
        Stage("length", np.array(work.actuator_length[outs]), _LENGTH,
              (header("mjdata.h", "actuator_length"), engine("engine_core_smooth.c", "mj_transmission")),
              "read from data"),
        Stage("velocity", np.array(work.actuator_velocity[outs]), "m/s or rad/s (×gear)",
              (header("mjdata.h", "actuator_velocity"),), "read from data"),
        Stage("force_raw", raw, out_unit, (fwd, header("mjmodel.h", "actuator_gainprm"),
                                           header("mjmodel.h", "actuator_biasprm")),
              "recomputed (not stored by MuJoCo); checked through force = clamp(force_raw)"),
        Stage("force", force, out_unit, (header("mjdata.h", "actuator_force"),
                                         header("mjmodel.h", "actuator_forcerange")),
              f"checked against data.actuator_force[{oadr}:{oadr + outnum}]"),
        Stage("qfrc", own, _QFRC, (engine("engine_core_smooth.c", "mj_transmission"),
                                   header("mjdata.h", "actuator_moment")),
              "momentᵀ·force; checked through qfrc_actuator"),
        Stage("qfrc_actuator", np.array(work.qfrc_actuator[dofs]), _QFRC,
              (header("mjdata.h", "qfrc_actuator"), header("mjmodel.h", "jnt_actfrcrange")),
              "checked against data.qfrc_actuator"),
    )
    return Trace(
        actuator=_name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i), id=i, family=family,
        transmission=_transmission_text(model, i), time=float(work.time),
        request=request, input=np.array(effective), act=np.array(work.act[acts]),
        act_dot=act_dot, length=np.array(work.actuator_length[outs]),
        velocity=np.array(work.actuator_velocity[outs]), force_raw=np.array(raw), force=np.array(force),
        qfrc=qfrc, qfrc_actuator=np.array(work.qfrc_actuator[dofs]), dofs=dofs,
        dof_names=_dof_names(model, dofs), stages=stages, details=tuple(chain.details.get(i, [])),
        notes=tuple(notes), verified=i not in chain.unsupported, fresh=fresh,
    )


# ---------------------------------------------------------------------------------------
# explain: what a shortcut became


def _trimmed(values: np.ndarray, names: Sequence[str] | None) -> np.ndarray:
    """The entries the engine reads (``names``), or for user types the values up to the last nonzero."""
    if names is not None:
        return np.array(values[:len(names)])
    nonzero = np.flatnonzero(values)
    return np.array(values[:nonzero[-1] + 1]) if nonzero.size else np.zeros(0)


def _readback(model: mujoco.MjModel, i: int, family: str) -> dict[str, float]:
    """The shortcut attributes (kp, kv, ...) that the compiled parameters correspond to."""
    g, b, p = (model.actuator_gainprm[i], model.actuator_biasprm[i], model.actuator_dynprm[i])
    dyn = int(model.actuator_dyntype[i])
    if family.startswith("motor") or family == "adhesion":
        return {"gain": float(g[0])}
    if family.startswith("position"):
        timeconst = float(p[0]) if dyn == _DYN_FILTEREXACT else 0.0
        return {"kp": float(g[0]), "kv": float(-b[2]), "timeconst": timeconst}
    if family == "velocity":
        return {"kv": float(g[0])}
    if family == "intvelocity":
        return {"kp": float(g[0]), "kv": float(-b[2])}
    if family == "pid":
        stateful = dyn == _DYN_PID
        return {"kp": float(-b[1]), "kv": float(-b[2]), "ki": float(g[0]),
                "imax": float(p[0]) if stateful else 0.0, "slewmax": float(p[1]) if stateful else 0.0}
    if family.startswith("orientation"):
        return {"kp": float(g[0]), "kv": float(-b[2])}
    if family == "damper":
        return {"kv": float(-g[2])}
    if family == "cylinder":
        return {"area": float(g[0]), "timeconst": float(p[0]), "bias0": float(b[0]), "bias1": float(b[1]),
                "bias2": float(b[2])}
    if family == "dcmotor":
        names = dict(zip(_GAINPRM[_GAIN_DCMOTOR], g, strict=False))
        names.update(zip(_DYNPRM[_DYN_DCMOTOR], p, strict=False))
        names.update(zip(_BIASPRM[_BIAS_DCMOTOR], b, strict=False))
        return {k: float(v) for k, v in names.items() if v or k in ("R", "K")}
    if family == "muscle":
        return {**{k: float(v) for k, v in zip(_GAINPRM[_GAIN_MUSCLE], g, strict=False)},
                **{k: float(v) for k, v in zip(_DYNPRM[_DYN_MUSCLE], p, strict=False)}}
    return {}


@dataclass(frozen=True, eq=False)
class Explanation:
    """What an actuator compiled to: types, parameters, blocks, transmission, ranges.

    family: what the parameters read as (``"position"``, ``"pid"``, ...; the compiled model
    does not record which MJCF element wrote it: shortcuts are presets of ``general``).
    parameters: the shortcut's attributes read back (``{"kp": 10, "kv": 1, ...}``).
    gainprm/biasprm/dynprm: the entries the engine reads for these types (shape (≤10,)).
    ctrlrange (ctrlnum, 2) and ctrllimited (ctrlnum,) are per input; forcerange/actrange (2,).
    gear: (outnum, 6), one row per force output.
    rows: (field, value, meaning, sources) as displayed.
    """

    actuator: str
    id: int
    family: str
    dyntype: str
    gaintype: str
    biastype: str
    gainprm: np.ndarray
    biasprm: np.ndarray
    dynprm: np.ndarray
    parameters: dict[str, float]
    ctrladr: int
    ctrlnum: int
    ctrlspec: int
    inputs: tuple[str, ...]
    actadr: int
    actnum: int
    outadr: int
    outnum: int
    trntype: str
    target: str
    refsite: str
    gear: np.ndarray
    ctrlrange: np.ndarray
    ctrllimited: np.ndarray
    forcerange: np.ndarray
    forcelimited: bool
    actrange: np.ndarray
    actlimited: bool
    actearly: bool
    delay: float
    nsample: int
    rows: tuple[tuple[str, str, str, tuple[Source, ...]], ...]

    def text(self) -> str:
        """The explanation as a plain-text table (deterministic: nbval compares it)."""
        rows = [("field", "value", "meaning", "source")]
        rows += [(f, v, m, " · ".join(s.label for s in src)) for f, v, m, src in self.rows]
        widths = [max(len(r[k]) for r in rows) for k in range(3)]
        lines = [f"Actuator {self.actuator!r} (id {self.id}) reads as: {self.family}"]
        lines += ["  ".join(r[k].ljust(widths[k]) for k in range(3)) + "  " + r[3] for r in rows]
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        def links(sources: Sequence[Source]) -> str:
            return " · ".join(
                f'<a href="{html.escape(s.url)}" target="_blank">{html.escape(s.label)}</a>' if s.url
                else html.escape(s.label) for s in sources)

        left = ' style="text-align:left"'
        mono = ' style="text-align:left;font-family:monospace"'
        body = "".join(
            f"<tr><td{left}>{html.escape(f)}</td><td{mono}>{html.escape(v)}</td>"
            f"<td{left}>{html.escape(m)}</td><td{left}>{links(src)}</td></tr>"
            for f, v, m, src in self.rows)
        heads = "".join(f"<th{left}>{h}</th>" for h in ("field", "value", "meaning", "source"))
        title = f"Actuator {self.actuator!r} (id {self.id}) reads as: {self.family}"
        return (f'<div style="font-family:sans-serif;font-size:90%"><b>{html.escape(title)}</b>'
                f"<table><tr>{heads}</tr>{body}</table></div>")


def _named(values: np.ndarray, names: Sequence[str] | None) -> str:
    if values.size == 0:
        return "—"
    if names is None:
        return fmt(values)
    return ", ".join(f"{n}={fmt(float(v))}" for n, v in zip(names, values, strict=False))


def _headline(parameters: dict[str, float], most: int = 5) -> str:
    """`` kp=10, kv=1`` — the first ``most`` read-back parameters (all are in Explanation.parameters)."""
    if not parameters:
        return ""
    items = [f"{name}={fmt(value)}" for name, value in parameters.items()]
    return " " + ", ".join(items[:most]) + (", …" if len(items) > most else "")


def _range(low_high: np.ndarray, limited: bool) -> str:
    return f"[{fmt(float(low_high[0]))}, {fmt(float(low_high[1]))}]" + ("" if limited else " (not limited)")


def explain(model: mujoco.MjModel, actuator: str | int) -> Explanation:
    """Read back what actuator ``actuator`` (name or id) compiled to.

    Shortcuts (``motor``, ``position``, ``velocity``, ``intvelocity``, ``pid``,
    ``orientation``, ``dcmotor``, ...) are presets of ``general``: this shows the dynamics,
    gain and bias types and parameters they set, the control, activation and output blocks
    (addresses and counts), the transmission and its target, gear, and the three ranges with
    their limited flags.  Nothing is simulated.
    """
    __tracebackhide__ = True
    mujoco = _mj()
    i = _actuator_id(model, actuator)
    family = _family(model, i)
    dyn, gain, bias = (int(model.actuator_dyntype[i]), int(model.actuator_gaintype[i]),
                       int(model.actuator_biastype[i]))
    uadr, num = int(model.actuator_ctrladr[i]), int(model.actuator_ctrlnum[i])
    oadr, outnum = int(model.actuator_outadr[i]), int(model.actuator_outnum[i])
    trn = int(model.actuator_trntype[i])
    a, b = int(model.actuator_trnid[i, 0]), int(model.actuator_trnid[i, 1])
    objects = mujoco.mjtObj
    obj = {_TRN_JOINT: objects.mjOBJ_JOINT, _TRN_JOINTINPARENT: objects.mjOBJ_JOINT,
           _TRN_TENDON: objects.mjOBJ_TENDON, _TRN_BODY: objects.mjOBJ_BODY,
           _TRN_SO3: objects.mjOBJ_SITE if b >= 0 else objects.mjOBJ_JOINT}.get(trn, objects.mjOBJ_SITE)
    target = _name(model, obj, a)
    has_ref = trn in (_TRN_SITE, _TRN_SO3, _TRN_SLIDERCRANK)
    refsite = _name(model, objects.mjOBJ_SITE, b) if has_ref else ""
    gear = np.array(model.actuator_gear[oadr:oadr + outnum])
    scalar = trn in (_TRN_TENDON, _TRN_SLIDERCRANK, _TRN_BODY) or (
        trn in (_TRN_JOINT, _TRN_JOINTINPARENT) and model.jnt_type[a] in (_JNT_SLIDE, _JNT_HINGE))
    ball = trn in (_TRN_JOINT, _TRN_JOINTINPARENT) and model.jnt_type[a] == _JNT_BALL
    shown_gear = (fmt(float(gear[0, 0])) if scalar else fmt(gear[0, :3]) if ball
                  else "identity (one output per axis)" if trn == _TRN_SO3 else fmt(gear[0]))
    gnames, bnames, dnames = _GAINPRM.get(gain), _BIASPRM.get(bias), _DYNPRM.get(dyn)
    gainprm = _trimmed(model.actuator_gainprm[i], gnames)
    biasprm = _trimmed(model.actuator_biasprm[i], bnames)
    dynprm = _trimmed(model.actuator_dynprm[i], dnames)
    parameters = _readback(model, i, family)
    inputs = tuple(_input_names(model, i))
    ctrlrange = np.array(model.actuator_ctrlrange[uadr:uadr + num]).reshape(num, 2)
    ctrllimited = np.array(model.actuator_ctrllimited[uadr:uadr + num], dtype=bool)
    adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
    slots = _act_slots(model, i, family)

    ref = functools.partial(header, "mjmodel.h")
    shortcut = family.split(" ")[0]
    doc_label = {"motor": "actuator-motor", "position": "actuator-position", "velocity": "actuator-velocity",
                 "intvelocity": "actuator-intvelocity", "pid": "actuator-pid",
                 "orientation": "actuator-orientation", "dcmotor": "actuator-dcmotor",
                 "damper": "actuator-damper", "cylinder": "actuator-cylinder", "muscle": "actuator-muscle",
                 "adhesion": "actuator-adhesion"}.get(shortcut, "actuator-general")
    ranges = ", ".join(f"{name} {_range(r, bool(lim))}"
                       for name, r, lim in zip(inputs, ctrlrange, ctrllimited, strict=True)) or "—"
    blocks = f" ({', '.join(label for label, _, _ in slots)})" if slots else ""
    rows: list[tuple[str, str, str, tuple[Source, ...]]] = [
        ("reads as", family + _headline(parameters),
         "shortcuts are presets of general; inferred from the parameters", (doc("modeling", "CActShortcuts"),
                                                                            doc("XMLreference", doc_label))),
        ("dyntype", _DYN_NAMES[dyn] if dyn < len(_DYN_NAMES) else str(dyn), "activation dynamics",
         (ref("actuator_dyntype"),)),
        ("gaintype", _GAIN_NAMES[gain] if gain < len(_GAIN_NAMES) else str(gain), "gain of the force law",
         (ref("actuator_gaintype"),)),
        ("biastype", _BIAS_NAMES[bias] if bias < len(_BIAS_NAMES) else str(bias), "bias of the force law",
         (ref("actuator_biastype"),)),
        ("dynprm", _named(dynprm, dnames), "entries the dynamics read", (ref("actuator_dynprm"),)),
        ("gainprm", _named(gainprm, gnames), "entries the gain reads", (ref("actuator_gainprm"),)),
        ("biasprm", _named(biasprm, bnames), "entries the bias reads", (ref("actuator_biasprm"),)),
        ("ctrl block", f"ctrladr={uadr}, ctrlnum={num}, ctrlspec={int(model.actuator_ctrlspec[i])} "
                       f"({_spec_text(model, i)})", "slice of data.ctrl (nu in all)",
         (ref("actuator_ctrladr"), ref("actuator_ctrlspec"))),
        ("inputs", ", ".join(inputs) or "none", "data.ctrl[ctrladr + k], packed in this order",
         (header("mujoco.h", "mj_actuatorInputName"),)),
        ("act block", f"actadr={adr0}, actnum={actnum}{blocks}",
         "slice of data.act (na in all); -1: stateless", (ref("actuator_actadr"),)),
        ("output block", f"outadr={oadr}, outnum={outnum}",
         "slice of actuator_force/length/velocity (nout in all)", (ref("actuator_outadr"),)),
        ("transmission", _transmission_text(model, i), "where the force goes", (ref("actuator_trntype"),)),
        ("gear", shown_gear, "scales length, velocity and transmitted force", (ref("actuator_gear"),)),
        ("ctrlrange", ranges, "clamps the input (a local copy; data.ctrl keeps the request)",
         (ref("actuator_ctrlrange"), ref("actuator_ctrllimited"))),
        ("forcerange", _range(model.actuator_forcerange[i], bool(model.actuator_forcelimited[i]))
         + (" (on the norm)" if gain == _GAIN_SO3 else ""),
         "clamps the force output, before the transmission",
         (ref("actuator_forcerange"), ref("actuator_forcelimited"))),
        ("actrange", _range(model.actuator_actrange[i], bool(model.actuator_actlimited[i])),
         "clamps the activation when it is integrated",
         (ref("actuator_actrange"), ref("actuator_actlimited"))),
        ("actearly", str(bool(model.actuator_actearly[i])), "force uses the next activation",
         (ref("actuator_actearly"),)),
        ("delay", f"{fmt(float(model.actuator_delay[i]))} s, nsample={int(model.actuator_history[i, 0])}",
         "input read from the history buffer at t - delay", (ref("actuator_delay"), ref("actuator_history"))),
    ]
    return Explanation(
        actuator=_name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i), id=i, family=family,
        dyntype=rows[1][1], gaintype=rows[2][1], biastype=rows[3][1],
        gainprm=gainprm, biasprm=biasprm, dynprm=dynprm, parameters=parameters,
        ctrladr=uadr, ctrlnum=num, ctrlspec=int(model.actuator_ctrlspec[i]), inputs=inputs,
        actadr=adr0, actnum=actnum, outadr=oadr, outnum=outnum,
        trntype=_TRN_NAMES[trn] if trn < len(_TRN_NAMES) else str(trn), target=target, refsite=refsite,
        gear=gear, ctrlrange=ctrlrange, ctrllimited=ctrllimited,
        forcerange=np.array(model.actuator_forcerange[i]), forcelimited=bool(model.actuator_forcelimited[i]),
        actrange=np.array(model.actuator_actrange[i]), actlimited=bool(model.actuator_actlimited[i]),
        actearly=bool(model.actuator_actearly[i]), delay=float(model.actuator_delay[i]),
        nsample=int(model.actuator_history[i, 0]), rows=tuple(rows),
    )
