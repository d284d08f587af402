"""Checkers of chapter 04 (actuators: limits, state and timing), and the models and control
loop they share with the chapter's lessons.

Exercise 4.1 builds :data:`HIP_XML` with the learner's joint attributes; 4.2 runs the
runaway servo of :data:`RUNAWAY_XML` with the learner's ``actrange``; 4.3 and 4.4 ask for
code, so their answers are records made by a probe (:func:`probe_ctrl_index`,
:func:`probe_controller`) that runs the learner's function in the learner's kernel.  The
checkers see only those records: 4.3 checks every returned index against the compiled
layouts, 4.4 replays the recorded closed loop with MuJoCo and measures the replay.
"""

from __future__ import annotations

import base64
import binascii
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import quoteattr

import mujoco
import numpy as np

from ..actuation import trace
from ..display import fmt
from ..models import ModelError, load, model_path
from ..recording import Recording, activation, record
from ..sim import control_callback, mujoco_warnings
from .answers import BOOLEAN, NUMBER, STRING, AnswerError, array, recorded
from .core import Exercise, ExerciseFailed, checker


def _servo_signals(model: mujoco.MjModel, data: mujoco.MjData) -> dict[str, np.ndarray]:
    """The push-and-reverse signals: the servo's setpoint (its activation) and the hinge angle, rad."""
    return {"setpoint": activation(model, data, "servo"), "hinge": data.joint("hinge").qpos}

__all__ = [
    "COUNTER_XML",
    "HIP_XML",
    "KI",
    "KP",
    "KV",
    "LAYOUT_XML",
    "LOAD",
    "PID_XML",
    "QUERIES",
    "RUNAWAY_XML",
    "SECONDS",
    "TARGET",
    "THIRD_XML",
    "extreme_torques",
    "owner",
    "probe_controller",
    "probe_ctrl_index",
    "push_and_reverse",
    "run_pi",
]

# -- Exercise 4.1: several actuators, one joint ---------------------------------------------

HIP_XML = """
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body><joint name="hip" axis="0 0 1" {hip_attrs}/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" mass="1"/></body>
  </worldbody>
  <actuator>
    <motor name="drive" joint="hip" gear="3" ctrlrange="-1 1" forcerange="-1 1"/>
    <position name="hold" joint="hip" kp="5" ctrlrange="-1 1" forcerange="-1 1"/>
  </actuator>
</mujoco>"""
"""Exercise 4.1's hip: a geared drive and a position servo on one hinge, each with
``forcerange="-1 1"``; ``{hip_attrs}`` is where the learner's joint attributes go."""

HIP_LIMIT = 2.5  # N·m: what the physical motor at the hip can deliver


def _joint_attributes(attrs: str) -> str:
    """``attrs`` re-written as XML attributes of one element, or ValueError: a string that
    is anything but ``name="value"`` pairs (a closing tag, an element, an include) is refused."""
    try:
        element = ET.fromstring(f"<joint {attrs}/>")
    except ET.ParseError as exc:
        raise ValueError(f"{attrs!r} is not a list of XML attributes (name=\"value\" ...): {exc}") from None
    return " ".join(f"{key}={quoteattr(value)}" for key, value in element.attrib.items())


def extreme_torques(attrs: str = "") -> np.ndarray:
    """The hip of :data:`HIP_XML` with joint attributes ``attrs``, at qpos = 0, for each corner
    of the control box (±1, ±1): rows ``(qfrc_actuator [N·m], drive force [N·m], hold force
    [N·m])``, shape (4, 3).  Raises ValueError (not attributes) or ModelError (no model)."""
    hip, hip_data = load(HIP_XML.format(hip_attrs=_joint_attributes(attrs)))
    rows = []
    for corner in [(-1, -1), (-1, 1), (1, -1), (1, 1)]:
        hip_data.ctrl[:] = corner
        mujoco.mj_forward(hip, hip_data)
        rows.append((hip_data.qfrc_actuator[0], *hip_data.actuator_force))
    return np.array(rows)


@checker("4.1", "Several actuators, one joint", points=3,
         answers={"is_bug": BOOLEAN, "max_total": NUMBER, "hip_attrs": STRING})
