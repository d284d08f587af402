"""``labkit.explain``: what an actuator shortcut (``position``, ``pid``, ...) compiled to.

Shortcuts are presets of ``general``: the compiled model keeps only types and parameters.
:func:`explain` reads them back (with MuJoCo's enums, through :mod:`.params`) as a table
of fields, values, meanings and sources.  Nothing is simulated.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..display import fmt
from ..sources import Source, doc, header
from .params import (
    act_slots,
    actuator_id,
    family,
    input_names,
    mj,
    name,
    prm_names,
    spec_text,
    transmission_text,
    type_name,
)
from .trace import table_html, table_text

if TYPE_CHECKING:
    import mujoco

_COLUMNS = ("field", "value", "meaning", "source")
_SHORTCUTS = ("motor", "position", "velocity", "intvelocity", "pid", "orientation", "dcmotor", "damper",
              "cylinder", "muscle", "adhesion")


def _trimmed(values: np.ndarray, names: Sequence[str] | None) -> np.ndarray:
    """The entries the engine reads (``names``), or for user types the values up to the last nonzero."""
    if names is not None:
        return np.array(values[:len(names)])
    nonzero = np.flatnonzero(values)
    return np.array(values[:nonzero[-1] + 1]) if nonzero.size else np.zeros(0)


def _names(kind: str, value: int) -> tuple[str, ...]:
    return prm_names(kind, value) or ()


def _readback(model: mujoco.MjModel, i: int, kind: str) -> dict[str, float]:
    """The shortcut attributes (kp, kv, ...) that the compiled parameters correspond to."""
    mujoco = mj()
    gains, dyns = mujoco.mjtGain, mujoco.mjtDyn
    g, b, p = (model.actuator_gainprm[i], model.actuator_biasprm[i], model.actuator_dynprm[i])
    dyn = int(model.actuator_dyntype[i])
    if kind.startswith("motor") or kind == "adhesion":
        return {"gain": float(g[0])}
    if kind.startswith("position"):
        timeconst = float(p[0]) if dyn == dyns.mjDYN_FILTEREXACT else 0.0
        return {"kp": float(g[0]), "kv": float(-b[2]), "timeconst": timeconst}
    if kind == "velocity":
        return {"kv": float(g[0])}
    if kind == "intvelocity":
        return {"kp": float(g[0]), "kv": float(-b[2])}
    if kind == "pid":
        stateful = dyn == dyns.mjDYN_PID
        return {"kp": float(-b[1]), "kv": float(-b[2]), "ki": float(g[0]),
                "imax": float(p[0]) if stateful else 0.0, "slewmax": float(p[1]) if stateful else 0.0}
    if kind.startswith("orientation"):
        return {"kp": float(g[0]), "kv": float(-b[2])}
    if kind == "damper":
        return {"kv": float(-g[2])}
    if kind == "cylinder":
        return {"area": float(g[0]), "timeconst": float(p[0]), "bias0": float(b[0]), "bias1": float(b[1]),
                "bias2": float(b[2])}
    if kind == "dcmotor":
        read = dict(zip(_names("gain", gains.mjGAIN_DCMOTOR), g, strict=False))
        read.update(zip(_names("dyn", dyns.mjDYN_DCMOTOR), p, strict=False))
        read.update(zip(_names("bias", mujoco.mjtBias.mjBIAS_DCMOTOR), b, strict=False))
        return {k: float(v) for k, v in read.items() if v or k in ("R", "K")}
    if kind == "muscle":
        return {**{k: float(v) for k, v in zip(_names("gain", gains.mjGAIN_MUSCLE), g, strict=False)},
                **{k: float(v) for k, v in zip(_names("dyn", dyns.mjDYN_MUSCLE), p, strict=False)}}
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

    def _title(self) -> str:
        return f"Actuator {self.actuator!r} (id {self.id}) reads as: {self.family}"

    def text(self) -> str:
        """The explanation as a plain-text table (deterministic: nbval compares it).

        Example: ``print(labkit.explain(model, "elbow").text())``.
        """
        rows = [_COLUMNS] + [(f, v, m, " · ".join(s.label for s in src)) for f, v, m, src in self.rows]
        return table_text([self._title()], rows)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        mono = ' style="text-align:left;font-family:monospace"'
        return table_html(self._title(), _COLUMNS, self.rows, mono)


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
    items = [f"{key}={fmt(value)}" for key, value in parameters.items()]
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

    Example: ``labkit.explain(model, "elbow").parameters`` → ``{"kp": 10.0, "kv": 1.0, "timeconst": 0.0}``.
    """
    __tracebackhide__ = True
    mujoco = mj()
    trns, objects = mujoco.mjtTrn, mujoco.mjtObj
    i = actuator_id(model, actuator)
    kind = family(model, i)
    dyn, gain, bias = (int(model.actuator_dyntype[i]), int(model.actuator_gaintype[i]),
                       int(model.actuator_biastype[i]))
    uadr, num = int(model.actuator_ctrladr[i]), int(model.actuator_ctrlnum[i])
    oadr, outnum = int(model.actuator_outadr[i]), int(model.actuator_outnum[i])
    trn = int(model.actuator_trntype[i])
    a, b = int(model.actuator_trnid[i, 0]), int(model.actuator_trnid[i, 1])
    on_joint = trn in (trns.mjTRN_JOINT, trns.mjTRN_JOINTINPARENT)
    obj = {trns.mjTRN_JOINT: objects.mjOBJ_JOINT, trns.mjTRN_JOINTINPARENT: objects.mjOBJ_JOINT,
           trns.mjTRN_TENDON: objects.mjOBJ_TENDON, trns.mjTRN_BODY: objects.mjOBJ_BODY,
           trns.mjTRN_SO3: objects.mjOBJ_SITE if b >= 0 else objects.mjOBJ_JOINT}.get(trn, objects.mjOBJ_SITE)
    target = name(model, obj, a)
    has_ref = trn in (trns.mjTRN_SITE, trns.mjTRN_SO3, trns.mjTRN_SLIDERCRANK)
    refsite = name(model, objects.mjOBJ_SITE, b) if has_ref else ""
    gear = np.array(model.actuator_gear[oadr:oadr + outnum])
    joint_type = int(model.jnt_type[a]) if on_joint else -1
    scalar = trn in (trns.mjTRN_TENDON, trns.mjTRN_SLIDERCRANK, trns.mjTRN_BODY) or (
        joint_type in (mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE))
    ball = joint_type == mujoco.mjtJoint.mjJNT_BALL
    shown_gear = (fmt(float(gear[0, 0])) if scalar else fmt(gear[0, :3]) if ball
                  else "identity (one output per axis)" if trn == trns.mjTRN_SO3 else fmt(gear[0]))
    gnames, bnames, dnames = prm_names("gain", gain), prm_names("bias", bias), prm_names("dyn", dyn)
    gainprm = _trimmed(model.actuator_gainprm[i], gnames)
    biasprm = _trimmed(model.actuator_biasprm[i], bnames)
    dynprm = _trimmed(model.actuator_dynprm[i], dnames)
    parameters = _readback(model, i, kind)
    inputs = tuple(input_names(model, i))
    ctrlrange = np.array(model.actuator_ctrlrange[uadr:uadr + num]).reshape(num, 2)
    ctrllimited = np.array(model.actuator_ctrllimited[uadr:uadr + num], dtype=bool)
    adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
    slots = act_slots(model, i, kind)

    ref = functools.partial(header, "mjmodel.h")
    shortcut = kind.split(" ")[0]
    doc_label = f"actuator-{shortcut if shortcut in _SHORTCUTS else 'general'}"
    ranges = ", ".join(f"{label} {_range(r, bool(lim))}"
                       for label, r, lim in zip(inputs, ctrlrange, ctrllimited, strict=True)) or "—"
    blocks = f" ({', '.join(label for label, _, _ in slots)})" if slots else ""
    rows: list[tuple[str, str, str, tuple[Source, ...]]] = [
        ("reads as", kind + _headline(parameters),
         "shortcuts are presets of general; inferred from the parameters", (doc("modeling", "CActShortcuts"),
                                                                            doc("XMLreference", doc_label))),
        ("dyntype", type_name(mujoco.mjtDyn, dyn), "activation dynamics", (ref("actuator_dyntype"),)),
        ("gaintype", type_name(mujoco.mjtGain, gain), "gain of the force law", (ref("actuator_gaintype"),)),
        ("biastype", type_name(mujoco.mjtBias, bias), "bias of the force law", (ref("actuator_biastype"),)),
        ("dynprm", _named(dynprm, dnames), "entries the dynamics read", (ref("actuator_dynprm"),)),
        ("gainprm", _named(gainprm, gnames), "entries the gain reads", (ref("actuator_gainprm"),)),
        ("biasprm", _named(biasprm, bnames), "entries the bias reads", (ref("actuator_biasprm"),)),
        ("ctrl block", f"ctrladr={uadr}, ctrlnum={num}, ctrlspec={int(model.actuator_ctrlspec[i])} "
                       f"({spec_text(model, i)})", "slice of data.ctrl (nu in all)",
         (ref("actuator_ctrladr"), ref("actuator_ctrlspec"))),
        ("inputs", ", ".join(inputs) or "none", "data.ctrl[ctrladr + k], packed in this order",
         (header("mujoco.h", "mj_actuatorInputName"),)),
        ("act block", f"actadr={adr0}, actnum={actnum}{blocks}",
         "slice of data.act (na in all); -1: stateless", (ref("actuator_actadr"),)),
        ("output block", f"outadr={oadr}, outnum={outnum}",
         "slice of actuator_force/length/velocity (nout in all)", (ref("actuator_outadr"),)),
        ("transmission", transmission_text(model, i), "where the force goes", (ref("actuator_trntype"),)),
        ("gear", shown_gear, "scales length, velocity and transmitted force", (ref("actuator_gear"),)),
        ("ctrlrange", ranges, "clamps the input (a local copy; data.ctrl keeps the request)",
         (ref("actuator_ctrlrange"), ref("actuator_ctrllimited"))),
        ("forcerange", _range(model.actuator_forcerange[i], bool(model.actuator_forcelimited[i]))
         + (" (on the norm)" if gain == mujoco.mjtGain.mjGAIN_SO3 else ""),
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
        actuator=name(model, objects.mjOBJ_ACTUATOR, i), id=i, family=kind,
        dyntype=rows[1][1], gaintype=rows[2][1], biastype=rows[3][1],
        gainprm=gainprm, biasprm=biasprm, dynprm=dynprm, parameters=parameters,
        ctrladr=uadr, ctrlnum=num, ctrlspec=int(model.actuator_ctrlspec[i]), inputs=inputs,
        actadr=adr0, actnum=actnum, outadr=oadr, outnum=outnum,
        trntype=type_name(trns, trn), target=target, refsite=refsite,
        gear=gear, ctrlrange=ctrlrange, ctrllimited=ctrllimited,
        forcerange=np.array(model.actuator_forcerange[i]), forcelimited=bool(model.actuator_forcelimited[i]),
        actrange=np.array(model.actuator_actrange[i]), actlimited=bool(model.actuator_actlimited[i]),
        actearly=bool(model.actuator_actearly[i]), delay=float(model.actuator_delay[i]),
        nsample=int(model.actuator_history[i, 0]), rows=tuple(rows),
    )
