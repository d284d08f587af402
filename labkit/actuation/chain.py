"""Recompute ``mj_fwdActuation``'s stages for every actuator and check them against MuJoCo.

:func:`recompute` follows the engine's order (input, act_dot, force law, limits,
transmission) for all actuators at once, with the per-actuator laws of :mod:`.laws`;
:func:`verify` compares act_dot, actuator_force and qfrc_actuator with MuJoCo's arrays
to the tolerance of :mod:`.rounding`.  The two stages MuJoCo does not store, the input
(its local copy of the controls) and force_raw (the force law's output), are checked by
:func:`lifted_force`: MuJoCo itself, run on copies with every clamp and delay lifted and
labkit's input written as the request, must give the force_raw that MuJoCo computes with
only the output clamps lifted, and that is labkit's.  Every actuator of the model is recomputed, not only
the traced one: several actuators can act on one joint or tendon, and the final
``qfrc_actuator`` is checked as a whole.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..display import fmt
from ..errors import TraceMismatch
from . import laws
from .params import joint_dofs, mj, name, wrap_period
from .rounding import RTOL, agree

if TYPE_CHECKING:
    import mujoco


def outputs(model: mujoco.MjModel, i: int) -> slice:
    """Actuator ``i``'s slice of ``actuator_force``/``length``/``velocity`` (outnum entries).

    Example: ``data.actuator_force[outputs(model, i)]``.
    """
    return slice(int(model.actuator_outadr[i]), int(model.actuator_outadr[i] + model.actuator_outnum[i]))


@dataclass
class Chain:
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
    force_scaled: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (nout,) after tendon limits
    force_clamped: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (nout,) right after forcerange
    unsupported: dict[int, str] = field(default_factory=dict)  # actuator -> why not recomputed
    notes: dict[int, list[str]] = field(default_factory=dict)
    details: dict[int, list[tuple[str, Any, str]]] = field(default_factory=dict)
    bad_ctrl: bool = False

    def note(self, i: int, text: str) -> None:
        """Add a note to actuator ``i``'s trace.  Example: ``chain.note(0, "sleep is enabled")``."""
        self.notes.setdefault(i, []).append(text)

    def detail(self, i: int, label: str, value: Any, unit: str) -> None:
        """Add a labelled intermediate value to actuator ``i``'s trace.

        Example: ``chain.detail(0, "terminal voltage", 6.0, "V")``.
        """
        self.details.setdefault(i, []).append((label, value, unit))


def _read_input(model: mujoco.MjModel, d: mujoco.MjData) -> tuple[np.ndarray, list[int]]:
    """data.ctrl, with delayed actuators' blocks read from the history buffer at time - delay."""
    mujoco = mj()
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


def _group_disabled(model: mujoco.MjModel, i: int) -> bool:
    """Whether actuator ``i``'s group is disabled (option/actuatorgroupdisable)."""
    group = int(model.actuator_group[i])
    return bool(0 <= group <= 30 and int(model.opt.disableactuator) & (1 << group))