def _several_actuators(ex: Exercise) -> None:
    free = extreme_torques("")
    ex.equal("is_bug", False,
             hint="follow the chain: forcerange acts before the gear, and the joint sums all actuators")
    ex.close("max_total", np.abs(free[:, 0]).max(), rtol=1e-6, unit="N·m",
             hint="the drive's output is multiplied by its gear; then both actuators are added",
             mistakes={1.0: "that is one actuator's forcerange, before the gear",
                       2.0: "that adds the two forceranges but forgets the drive's gear of 3",
                       3.0: "that is the drive alone: the servo adds its own clamped output"})
    requirements = ("the joint receives at most 2.5 N·m, and the full 2.5 N·m is still available",
                    "each actuator's own output (actuator_force) is unchanged")
    try:
        limited = extreme_torques(ex.value("hip_attrs"))
    except ExerciseFailed as exc:                  # missing, or not a string
        problem = str(exc)
    except ValueError as exc:                      # not attributes, or no model (ModelError)
        problem = f"the hip does not compile with your `hip_attrs`: {exc}"[:500]
    else:
        problem = ""
    if problem:
        for requirement in requirements:
            ex.require(False, requirement, failure=problem)
        return
    largest = np.abs(limited[:, 0]).max()
    ex.require(abs(largest - HIP_LIMIT) <= 1e-9, requirements[0],
               failure=f"the largest joint torque is {fmt(largest)} N·m",
               hint="the clamp you need belongs to the joint, and acts on the sum of all its actuators")
    ex.require(np.allclose(limited[:, 1:], free[:, 1:]), requirements[1],
               failure="your attributes changed what the actuators output",
               hint="forcerange or ctrlrange would shrink each actuator; limit the joint instead")


# -- Exercise 4.2: the integrated-velocity servo and actrange -------------------------------

RUNAWAY_XML = """
<mujoco>
  <compiler angle="degree"/>
  <option timestep="0.005" gravity="0 0 0"/>
  <worldbody>
    <body><joint name="hinge" axis="0 0 1" range="-30 30" damping="0.3"/>
      <geom type="box" size=".1 .02 .02" pos=".1 0 0" mass="1"/></body>
  </worldbody>
  <actuator>
    <intvelocity name="servo" joint="hinge" kp="5" ctrlrange="-0.1 0.1" {extra}/>
  </actuator>
</mujoco>"""
"""An intvelocity servo on a ±30° hinge (angles in degrees); ``{extra}`` takes more
actuator attributes, e.g. ``actrange="-0.5 0.5"`` (radians: actrange is never converted)."""


def push_and_reverse(extra: str = "") -> tuple[mujoco.MjModel, Recording]:
    """Full speed ahead (request 1 rad/s, clamped to 0.1) for 10 s, full reverse for 10 s on
    :data:`RUNAWAY_XML` with actuator attributes ``extra``; returns the model and the
    recording of ``setpoint`` (the servo's activation, rad) and ``hinge`` (rad), 5 ms samples."""
    servo, servo_data = load(RUNAWAY_XML.format(extra=extra))

    def command(m: mujoco.MjModel, d: mujoco.MjData) -> list[float]:
        return [1.0 if d.time < 10.0 - 1e-9 else -1.0]
    return servo, record(servo, servo_data, _servo_signals(servo, servo_data), duration=20.0, ctrl=command)


