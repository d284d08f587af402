"""``labkit.trace``: one actuator's force chain as a table of stages, in text and HTML.

:func:`trace` takes the stages that :mod:`labkit.actuation.chain` recomputed and checked,
and lays out those of one actuator: a :class:`Stage` per row, then notes on every clamp,
limit and neighbour that changed a value on its way.  Both renderings are deterministic (nbval
compares them); the table helpers here serve :mod:`labkit.actuation.explain` too.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..display import clean, fmt, links
from ..sources import Source, engine, header
from .chain import outputs, recompute, verify
from .params import (
    FORCE,
    LENGTH,
    QFRC,
    VELOCITY,
    act_slots,
    actuator_id,
    dof_names,
    family,
    input_names,
    input_units,
    joined,
    mj,
    name,
    transmission_text,
)
from .rounding import RTOL, agree

if TYPE_CHECKING:
    import mujoco

_LEFT = ' style="text-align:left"'


def table_text(head: Sequence[str], rows: Sequence[tuple[str, str, str, str]],
               tail: Sequence[str] = ()) -> str:
    """Lines ``head``, then ``rows`` with their first three columns padded to a common width, then ``tail``.

    Example: ``table_text(["title"], [("stage", "value", "unit", "source")])``.
    """
    widths = [max(len(r[k]) for r in rows) for k in range(3)]
    lines = [*head, *("  ".join(r[k].ljust(widths[k]) for k in range(3)) + "  " + r[3] for r in rows), *tail]
    return "\n".join(line.rstrip() for line in lines)


def table_html(title: str, columns: Sequence[str], rows: Iterable[tuple[str, str, str, Sequence[Source]]],
               mono: str, before: str = "", after: str = "") -> str:
    """An HTML table under a bold ``title``: the second column in monospace (style attribute
    ``mono``), the fourth the sources' links; ``before``/``after`` go around the table.

    Example: ``table_html("Actuator 'm'", ("field", "value", "meaning", "source"), [], _LEFT)``.
    """
    heads = "".join(f"<th{_LEFT}>{column}</th>" for column in columns)
    body = "".join(
        f"<tr><td{_LEFT}>{html.escape(a)}</td><td{mono}>{html.escape(b)}</td><td{_LEFT}>{html.escape(c)}</td>"
        f"<td{_LEFT}>{links(sources)}</td></tr>" for a, b, c, sources in rows)
    return (f'<div style="font-family:sans-serif;font-size:90%"><b>{html.escape(title)}</b>{before}'
            f"<table><tr>{heads}</tr>{body}</table>{after}</div>")


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
        """The value as text: labelled entries (``pos=0.5, vel=0``) where labels are known.

        Example: ``trace(model, data, "p").stage("request").shown()`` → ``"pos=0.5, vel=0"``.
        """
        values = clean(self.value).reshape(-1)  # round-off differs between machines: shown as 0
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
        input (k,)     effective input: history read (delay), ctrlrange clamp, slew limit (not
                       stored by MuJoCo: fed to a copy with every clamp and delay lifted, it
                       must give MuJoCo's force_raw and act_dot, which checks it wherever the
                       force law or the activation reads it)
        act (a,)       data.act[actadr:actadr+a]; empty when stateless
        act_dot (a,)   recomputed; checked against data.act_dot
        length (o,), velocity (o,)   data.actuator_length/velocity (transmission space)
        force_raw (o,) force law output before tendon limits and forcerange (not stored by
                       MuJoCo: checked against actuator_force on a copy of the model with
                       forcerange and tendon limits lifted)
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
        """The row called ``name`` (``"request"``, ``"force"``, ...).

        Example: ``labkit.trace(model, data, "elbow").stage("force").value``.
        """
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
            lines.append(f"✔ checked against MuJoCo (rtol {RTOL:g}): act_dot, force, qfrc_actuator against "
                         "its arrays; force_raw against its force with forcerange lifted; input by feeding "
                         "it in unclamped")
        else:
            lines.append("⚠ this actuator's force law was not recomputed (see above); the rest was checked")
        return lines

    def text(self) -> str:
        """The trace as a plain-text table (deterministic: nbval compares it).

        Example: ``print(labkit.trace(model, data, "elbow").text())``.
        """
        rows = [("stage", "value", "unit", "source")]
        rows += [(s.name, s.shown(), s.unit, " · ".join(src.label for src in s.sources)) for s in self.stages]
        head = [self._title()] + (["DOFs driven: " + ", ".join(self.dof_names)] if len(self.dofs) else [])
        return table_text(head, rows, ["  " + line for line in self._footer()])

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        dofs = (f"<div>DOFs driven: {html.escape(', '.join(self.dof_names))}</div>" if len(self.dofs) else "")
        footer = "".join(f"<div>{html.escape(line)}</div>" for line in self._footer())
        return table_html(self._title(), ("stage", "value", "unit", "source"),
                          ((s.name, s.shown(), s.unit, s.sources) for s in self.stages),
                          ' style="font-family:monospace;text-align:left"', before=dofs,
                          after=f'<div style="color:#555">{footer}</div>')


def trace(model: mujoco.MjModel, data: mujoco.MjData, actuator: str | int) -> Trace:
    """Trace actuator ``actuator`` (name or id) from ctrl to generalized force.

    Call it after ``mj_forward`` or ``mj_step``: it runs ``mj_forward`` on a *copy* of
    ``data`` (``data`` itself is not modified), recomputes every stage of every actuator
    from the model's parameters and the copy's transmission lengths, velocities and moments,
    and raises :class:`~labkit.actuation.chain.TraceMismatch` where a stage disagrees with
    MuJoCo's own array (``act_dot``, ``actuator_force``, ``qfrc_actuator``) or, for the
    stages MuJoCo does not store, with MuJoCo run on copies: ``force_raw`` with ``forcerange``
    and tendon limits lifted, ``input`` fed as the request with every clamp and delay lifted.
    ``request``, ``act``, ``length`` and ``velocity`` are MuJoCo's own arrays, read, not recomputed.  See
    :class:`Trace` for the stages, their shapes and units.  A control callback
    (``mjcb_control``) installed globally runs in that ``mj_forward`` too, as it would in
    the next step.

    Example: ``labkit.trace(model, data, "elbow")`` shows the table; ``.force`` is (outnum,).
    """
    __tracebackhide__ = True
    mujoco = mj()
    i = actuator_id(model, actuator)
    work = copy.copy(data)
    mujoco.mj_forward(model, work)
    chain = recompute(model, work)
    verify(model, work, chain)

    kind = family(model, i)
    uadr, num = int(model.actuator_ctrladr[i]), int(model.actuator_ctrlnum[i])
    adr0, actnum = int(model.actuator_actadr[i]), int(model.actuator_actnum[i])
    oadr, outnum = int(model.actuator_outadr[i]), int(model.actuator_outnum[i])
    ins, outs = slice(uadr, uadr + num), outputs(model, i)
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
    clamping = not int(model.opt.disableflags) & mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL and not chain.bad_ctrl
    clamped = [k for k in range(num) if clamping and model.actuator_ctrllimited[uadr + k]
               and not agree(chain.ctrl[uadr + k], request[k]) and not model.actuator_delay[i]]
    if clamped:
        notes.append(f"ctrlrange clamps a local copy: data.ctrl keeps the request {fmt(request)}, the force "
                     f"law reads {fmt(chain.ctrl[ins])}")
    if not agree(chain.inputs[ins], chain.ctrl[ins]).all():
        notes.append(f"slew limiting: clamped input {fmt(chain.ctrl[ins])} → effective {fmt(effective)}")
    raw = chain.force_raw[outs]
    clamped_force = chain.force_clamped[outs] if chain.force_clamped.size else force
    scaled = chain.force_scaled[outs] if chain.force_scaled.size else raw
    if model.actuator_forcelimited[i] and not agree(scaled, clamped_force).all():
        low, high = model.actuator_forcerange[i]
        so3 = int(model.actuator_gaintype[i]) == mujoco.mjtGain.mjGAIN_SO3
        what, before = ("the norm of force_raw" if so3 else "force_raw"), raw
        if not agree(scaled, raw).all():
            what, before = "the tendon-scaled force", scaled
        after = (", then the dcmotor's cogging and friction are added"
                 if int(model.actuator_biastype[i]) == mujoco.mjtBias.mjBIAS_DCMOTOR else "")
        notes.append(f"forcerange [{fmt(low)}, {fmt(high)}] clamps {what}: {fmt(before)} → "
                     f"{fmt(clamped_force)}{after}")
    own = qfrc[dofs]
    others = chain.qfrc_total[dofs] - own - chain.gravcomp[dofs]
    if not agree(others, np.zeros_like(others)).all():
        notes.append(f"other actuators add {fmt(others)} at these DOFs")
    if np.any(chain.gravcomp[dofs]):
        notes.append(f"actuator-side gravity compensation adds {fmt(chain.gravcomp[dofs])} "
                     "(data.qfrc_gravcomp)")
    for j in np.flatnonzero(model.jnt_actfrclimited):
        dof = int(model.jnt_dofadr[j])
        total, final = chain.qfrc_total[dof], chain.qfrc_actuator[dof]
        if dof in dofs and not agree(total, final):
            low, high = model.jnt_actfrcrange[j]
            joint = name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
            notes.append(f"joint {joint!r} actuatorfrcrange [{fmt(low)}, {fmt(high)}] clamps the summed "
                         f"actuator force at dof {dof}: {fmt(total)} → {fmt(final)}")
    if np.any(model.actuator_damping[i]) or model.actuator_armature[i]:
        notes.append("this actuator's damping/armature act on its joint or tendon as passive force and "
                     "inertia (×gear², in qfrc_passive and the mass matrix), not in qfrc_actuator")
    if i in chain.unsupported:
        notes.append(f"labkit cannot recompute this actuator: {chain.unsupported[i]}; force is MuJoCo's")
    fresh = bool(agree(data.actuator_force, work.actuator_force).all()
                 and agree(data.qfrc_actuator, work.qfrc_actuator).all())
    if not fresh:
        notes.append("your data.actuator_force/qfrc_actuator differ from this state's: they were "
                     "computed before the last mj_step (or before ctrl/qpos changed); this trace is of "
                     "the current state")

    names = input_names(model, i)
    in_unit = joined(input_units(model, i, kind), names)
    slots = act_slots(model, i, kind)
    act_labels = tuple(label for label, _, _ in slots)
    act_unit = joined([unit for _, unit, _ in slots], act_labels)
    dot_unit = joined([rate for _, _, rate in slots], act_labels)
    out_unit = "N·m (child frame)" if kind.startswith("orientation") else FORCE
    fwd = engine("engine_forward.c", "mj_fwdActuation")
    stages = (
        Stage("request", request, in_unit or "no inputs",
              (header("mjdata.h", "ctrl"), header("mjmodel.h", "actuator_ctrladr")), "read from data.ctrl",
              tuple(names)),
        Stage("input", effective, in_unit or "no inputs",
              (fwd, header("mjmodel.h", "actuator_ctrlrange"))
              + ((header("mujoco.h", "mj_readCtrl"),) if model.actuator_delay[i] else ()),
              "recomputed (MuJoCo's local copy is not stored); checked by feeding it, every clamp and delay "
              "lifted, to a copy: MuJoCo must give the same force_raw and act_dot",
              tuple(names)),
        Stage("act", np.array(work.act[acts]), act_unit or "stateless",
              (header("mjdata.h", "act"), header("mjmodel.h", "actuator_actadr")), "read from data.act",
              act_labels),
        Stage("act_dot", act_dot, dot_unit or "stateless",
              (header("mjdata.h", "act_dot"), fwd), "checked against data.act_dot", act_labels),
        Stage("length", np.array(work.actuator_length[outs]), LENGTH,
              (header("mjdata.h", "actuator_length"), engine("engine_core_smooth.c", "mj_transmission")),
              "read from data"),
        Stage("velocity", np.array(work.actuator_velocity[outs]), VELOCITY,
              (header("mjdata.h", "actuator_velocity"),), "read from data"),
        Stage("force_raw", raw, out_unit, (fwd, header("mjmodel.h", "actuator_gainprm"),
                                           header("mjmodel.h", "actuator_biasprm")),
              "recomputed (not stored by MuJoCo); checked against MuJoCo's actuator_force on a copy with "
              "forcerange and tendon limits lifted"),
        Stage("force", force, out_unit, (header("mjdata.h", "actuator_force"),
                                         header("mjmodel.h", "actuator_forcerange")),
              f"checked against data.actuator_force[{oadr}:{oadr + outnum}]"),
        Stage("qfrc", own, QFRC, (engine("engine_core_smooth.c", "mj_transmission"),
                                  header("mjdata.h", "actuator_moment")),
              "momentᵀ·force; checked through qfrc_actuator"),
        Stage("qfrc_actuator", np.array(work.qfrc_actuator[dofs]), QFRC,
              (header("mjdata.h", "qfrc_actuator"), header("mjmodel.h", "jnt_actfrcrange")),
              "checked against data.qfrc_actuator"),
    )
    return Trace(
        actuator=name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, i), id=i, family=kind,
        transmission=transmission_text(model, i), time=float(work.time),
        request=request, input=np.array(effective), act=np.array(work.act[acts]),
        act_dot=act_dot, length=np.array(work.actuator_length[outs]),
        velocity=np.array(work.actuator_velocity[outs]), force_raw=np.array(raw), force=np.array(force),
        qfrc=qfrc, qfrc_actuator=np.array(work.qfrc_actuator[dofs]), dofs=dofs,
        dof_names=dof_names(model, dofs), stages=stages, details=tuple(chain.details.get(i, [])),
        notes=tuple(notes), verified=i not in chain.unsupported, fresh=fresh,
    )