def recompute(model: mujoco.MjModel, d: mujoco.MjData) -> Chain:
    """Recompute mj_fwdActuation's stages for every actuator, from ``d`` after ``mj_forward``.

    Example: ``recompute(model, data).force`` (nout,) equals ``data.actuator_force`` to :data:`RTOL`.
    """
    mujoco = mj()
    dyns = mujoco.mjtDyn
    nu, nv, nout = model.nu, model.nv, model.nout
    moment = np.zeros((nout, nv))
    if nout and nv:
        mujoco.mju_sparse2dense(moment, d.actuator_moment, d.moment_rownnz, d.moment_rowadr,
                                d.moment_colind)
    chain = Chain(np.zeros(nu), np.zeros(nu), np.zeros(model.na), np.zeros(nout), np.zeros(nout),
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
    if np.any(~np.isfinite(ctrl) | (np.abs(ctrl) > mujoco.mjMAXVAL)):
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
        if dyn == dyns.mjDYN_INTEGRATOR:
            num = int(model.actuator_ctrlnum[i])
            a[last - num + 1:last + 1] = u[uadr:uadr + num]
        elif dyn in (dyns.mjDYN_FILTER, dyns.mjDYN_FILTEREXACT):
            a[last] = (u[uadr] - d.act[last]) / max(mujoco.mjMINVAL, float(dynprm[0]))
        elif dyn == dyns.mjDYN_MUSCLE:
            a[last] = mujoco.mju_muscleDynamics(float(u[uadr]), float(d.act[last]), dynprm[:3])
        elif dyn == dyns.mjDYN_PID:
            period, adr = wrap_period(model, i), adr0
            if dynprm[1] > 0:
                u[uadr], a[adr] = laws.slew(float(u[uadr]), float(d.act[adr]), float(dynprm[1]), h, period)
                adr += 1
            if gainprm[0] > 0:
                err = float(u[uadr]) - length
                if period > 0:
                    err -= period * laws.c_round(err / period)
                imax = float(dynprm[0])
                if imax > 0 and d.act[adr] >= imax:
                    err = min(err, 0.0)
                elif imax > 0 and d.act[adr] <= -imax:
                    err = max(err, 0.0)
                a[adr] = err
        elif dyn == dyns.mjDYN_DCMOTOR:
            laws.dcmotor_act_dot(model, d, i, u, chain)
        else:
            chain.unsupported[i] = "its dynamics are user-defined (mjcb_act_dyn)"
    chain.inputs = u.copy()

    # 3. force law, per actuator
    for i in range(model.nactuator):
        if model.actuator_plugin[i] >= 0:
            chain.unsupported[i] = "it is an actuator plugin"
        if i in chain.unsupported:
            continue
        if _group_disabled(model, i):
            chain.note(i, f"actuator group {int(model.actuator_group[i])} is disabled "
                          "(option/actuatorgroupdisable): force 0")
            continue
        laws.force_law(model, d, i, u, chain)
    for i in chain.unsupported:
        chain.force_raw[outputs(model, i)] = d.actuator_force[outputs(model, i)]

    # 4. tendon actuator-force limits, forcerange, dcmotor mechanical terms
    force = chain.force_raw.copy()
    _tendon_limits(model, force, chain)
    chain.force_scaled = force.copy()
    for i in range(model.nactuator):
        if not model.actuator_forcelimited[i] or i in chain.unsupported:
            continue
        low, high = model.actuator_forcerange[i]
        out = outputs(model, i)
        if int(model.actuator_gaintype[i]) == mujoco.mjtGain.mjGAIN_SO3:
            norm = float(np.linalg.norm(force[out]))
            if norm > high:
                force[out] *= high / norm
        else:
            force[out] = np.clip(force[out], low, high)
    chain.force_clamped = force.copy()
    for i in range(model.nactuator):
        if (int(model.actuator_biastype[i]) == mujoco.mjtBias.mjBIAS_DCMOTOR and i not in chain.unsupported
                and not _group_disabled(model, i)):
            force[model.actuator_outadr[i]] += laws.dcmotor_mechanical(model, d, i, chain)
    chain.force = force

    # 5. transmission, gravity compensation, joint actuator-force limits
    qfrc = moment.T @ force if nout else np.zeros(nv)
    gravity_on = not disabled & mujoco.mjtDisableBit.mjDSBL_GRAVITY and np.any(model.opt.gravity)
    if model.flg_gravcomp and gravity_on:
        for j in np.flatnonzero(model.jnt_actgravcomp):
            dofs = slice(int(model.jnt_dofadr[j]), int(model.jnt_dofadr[j] + joint_dofs(model, j)))
            chain.gravcomp[dofs] = d.qfrc_gravcomp[dofs]
    qfrc = qfrc + chain.gravcomp
    chain.qfrc_total = qfrc.copy()
    for j in np.flatnonzero(model.jnt_actfrclimited):
        dof = int(model.jnt_dofadr[j])
        qfrc[dof] = min(max(qfrc[dof], model.jnt_actfrcrange[j, 0]), model.jnt_actfrcrange[j, 1])
    chain.qfrc_actuator = qfrc
    return chain


def _tendon_limits(model: mujoco.MjModel, force: np.ndarray, chain: Chain) -> None:
    """Scale the forces of actuators on an actuatorfrcrange-limited tendon so their sum fits the range."""
    tendon = mj().mjtTrn.mjTRN_TENDON
    on_tendon = [i for i in range(model.nactuator) if int(model.actuator_trntype[i]) == tendon
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


# ---------------------------------------------------------------------------------------
# cross-checks


def _mismatch(stage: str, what: str, ours: Any, theirs: Any, array: str, hint: str) -> TraceMismatch:
    return TraceMismatch(
        f"stage {stage!r} of {what}: labkit recomputed {fmt(ours, 12)}, but MuJoCo's {array} holds "
        f"{fmt(theirs, 12)} (tolerance {RTOL:g} relative).\n  {hint}"
    )


def lifted_force(model: mujoco.MjModel, d: mujoco.MjData, chain: Chain,
                 feed_input: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's own force law output and act_dot: ``(force_raw (nout,), act_dot (na,))``.

    ``mj_forward`` runs on copies of ``model`` and ``d`` with the tendons' ``actuatorfrcrange``
    and the actuators' ``forcerange`` lifted, and no control callback (``d.ctrl`` is what the
    callback wrote); the dcmotor's cogging and friction, which come after ``forcerange``, are
    taken off again.  With ``feed_input``, ``ctrlrange`` and delays are lifted too and
    ``chain.ctrl`` (labkit's delayed and clamped input) is written as the request: MuJoCo then
    evaluates its force law on labkit's input.

    Example: ``lifted_force(model, data, recompute(model, data))[0]`` ≈ ``chain.force_raw``.
    """
    mujoco = mj()
    lifted, work = copy.copy(model), copy.copy(d)
    lifted.actuator_forcelimited[:] = 0
    lifted.tendon_actfrclimited[:] = 0
    if feed_input:
        lifted.actuator_ctrllimited[:] = 0
        lifted.actuator_delay[:] = 0
        work.ctrl[:] = chain.ctrl
    previous = mujoco.get_mjcb_control()
    mujoco.set_mjcb_control(None)                         # d.ctrl already holds what the callback wrote
    try:
        mujoco.mj_forward(lifted, work)
    finally:
        mujoco.set_mjcb_control(previous)
    after_forcerange = chain.force - chain.force_clamped if chain.force_clamped.size else 0.0
    return np.array(work.actuator_force) - after_forcerange, np.array(work.act_dot)


def verify(model: mujoco.MjModel, d: mujoco.MjData, chain: Chain) -> None:
    """Compare act_dot, actuator_force and qfrc_actuator of every actuator with MuJoCo's arrays,
    then force_raw and the input with :func:`lifted_force`.

    Raises :class:`TraceMismatch` naming the first stage that differs by more than :func:`tolerance`.
    Example: ``verify(model, data, recompute(model, data))``.
    """
    __tracebackhide__ = True
    mujoco = mj()
    hint = ("Either the model uses a feature labkit does not model, or MuJoCo's behaviour changed: "
            "read mj_fwdActuation (engine_forward.c) at the installed version.")
    if int(model.opt.disableflags) & mujoco.mjtDisableBit.mjDSBL_ACTUATION:
        return
    for i in range(model.nactuator):
        if i in chain.unsupported:
            continue
        what = f"actuator {name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i)!r} (id {i})"
        adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
        if adr0 >= 0:
            acts = slice(adr0, adr0 + actnum)
            if not agree(chain.act_dot[acts], d.act_dot[acts]).all():
                raise _mismatch("act_dot", what, chain.act_dot[acts], d.act_dot[acts],
                                f"data.act_dot[{adr0}:{adr0 + actnum}]", hint)
        out = outputs(model, i)
        if not agree(chain.force[out], d.actuator_force[out]).all():
            raise _mismatch("force", what, chain.force[out], d.actuator_force[out],
                            f"data.actuator_force[{out.start}:{out.stop}]", hint)
    ok = agree(chain.qfrc_actuator, d.qfrc_actuator)
    if not ok.all():
        dofs = np.flatnonzero(~ok)
        raise _mismatch("qfrc_actuator", f"DOFs {dofs.tolist()}", chain.qfrc_actuator[dofs],
                        d.qfrc_actuator[dofs], "data.qfrc_actuator", hint)
    # the stages MuJoCo does not store: force_raw is its force with the output clamps lifted; the
    # input is right if MuJoCo, fed labkit's input with every clamp and delay lifted, gives that force
    raw, _ = lifted_force(model, d, chain)
    fed, fed_act_dot = lifted_force(model, d, chain, feed_input=True)
    for i in range(model.nactuator):
        if i in chain.unsupported:
            continue
        what = f"actuator {name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i)!r} (id {i})"
        out = outputs(model, i)
        if not agree(chain.force_raw[out], raw[out]).all():
            raise _mismatch("force_raw", what, chain.force_raw[out], raw[out],
                            "actuator_force with forcerange and tendon limits lifted", hint)
        adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
        acts = slice(adr0, adr0 + actnum) if adr0 >= 0 else slice(0, 0)
        if not (agree(fed[out], raw[out]).all() and agree(fed_act_dot[acts], d.act_dot[acts]).all()):
            raise TraceMismatch(
                f"stage 'input' of {what}: fed labkit's input {fmt(chain.ctrl, 12)} with every clamp and "
                f"delay lifted, MuJoCo gives force {fmt(fed[out], 12)} and act_dot "
                f"{fmt(fed_act_dot[acts], 12)}, not its own {fmt(raw[out], 12)} and "
                f"{fmt(d.act_dot[acts], 12)}.\n  {hint}")