@checker("4.2", "Clamp the setpoint, not the rate", points=3, answers={"actrange": array(length=2)})
def _clamp_setpoint(ex: Exercise) -> None:
    low, high = (float(v) for v in ex.value("actrange"))
    try:
        graded, _ = load(RUNAWAY_XML.format(extra=f'actrange="{low!r} {high!r}"'))
    except ModelError as exc:
        raise ExerciseFailed(f"the servo does not compile with actrange = ({fmt(low)}, {fmt(high)}): "
                             f"{exc.mujoco or exc}"[:500]) from None
    lo_lim, hi_lim = graded.joint("hinge").range
    with mujoco_warnings():
        servo_data = mujoco.MjData(graded)
        ahead = record(graded, servo_data, _servo_signals(graded, servo_data), duration=10.0, ctrl=[1.0])
        back = record(graded, servo_data, _servo_signals(graded, servo_data), duration=20.0, ctrl=[-1.0])
    setpoints = np.concatenate([ahead["setpoint"], back["setpoint"]])
    ex.require(setpoints.max() <= hi_lim + 1e-9 and setpoints.min() >= lo_lim - 1e-9,
               "the setpoint stays within the joint range",
               failure=f"it reached {fmt(setpoints.min())} … {fmt(setpoints.max())} rad, "
                       f"the range is {fmt(lo_lim)} … {fmt(hi_lim)} rad",
               hint="actrange is read in radians even when the model's angles are in degrees")
    ex.require(ahead["hinge"].max() >= 0.95 * hi_lim and back["hinge"].min() <= 0.95 * lo_lim,
               "the hinge still reaches within 5 % of both ends of its range",
               failure=f"it only reached {fmt(back['hinge'].min())} … "
                       f"{fmt(ahead['hinge'].max())} rad",
               hint="a narrower actrange than the joint range gives away part of the workspace")
    moving = back.t[back["hinge"] < hi_lim - 0.01]                 # 10 mrad inside the limit
    ex.require(moving.size > 0 and moving[0] - 10.0 <= 0.5,
               "after the reversal the hinge is back inside its range (by 10 mrad) within 0.5 s",
               failure="it stayed at the limit for "
                       + (fmt(moving[0] - 10.0) + " s" if moving.size else "the whole run"),
               hint="the setpoint must not be allowed beyond the joint limit in the first place")


# -- Exercise 4.3: find a packed input by name --------------------------------------------

PID_XML = model_path("actuator_layout_pid").read_text()
"""A motor, then a pid with inputs ``vel ff`` (ctrl: push, spin.vel, spin.ff)."""

LAYOUT_XML = model_path("actuator_layout_mixed").read_text()
"""A quaternion orientation actuator (4 inputs), a pid with all three inputs, a motor."""

THIRD_XML = model_path("actuator_layout_unseen").read_text()
"""A layout the chapter never shows (so that no table of indices can answer Exercise 4.3):
pid ``pos ff``, motor, expmap orientation (``rx ry rz``), pid ``vel``, pid ``pos vel ff``."""

LAYOUTS = {"PID_XML": PID_XML, "LAYOUT_XML": LAYOUT_XML, "a third layout (not shown)": THIRD_XML}

QUERIES: tuple[tuple[str, str, str], ...] = (
    ("PID_XML", "spin", "vel"), ("PID_XML", "spin", "ff"),
    ("LAYOUT_XML", "spin", "ff"), ("LAYOUT_XML", "gaze", "qz"),
    ("a third layout (not shown)", "spin", "ff"), ("a third layout (not shown)", "gaze", "ry"),
    ("a third layout (not shown)", "brake", "vel"), ("a third layout (not shown)", "reel", "ff"),
)
"""Exercise 4.3's questions, in order: (layout, actuator name, input name)."""


def owner(model: mujoco.MjModel, index: int) -> str:
    """Which actuator input ``data.ctrl[index]`` feeds, as ``"actuator.input"`` (``.ctrl``
    for a single-input actuator); ``index`` must lie in ``[0, model.nu)``."""
    i = int(np.searchsorted(model.actuator_ctrladr, index, side="right") - 1)
    slot = int(index - model.actuator_ctrladr[i])
    return f"{model.actuator(i).name}.{mujoco.mj_actuatorInputName(model, i, slot) or 'ctrl'}"


def probe_ctrl_index(ctrl_index: Callable[[mujoco.MjModel, str, str], Any]) -> list[Any]:
    """Run the learner's ``ctrl_index(model, actuator, name)`` on every query of
    :data:`QUERIES`, each on a freshly compiled model; returns one entry per query: the
    index (an int), ``{"error": text}`` if it raised, or ``{"returned": text}`` if it
    returned something that is not an integer."""
    answers: list[Any] = []
    for layout, actuator, name in QUERIES:
        model = mujoco.MjModel.from_xml_string(LAYOUTS[layout])
        try:
            index = ctrl_index(model, actuator, name)
        except Exception as exc:
            answers.append({"error": f"{type(exc).__name__}: {exc}"[:200]})
            continue
        if isinstance(index, int | np.integer) and not isinstance(index, bool | np.bool_):
            answers.append(int(index))
        else:
            answers.append({"returned": f"{index!r}"[:100] + f" ({type(index).__name__})"})
    return answers


@checker("4.3", "Find a packed input by name", points=2,
         answers={"ctrl_index": recorded(probe_ctrl_index, "a function")})
def _find_input(ex: Exercise) -> None:
    answers = ex.value("ctrl_index")
    if not isinstance(answers, list) or len(answers) != len(QUERIES):
        raise ExerciseFailed("the record of `ctrl_index` does not answer the exercise's queries")
    for (label, actuator, name), got in zip(QUERIES, answers, strict=True):
        model, data = load(LAYOUTS[label])
        valid = isinstance(got, int) and not isinstance(got, bool) and 0 <= got < model.nu
        received: dict[str, float] = {}
        if valid:
            data.ctrl[got] = 0.7
            mujoco.mj_forward(model, data)
            request = trace(model, data, actuator).stage("request")
            received = dict(zip(request.labels, request.value.tolist(), strict=True))
        if valid:
            failure = f"it returned {got}, which feeds {owner(model, got)}"
        elif isinstance(got, dict) and "error" in got:
            failure = f"it raised {got['error']}"
        elif isinstance(got, dict) and "returned" in got:
            failure = f"it returned {got['returned']}, not an index into data.ctrl"
        else:
            failure = f"it returned {got!r}, not an index into data.ctrl (nu = {model.nu})"
        ex.require(valid and received.get(name) == 0.7,
                   f"in {label}, ctrl_index(model, {actuator!r}, {name!r}) feeds {actuator}.{name}",
                   failure=failure,
                   hint="start at model.actuator_ctrladr[i]; mj_actuatorInputName(model, i, k) names slot k; "
                        "absent inputs take no slot")


# -- Exercise 4.4: control state outside the callback --------------------------------------

COUNTER_XML = """
<mujoco>
  <option timestep="0.002" gravity="0 0 0"/>
  <worldbody><body><joint name="j" axis="0 0 1" damping="0.1"/>
    <geom type="box" size=".1 .02 .02" pos=".1 0 0" mass="1"/></body></worldbody>
  <actuator><motor name="m" joint="j"/></actuator>
</mujoco>"""
"""A 1 kg bar on a damped hinge (no gravity) driven by one motor: the plant of section 10."""

TARGET = 1.0   # rad: the angle the PI controller holds
KP = 5.0       # N·m/rad
KV = 1.0       # N·m·s/rad
KI = 20.0      # N·m/(rad·s)
LOAD = -0.5    # N·m: constant disturbance torque (qfrc_applied)
SECONDS = 3.0  # s: length of one closed-loop run
PROBE_ANGLE = 0.3   # rad: where the purity probe calls feedback
CALLS_PER_STEP = {"EULER": 1, "RK4": 4}   # mjcb_control calls per mj_step


def _steps() -> int:
    """Steps in one run of :func:`run_pi`."""
    return round(SECONDS / mujoco.MjModel.from_xml_string(COUNTER_XML).opt.timestep)


def run_pi(integrator: str, tick: Callable[[Any, Any], None], feedback: Callable[[Any, Any], None],
           seconds: float = SECONDS) -> np.ndarray:
    """The control loop of section 10 on :data:`COUNTER_XML` under ``integrator``
    (``"EULER"``, ``"RK4"``, ...) with the load torque :data:`LOAD`: ``tick(model, data)``
    once before every ``mj_step``, ``feedback(model, data)`` installed as ``mjcb_control``
    (the previous callback is put back, also if either raises).  Returns the hinge angle
    (rad) after every step, shape (steps,)."""
    plant, plant_data = load(COUNTER_XML)
    plant.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator}")
    plant_data.qfrc_applied[0] = LOAD                          # a constant disturbance torque
    angles = []
    with control_callback(feedback):                          # removed even if tick or feedback raise
        for _ in range(round(seconds / plant.opt.timestep)):
            tick(plant, plant_data)
            mujoco.mj_step(plant, plant_data)
            angles.append(plant_data.qpos[0])
    return np.array(angles)


def _pack(rows: np.ndarray) -> str:
    """Float64 rows as text, bit for bit: columns' bytes regrouped (byte 0 of every number,
    then byte 1, ...) so that zlib finds the slow-changing high bytes, then base64."""
    raw = np.ascontiguousarray(rows.T, dtype="<f8").view(np.uint8).reshape(-1, 8).T.tobytes()
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def _unpack(text: str, columns: int, most: int) -> np.ndarray:
    """The inverse of :func:`_pack`: shape (rows, columns), at most ``most`` rows
    (raises ValueError on anything else)."""
    packed = base64.b64decode(text.encode("ascii"), validate=True)
    inflate = zlib.decompressobj()
    raw = inflate.decompress(packed, 8 * columns * most + 1)
    if (not inflate.eof or inflate.unused_data or inflate.unconsumed_tail
            or len(raw) > 8 * columns * most or len(raw) % (8 * columns)):
        raise ValueError("the packed numbers do not fit the record")
    numbers = np.frombuffer(raw, dtype=np.uint8).reshape(8, -1).T.copy().view("<f8").reshape(-1)
    return numbers.reshape(columns, -1).T


Callback = Callable[[Any, Any], None]   # tick or feedback: f(model, data)


def _pair(make_controller: Callable[[], Any]) -> tuple[Callback, Callback]:
    """A fresh ``(tick, feedback)`` from the learner's ``make_controller()`` (AnswerError if not a pair)."""
    made = make_controller()
    if not (isinstance(made, tuple | list) and len(made) == 2 and all(callable(f) for f in made)):
        raise AnswerError("make_controller() should return a pair (tick, feedback) of functions, "
                          f"it returned {made!r}"[:300])
    return made[0], made[1]


def _closed_loop(tick: Callback, feedback: Callback, integrator: str) -> dict[str, Any]:
    """One recorded run of :func:`run_pi`: ``per_step`` (feedback calls after each tick) and
    ``feedback`` (packed rows: qpos[0], qvel[0] as feedback found them, ctrl[0] as it left it)."""
    per_step: list[int] = []
    rows: list[tuple[float, float, float]] = []
    most = CALLS_PER_STEP[integrator] * _steps()

    def clock(m: Any, d: Any) -> None:
        per_step.append(0)
        tick(m, d)

    def watched(m: Any, d: Any) -> None:
        if len(rows) >= most:
            raise AnswerError(f"feedback ran more than {most} times in {fmt(SECONDS)} s under {integrator}: "
                              "MuJoCo calls it once per step with Euler and 4 times with RK4 "
                              "(does tick call mj_forward or mj_step?)")
        seen = (float(d.qpos[0]), float(d.qvel[0]))
        feedback(m, d)
        rows.append((*seen, float(d.ctrl[0])))
        if per_step:
            per_step[-1] += 1

    run_pi(integrator, clock, watched)
    return {"per_step": per_step, "feedback": _pack(np.array(rows).reshape(-1, 3))}


def probe_controller(make_controller: Callable[[], Any]) -> dict[str, Any]:
    """Run the learner's ``make_controller()`` the way the exercise asks, and record it.

    purity: ``[first, second]``, data.ctrl[0] after two feedback calls on one state
    (qpos = :data:`PROBE_ANGLE`, after five ticks), with a fresh pair.
    runs: per integrator (``EULER``, ``RK4``), a fresh pair in :func:`run_pi`;
    ``per_step`` is how many feedback calls followed each tick, ``feedback`` the packed
    (:func:`_pack`) rows ``(qpos[0], qvel[0] as feedback found them, ctrl[0] as it left
    it)``, one per call, in order.  Nothing else is needed to replay the run: the plant,
    time and load are labkit's, and the dynamics read only ctrl[0] from the controller.
    callback_left: whether an mjcb_control is installed after all this.
    """
    tick, feedback = _pair(make_controller)
    plant, plant_data = load(COUNTER_XML)
    plant_data.qpos[0] = PROBE_ANGLE
    for _ in range(5):                                          # a few control ticks first
        tick(plant, plant_data)
    feedback(plant, plant_data)
    first = float(plant_data.ctrl[0])
    feedback(plant, plant_data)
    out: dict[str, Any] = {"purity": [first, float(plant_data.ctrl[0])], "runs": {}}
    for integrator in CALLS_PER_STEP:
        out["runs"][integrator] = _closed_loop(*_pair(make_controller), integrator)
    out["callback_left"] = mujoco.get_mjcb_control() is not None
    return out


def _replay(run: Any, integrator: str) -> tuple[np.ndarray | None, str]:
    """Replay one recorded run with MuJoCo: each feedback call is answered with the
    recorded ctrl[0], and the state it sees must be the recorded one.  Returns the angles
    after every step (as :func:`run_pi`) and "" — or None and what does not match."""
    steps = _steps()
    calls = CALLS_PER_STEP[integrator]
    if not isinstance(run, dict) or not isinstance(run.get("per_step"), list) or not isinstance(
            run.get("feedback"), str):
        return None, f"the {integrator} run is missing from the record"
    if run["per_step"] != [calls] * steps:
        where = next((k for k, n in enumerate(run["per_step"]) if n != calls), len(run["per_step"]))
        return None, (f"under {integrator} the record does not show {calls} feedback call(s) in each of "
                      f"{steps} steps (step {where} differs): tick must not call mj_forward or mj_step")
    try:
        rows = _unpack(run["feedback"], 3, calls * steps)
    except (ValueError, binascii.Error, zlib.error):
        return None, f"the {integrator} run's packed numbers cannot be read"
    if len(rows) != calls * steps:
        return None, f"the {integrator} record holds {len(rows)} feedback calls, not {calls * steps}"
    state = {"call": 0, "wrong": ""}

    def answer(m: Any, d: Any) -> None:
        k = state["call"]
        state["call"] = k + 1
        if k >= len(rows):
            state["wrong"] = state["wrong"] or f"the replay makes more than {len(rows)} feedback calls"
            return
        qpos, qvel, ctrl = rows[k]
        seen = (d.qpos[0], d.qvel[0])
        same = all(abs(a - b) <= 1e-12 * (1 + abs(b)) for a, b in zip(seen, (qpos, qvel), strict=True))
        if not (state["wrong"] or same):
            state["wrong"] = (f"under {integrator}, feedback call {k} (step {k // calls}) saw qpos, qvel = "
                              f"{fmt(qpos)}, {fmt(qvel)} in the record, {fmt(seen[0])}, {fmt(seen[1])} "
                              "in the replay")
        d.ctrl[0] = ctrl

    with mujoco_warnings():
        angles = run_pi(integrator, lambda m, d: None, answer)
    if state["wrong"]:
        return None, state["wrong"]
    return angles, ""


@checker("4.4", "Control state outside the callback", points=3,
         answers={"make_controller": recorded(probe_controller, "a function")})
def _control_state(ex: Exercise) -> None:
    run = ex.value("make_controller")
    runs = run.get("runs") if isinstance(run, dict) else None
    replayed: dict[str, np.ndarray] = {}
    problem = "" if isinstance(runs, dict) else "the record holds no closed-loop runs"
    for integrator in CALLS_PER_STEP:
        if not problem:
            angles, problem = _replay(runs.get(integrator), integrator)
            if angles is not None:
                replayed[integrator] = angles
    purity = run.get("purity") if isinstance(run, dict) else None
    if not problem and not (isinstance(purity, list) and len(purity) == 2
                            and all(isinstance(v, float | int) for v in purity)):
        problem = "the record holds no purity probe"
    if problem:                       # nothing in a record MuJoCo cannot reproduce is trusted
        why = ("your controller's run cannot be verified: " + problem
               + " (tick and feedback may change nothing but data.ctrl[0] and their own state)")
        for requirement in ("calling feedback twice on the same state gives the same control",
                            "the integral term holds the target against the load",
                            "RK4 and Euler trajectories agree to within 0.05 rad",
                            "no callback is left installed"):
            ex.require(False, requirement, failure=why)
        return
    ex.require(purity[0] == purity[1], "calling feedback twice on the same state gives the same control",
               failure="the second call changed the control: feedback updates state of its own",
               hint="move every state update (the integral) into tick")
    euler = replayed["EULER"]
    ex.require(abs(euler[-1] - TARGET) < 0.01, "the integral term holds the target against the load",
               failure=f"after {fmt(SECONDS)} s the angle is {fmt(euler[-1])} rad instead of {fmt(TARGET)}",
               hint="the integral accumulates h·(TARGET − q) once per step, and the control adds KI·integral")
    gap = np.abs(replayed["RK4"] - euler).max()
    ex.require(gap < 0.05, "RK4 and Euler trajectories agree to within 0.05 rad",
               failure=f"they differ by up to {fmt(gap)} rad",
               hint="under RK4 mjcb_control runs four times per step")
    ex.require(run.get("callback_left") is False and mujoco.get_mjcb_control() is None,
               "no callback is left installed",
               failure="a control callback is still installed",
               hint="run_pi removes it in its finally clause")
