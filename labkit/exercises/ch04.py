"""Checkers of chapter 04 (actuators: limits, state and timing), and the models and control
loop they share with the chapter's lessons.

Exercise 4.1 builds :data:`HIP_XML` (:func:`hip_xml`: behind the variant's gear) with the
learner's joint attributes; 4.2 runs the runaway servo of :data:`RUNAWAY_XML`, behind the
variant's gear (published: :data:`EXERCISE_GEAR`), with the learner's ``actrange``; 4.3 and 4.4 ask for
code, so their answers are records made by a probe (:func:`probe_ctrl_index`,
:func:`probe_controller`) that runs the learner's function in the learner's kernel.  The
checkers see only those records and trust none of them: 4.3 checks every returned index
against the compiled layouts, one of them drawn at random from the grading's seed
(:func:`unseen_layout`); 4.4 replays the recorded closed loop with MuJoCo, recomputes the
exercise's control law at every recorded call (:func:`pi_law`) and measures the replay.
"""

from __future__ import annotations

import base64
import binascii
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable
from functools import lru_cache
from typing import Any
from xml.sax.saxutils import quoteattr

import mujoco
import numpy as np

from ..actuation import trace
from ..display import fmt
from ..models import ModelError, load, model_path
from ..recording import Recording, activation, record
from ..sim import control_callback, mujoco_warnings
from .answers import BOOLEAN, NUMBER, STRING, AnswerError, array, number, probe_seed, recorded
from .core import Exercise, ExerciseFailed, Param, checker


def _servo_signals(model: mujoco.MjModel, data: mujoco.MjData) -> dict[str, np.ndarray]:
    """The push-and-reverse signals: the servo's setpoint (its activation) and the hinge angle, rad."""
    return {"setpoint": activation(model, data, "servo"), "hinge": data.joint("hinge").qpos}

__all__ = [
    "AHEAD",
    "BACK",
    "COUNTER_XML",
    "EXERCISE_GEAR",
    "HIP_XML",
    "KI",
    "KP",
    "KV",
    "LAYOUT_XML",
    "LOAD",
    "PID_XML",
    "RUNAWAY_XML",
    "SECONDS",
    "SHOWN",
    "TARGET",
    "UNSEEN",
    "ahead_and_back_seconds",
    "extreme_torques",
    "hip_xml",
    "owner",
    "pi_law",
    "probe_controller",
    "probe_ctrl_index",
    "push_and_reverse",
    "queries",
    "run_pi",
    "unseen_layout",
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

HIP_GEAR = 3.0   # the drive's gear in HIP_XML (published)
HIP_LIMIT = 2.5  # N·m: what the physical motor at the hip can deliver (published)
# the variants: gears of 2.5-5 (from 2.5 on, the drive alone, gear·1, is never the sum of the two
# forceranges, 2, so each mistake keeps its own explanation) and limits of 1.5-4.5 N·m, at least
# 0.5 N·m below the pair's gear + 1, so that the joint's clamp has something to cut
HIP_GEAR_PARAM = Param(HIP_GEAR, 2.5, 5.0, 0.5, unit=": 1", label="the drive's gear")
HIP_LIMIT_PARAM = Param(HIP_LIMIT, 1.5, 4.5, 0.25, unit="N·m",
                        label="what the physical motor at the hip can deliver")


def hip_xml(gear: float = HIP_GEAR) -> str:
    """:data:`HIP_XML` with the drive's gear ``gear`` (``{hip_attrs}`` still to fill in)."""
    return HIP_XML.replace(f'gear="{HIP_GEAR:g}"', f'gear="{gear:g}"')


def _joint_attributes(attrs: str) -> str:
    """``attrs`` re-written as XML attributes of one element, or ValueError: a string that
    is anything but ``name="value"`` pairs (a closing tag, an element, an include) is refused."""
    try:
        element = ET.fromstring(f"<joint {attrs}/>")
    except ET.ParseError as exc:
        raise ValueError(f"{attrs!r} is not a list of XML attributes (name=\"value\" ...): {exc}") from None
    return " ".join(f"{key}={quoteattr(value)}" for key, value in element.attrib.items())


def extreme_torques(attrs: str = "", gear: float = HIP_GEAR) -> np.ndarray:
    """The hip of :func:`hip_xml` (the drive's gear ``gear``) with joint attributes ``attrs``, at
    qpos = 0, for each corner of the control box (±1, ±1): rows ``(qfrc_actuator [N·m], drive
    force [N·m], hold force [N·m])``, shape (4, 3).  Raises ValueError (not attributes) or
    ModelError (no model)."""
    hip, hip_data = load(hip_xml(gear).format(hip_attrs=_joint_attributes(attrs)))
    rows = []
    for corner in [(-1, -1), (-1, 1), (1, -1), (1, 1)]:
        hip_data.ctrl[:] = corner
        mujoco.mj_forward(hip, hip_data)
        rows.append((hip_data.qfrc_actuator[0], *hip_data.actuator_force))
    return np.array(rows)


@lru_cache(maxsize=64)
def _hip_torques(attrs: str, gear: float = HIP_GEAR) -> np.ndarray:
    """:func:`extreme_torques` of ``attrs`` and ``gear``, cached and read-only (the fuzz tests
    re-grade the same strings); ValueError or ModelError as it."""
    rows = extreme_torques(attrs, gear)
    rows.setflags(write=False)
    return rows


@checker("4.1", "Several actuators, one joint", points=3,
         answers={"is_bug": BOOLEAN, "max_total": NUMBER, "hip_attrs": STRING},
         params={"gear": HIP_GEAR_PARAM, "limit": HIP_LIMIT_PARAM},
         valid=lambda v: v["limit"] <= v["gear"] + 1 - 0.5)
def _several_actuators(ex: Exercise) -> None:
    gear, limit = ex.param("gear"), ex.param("limit")
    free = _hip_torques("", gear)
    total = ex.close("max_total", np.abs(free[:, 0]).max(), rtol=1e-6, unit="N·m",
                     hint="the drive's output is multiplied by its gear; then both actuators are added",
                     mistakes={1.0: "that is one actuator's forcerange, before the gear",
                               2.0: "that adds the two forceranges but forgets the drive's gear of "
                                    f"{fmt(gear)}",
                               gear: "that is the drive alone: the servo adds its own clamped output"})
    # a yes/no a guess gets right half the time: it counts together with the number that shows why
    verdict = ex.has("is_bug") and ex.value("is_bug") is False
    ex.require(verdict and total, "`is_bug` is right, and `max_total` shows why",
               failure=("`is_bug` is not right" if not verdict else
                        "`is_bug` is right, but it counts together with `max_total`, which is not yet"),
               hint="follow the chain: forcerange acts before the gear, and the joint sums all actuators")
    shown = fmt(limit, unit="N·m")
    requirements = (f"the joint receives at most {shown}, and the full {shown} is still available",
                    "each actuator's own output (actuator_force) is unchanged")
    try:
        limited = _hip_torques(ex.value("hip_attrs"), gear)
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
    clamped = abs(largest - limit) <= 1e-9
    ex.require(clamped, requirements[0], failure=f"the largest joint torque is {fmt(largest)} N·m",
               hint="the clamp you need belongs to the joint, and acts on the sum of all its actuators")
    # "unchanged" alone is met by writing nothing: it counts only once the joint is limited as asked
    unchanged = bool(np.allclose(limited[:, 1:], free[:, 1:]))
    ex.require(clamped and unchanged, requirements[1],
               failure=("your attributes changed what the actuators output" if not unchanged else
                        "they are, but so they are with no attribute at all: this counts once the joint "
                        "is limited as asked"),
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


EXERCISE_GEAR = 2.0
"""Exercise 4.2's servo is :data:`RUNAWAY_XML`'s behind a 2:1 gear (``gear="2"``, published)."""
AHEAD, BACK = 15.0, 30.0
"""Exercise 4.2's test, s: full ahead, then full back (with gear 2 the setpoint's joint angle moves
at 0.05 rad/s, so it takes 10.5 s to the limit and 21 s across the range); behind another gear
both last in proportion (:func:`ahead_and_back_seconds`)."""
# the variants: gears of 1.25-3.5 in quarters.  Not 1, where the joint's own radians, the
# chapter's mistake, would be the answer; from one quarter to the next the answer changes by 7 % at
# least, more than the 5 % the hinge may stop short, so neither the published answer nor a
# neighbour's passes: a neighbour's actrange either aims beyond the range or stops short of 95 %
GEAR_PARAM = Param(EXERCISE_GEAR, 1.25, 3.5, 0.25, unit=": 1", label="the servo's gear")


def ahead_and_back_seconds(gear: float = EXERCISE_GEAR) -> tuple[float, float]:
    """Exercise 4.2's test behind ``gear``, s: full ahead, then full back, :data:`AHEAD` and
    :data:`BACK` scaled with the gear (the setpoint's joint angle moves at 0.1/gear rad/s)."""
    return AHEAD * gear / EXERCISE_GEAR, BACK * gear / EXERCISE_GEAR

# each bound within ±1000: the setpoint integrates at most 0.1 per second, so in this 45 s test it
# never leaves ±5 and any wider bound acts as none; the answer is ±1.047 (±0.52 rad at gear 2), and
# the typical mistakes, degrees (±30) or the joint's radians (±0.52), stay inside to be told so
_BOUND = number(-1e3, 1e3, unit=" rad",
                why="an actrange bound is a setpoint in the actuator's units; beyond ±1000 rad it is "
                    "no bound here")
ACTRANGE = array(items=[_BOUND, _BOUND])


@lru_cache(maxsize=64)
def _ahead_and_back(low: float, high: float, gear: float = EXERCISE_GEAR
                    ) -> tuple[tuple[float, float], float, Recording, Recording]:
    """Exercise 4.2's servo behind ``gear`` with ``actrange = (low, high)``: the joint range
    (rad), the gear, and the recordings of full ahead then full back
    (:func:`ahead_and_back_seconds`; cached: the fuzz tests re-grade the same values).  Raises
    :class:`ExerciseFailed` if it does not compile."""
    ahead_s, back_s = ahead_and_back_seconds(gear)
    try:
        graded, _ = load(RUNAWAY_XML.format(extra=f'gear="{gear!r}" actrange="{low!r} {high!r}"'))
    except ModelError as exc:
        raise ExerciseFailed(f"the servo does not compile with actrange = ({fmt(low)}, {fmt(high)}): "
                             f"{exc.mujoco or exc}"[:500]) from None
    with mujoco_warnings():
        servo_data = mujoco.MjData(graded)
        ahead = record(graded, servo_data, _servo_signals(graded, servo_data), duration=ahead_s, ctrl=[1.0])
        back = record(graded, servo_data, _servo_signals(graded, servo_data), duration=back_s, ctrl=[-1.0])
    lo_lim, hi_lim = graded.joint("hinge").range
    return (float(lo_lim), float(hi_lim)), float(graded.actuator("servo").gear[0]), ahead, back


@checker("4.2", "Clamp the setpoint, not the rate", points=3, answers={"actrange": ACTRANGE},
         params={"gear": GEAR_PARAM})
def _clamp_setpoint(ex: Exercise) -> None:
    low, high = (float(v) for v in ex.value("actrange"))
    (lo_lim, hi_lim), gear, ahead, back = _ahead_and_back(low, high, ex.param("gear"))
    # each requirement alone is met by a trivial servo: "within the range" by a clamp too narrow to
    # move (actrange (-0.01, 0.01)) or one in the joint's radians, not the actuator's (±0.52: the
    # hinge then covers half its range), "reaches both ends" by no clamp at all, the chapter's
    # runaway servo (an actrange such as (0, 0) or (1, 1) is no clamp either); so they are the two
    # sides of one lesson and count only together.  (No third test of the recovery after the
    # reversal: once both hold, the target is at most the limit, and the hinge is 10 mrad inside it
    # at most 0.22 s after the reversal, for actrange ±1.047 as for ±1.0 — a test that cannot fail.)
    reaches = bool(ahead["hinge"].max() >= 0.95 * hi_lim and back["hinge"].min() <= 0.95 * lo_lim)
    targets = np.concatenate([ahead["setpoint"], back["setpoint"]]) / gear   # the angle the servo aims at
    inside = bool(targets.max() <= hi_lim + 1e-9 and targets.min() >= lo_lim - 1e-9)
    ex.require(inside and reaches, "the angle the servo aims at stays within the joint range",
               failure=(f"it aimed at {fmt(targets.min())} … {fmt(targets.max())} rad, the range is "
                        f"{fmt(lo_lim)} … {fmt(hi_lim)} rad" if not inside else
                        "it does, but then the hinge must still reach both ends of its range (below)"),
               hint="actrange bounds the activation, in the actuator's own units, whatever "
                    "compiler/angle says")
    ex.require(reaches and inside, "the hinge still reaches within 5 % of both ends of its range",
               failure=(f"it only reached {fmt(back['hinge'].min())} … {fmt(ahead['hinge'].max())} rad"
                        if not reaches else "it does, but so does the servo with no clamp at all: this "
                        "counts once the servo's target stays within the range (above)"),
               hint="an actrange too narrow gives away part of the workspace: in what units is this servo's "
                    "activation, behind its gear? (chapter 03 §4)")


# -- Exercise 4.3: find a packed input by name --------------------------------------------

PID_XML = model_path("actuator_layout_pid").read_text()
"""A motor, then a pid with inputs ``vel ff`` (ctrl: push, spin.vel, spin.ff)."""

LAYOUT_XML = model_path("actuator_layout_mixed").read_text()
"""A quaternion orientation actuator (4 inputs), a pid with all three inputs, a motor."""

SHOWN: tuple[tuple[str, str, str], ...] = (
    ("PID_XML", "spin", "vel"), ("PID_XML", "spin", "ff"),
    ("LAYOUT_XML", "spin", "ff"), ("LAYOUT_XML", "gaze", "qz"),
)
"""Exercise 4.3's questions on the layouts the chapter shows: (layout, actuator name, input name)."""

SHOWN_LAYOUTS = {"PID_XML": PID_XML, "LAYOUT_XML": LAYOUT_XML}

UNSEEN = "a layout drawn at random (not shown)"
UNSEEN_QUERIES = 4   # questions on the unseen layout: a constant index or a table hits at most one

_ACTUATOR_NAMES = ("spin", "reel", "brake", "gaze", "push", "tilt", "lift", "grip", "pan", "roll", "wrist",
                   "drum", "winch", "neck", "yaw", "hoist", "slew", "nod", "feed", "clamp", "sweep", "turn")
_PID_INPUTS = ("pos", "vel", "ff")
_GAPPED = (("vel",), ("ff",), ("pos", "ff"), ("vel", "ff"))   # pid inputs that leave a canonical slot out


@lru_cache(maxsize=32)
def unseen_layout(seed: int) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Exercise 4.3's unseen layout for ``seed`` (``numpy.random.default_rng(seed)``): MJCF text
    of 5–7 actuators in random order with random names (motors, pids with a random subset of
    ``pos vel ff``, orientation servos with ``quat`` or ``expmap`` inputs), each on its own
    body with a hinge, slide or ball joint; and :data:`UNSEEN_QUERIES` questions
    ``(actuator, input)`` drawn from it.  Among them is always a pid input whose slot is not
    its canonical position (an input before it is absent) and an orientation input.

    The probe (in the learner's kernel) draws it from :func:`.answers.probe_seed`, the checker
    from ``ex.seed``: the grader draws a seed per submission, so no table of indices answers it.
    """
    rng = np.random.default_rng(int(seed) % 2**64)
    count = int(rng.integers(5, 8))
    kinds = ["gapped pid", "orientation", *rng.choice(["motor", "pid", "orientation"], count - 2).tolist()]
    rng.shuffle(kinds)
    names = rng.choice(_ACTUATOR_NAMES, count, replace=False).tolist()
    bodies, actuators = [], []
    inputs: list[tuple[str, str, str, bool]] = []   # (actuator, input, kind, slot differs from canonical)
    for i, (kind, name) in enumerate(zip(kinds, names, strict=True)):
        joint = f"j{i}"
        if kind == "orientation":
            joint_type = 'type="ball"'
            form = ("quat", "expmap")[int(rng.integers(2))]
            actuators.append(f'<orientation name="{name}" joint="{joint}" input="{form}" kp="2"/>')
            inputs += [(name, slot, kind, False) for slot in (("qw", "qx", "qy", "qz") if form == "quat"
                                                             else ("rx", "ry", "rz"))]
        else:
            joint_type = ('axis="0 0 1"', 'type="slide" axis="1 0 0"')[int(rng.integers(2))]
            if kind == "motor":
                actuators.append(f'<motor name="{name}" joint="{joint}"/>')
            else:
                if kind == "gapped pid":
                    chosen = _GAPPED[int(rng.integers(len(_GAPPED)))]
                else:
                    mask = int(rng.integers(1, 8))          # a non-empty subset of pos, vel, ff
                    chosen = tuple(p for bit, p in enumerate(_PID_INPUTS) if mask >> bit & 1)
                gains = ' kp="1"' * ("pos" in chosen) + ' kv="1"' * ("vel" in chosen)
                actuators.append(f'<pid name="{name}" joint="{joint}" input="{" ".join(chosen)}"{gains}/>')
                inputs += [(name, slot, "gapped" if kind == "gapped pid" else "pid",
                            k != _PID_INPUTS.index(slot)) for k, slot in enumerate(chosen)]
        bodies.append(f'    <body pos="0 {0.5 * i:g} 0"><joint name="{joint}" {joint_type}/>'
                      '<geom type="box" size=".05 .05 .05" mass="1"/></body>')
    xml = ('<mujoco model="actuator_layout_unseen">\n  <option gravity="0 0 0"/>\n  <worldbody>\n'
           + "\n".join(bodies) + "\n  </worldbody>\n  <actuator>\n"
           + "\n".join(f"    {line}" for line in actuators) + "\n  </actuator>\n</mujoco>")

    def pick(pool: list[tuple[str, str, str, bool]]) -> tuple[str, str]:
        entry = pool[int(rng.integers(len(pool)))]
        inputs.remove(entry)
        return entry[0], entry[1]

    asked = [pick([e for e in inputs if e[2] == "gapped" and e[3]]),
             pick([e for e in inputs if e[2] == "orientation"])]
    while len(asked) < UNSEEN_QUERIES:
        asked.append(pick(inputs))
    order = rng.permutation(len(asked))
    return xml, tuple(asked[k] for k in order)


def queries(seed: int) -> tuple[tuple[str, str, str], ...]:
    """All of Exercise 4.3's questions for ``seed``, in order: :data:`SHOWN`, then the unseen
    layout's, each ``(layout label, actuator name, input name)``."""
    return SHOWN + tuple((UNSEEN, actuator, name) for actuator, name in unseen_layout(seed)[1])


def _layout(label: str, seed: int) -> str:
    """The MJCF text of the layout called ``label`` (the unseen one drawn for ``seed``)."""
    return unseen_layout(seed)[0] if label == UNSEEN else SHOWN_LAYOUTS[label]


def owner(model: mujoco.MjModel, index: int) -> str:
    """Which actuator input ``data.ctrl[index]`` feeds, as ``"actuator.input"`` (``.ctrl``
    for a single-input actuator); ``index`` must lie in ``[0, model.nu)``."""
    i = int(np.searchsorted(model.actuator_ctrladr, index, side="right") - 1)
    slot = int(index - model.actuator_ctrladr[i])
    return f"{model.actuator(i).name}.{mujoco.mj_actuatorInputName(model, i, slot) or 'ctrl'}"


def probe_ctrl_index(ctrl_index: Callable[[mujoco.MjModel, str, str], Any]) -> dict[str, Any]:
    """Run the learner's ``ctrl_index(model, actuator, name)`` on every question of
    :func:`queries` for the seed :func:`.answers.probe_seed`, each on a freshly compiled
    model; returns ``{"seed": seed, "indices": [...]}`` with one entry per question: the
    index (an int), ``{"error": text}`` if it raised, or ``{"returned": text}`` if it
    returned something that is not an integer."""
    seed = probe_seed()
    answers: list[Any] = []
    for layout, actuator, name in queries(seed):
        model = mujoco.MjModel.from_xml_string(_layout(layout, seed))
        try:
            index = ctrl_index(model, actuator, name)
        except Exception as exc:
            answers.append({"error": f"{type(exc).__name__}: {exc}"[:200]})
            continue
        if isinstance(index, int | np.integer) and not isinstance(index, bool | np.bool_):
            answers.append(int(index))
        else:
            answers.append({"returned": f"{index!r}"[:100] + f" ({type(index).__name__})"})
    return {"seed": seed, "indices": answers}


def _index_record(record: Any) -> dict[str, Any]:
    """A record of :func:`probe_ctrl_index`, validated: ``{"seed": int ≥ 0, "indices": [...]}``
    with one entry per question, each an int, ``{"error": text}`` or ``{"returned": text}``
    (AnswerError otherwise)."""
    total = len(SHOWN) + UNSEEN_QUERIES
    if not (isinstance(record, dict) and set(record) == {"seed", "indices"}):
        raise AnswerError("the record of the function should hold its probe's seed and indices")
    seed, indices = record["seed"], record["indices"]
    if not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**64):
        raise AnswerError(f"the record's seed {str(seed)[:40]!r} is not a probe seed")
    if not isinstance(indices, list) or len(indices) != total:
        raise AnswerError(f"the record of the function should hold {total} entries, one per query")
    for entry in indices:
        plain = isinstance(entry, int) and not isinstance(entry, bool)
        note = (isinstance(entry, dict) and len(entry) == 1 and next(iter(entry)) in ("error", "returned")
                and isinstance(next(iter(entry.values())), str))
        if not (plain or note):
            raise AnswerError(f"the record holds {str(entry)[:40]!r}, not an index or a note")
    return record


@lru_cache(maxsize=256)
def _received(xml: str, index: int, actuator: str) -> tuple[dict[str, float], str]:
    """What each input of ``actuator`` receives (its ``request`` stage in
    :func:`labkit.actuation.trace`) when ``data.ctrl[index] = 0.7`` in the model ``xml``, and
    which input that index feeds (:func:`owner`); ``index`` in ``[0, nu)``.  Cached: the same
    indices are checked again and again."""
    model, data = load(xml)
    data.ctrl[index] = 0.7
    mujoco.mj_forward(model, data)
    request = trace(model, data, actuator).stage("request")
    return dict(zip(request.labels, request.value.tolist(), strict=True)), owner(model, index)


def _fed(xml: str, got: Any, actuator: str, name: str) -> str:
    """"" if writing to ``data.ctrl[got]`` feeds input ``name`` of ``actuator`` in the model
    ``xml``, else what happened instead."""
    if isinstance(got, dict) and "error" in got:
        return f"it raised {got['error']}"
    if isinstance(got, dict):
        return f"it returned {got['returned']}, not an index into data.ctrl"
    nu = _nu(xml)
    if not 0 <= got < nu:
        return f"it returned {got}, not an index into data.ctrl (nu = {nu})"
    received, fed = _received(xml, got, actuator)
    return "" if received.get(name) == 0.7 else f"it returned {got}, which feeds {fed}"


@lru_cache(maxsize=64)
def _nu(xml: str) -> int:
    """The number of controls of the model ``xml``."""
    return int(load(xml)[0].nu)


@checker("4.3", "Find a packed input by name", points=2,
         answers={"ctrl_index": recorded(probe_ctrl_index, "a function", validate=_index_record)},
         fixed="the answer is a method, finding any input of any layout by its name, which every correct "
               "answer shares; the question holds no number, and the grader already asks it on a layout "
               "drawn at random for each grading")
def _find_input(ex: Exercise) -> None:
    record = ex.value("ctrl_index")
    ex.precondition(record["seed"] == ex.seed, "the record answers the layout drawn for this grading",
                    failure=f"it was made for the layout of seed {record['seed']}, and this grading drew "
                            f"seed {ex.seed}: run the answer cell again",
                    hint="the probe draws the unseen layout from the environment variable "
                         "LABKIT_PROBE_SEED, as the checker does")
    asked = queries(ex.seed)
    wrong: dict[str, list[str]] = {}
    for (label, actuator, name), got in zip(asked, record["indices"], strict=True):
        why = _fed(_layout(label, ex.seed), got, actuator, name)
        wrong.setdefault(label, [])
        if why:
            wrong[label].append(f"ctrl_index(model, {actuator!r}, {name!r}): {why}")
    # one requirement per layout, each with several questions, so that no constant index passes one;
    # the unseen layout, where no table helps, weighs as much as the two shown ones together
    for label, weight in (("PID_XML", 1.0), ("LAYOUT_XML", 1.0), (UNSEEN, 2.0)):
        wanted = ", ".join(f"{a}.{n}" for lab, a, n in asked if lab == label)
        ex.require(not wrong[label], f"in {label}, ctrl_index finds {wanted}",
                   failure="; ".join(wrong[label]), weight=weight,
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

TARGET = 1.0   # rad: the angle the PI controller holds (published)
KP = 5.0       # N·m/rad
KV = 1.0       # N·m·s/rad
KI = 20.0      # N·m/(rad·s) (published)
LOAD = -0.5    # N·m: constant disturbance torque (qfrc_applied)
SECONDS = 3.0  # s: length of one closed-loop run
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

    Returns ``{"runs": {integrator: run}}`` for ``EULER`` and ``RK4``, each run made with a
    fresh pair in :func:`run_pi`: ``per_step`` is how many feedback calls followed each tick,
    ``feedback`` the packed (:func:`_pack`) rows ``(qpos[0], qvel[0] as feedback found them,
    ctrl[0] as it left it)``, one per call, in order.  Nothing else is needed to verify the
    run: the plant, time and load are labkit's, the dynamics read only ctrl[0] from the
    controller, and the exercise's law gives ctrl[0] from the states in the record.
    """
    return {"runs": {integrator: _closed_loop(*_pair(make_controller), integrator)
                     for integrator in CALLS_PER_STEP}}


@lru_cache(maxsize=16)
def _replayed(integrator: str, packed: str, per_step: tuple[int, ...]
              ) -> tuple[np.ndarray | None, np.ndarray | None, str]:
    """Replay one recorded run with MuJoCo: each feedback call is answered with the
    recorded ctrl[0], and the state it sees must be the recorded one.  Returns the angles
    after every step (as :func:`run_pi`), the rows ``(qpos, qvel, ctrl)`` of every call and
    "" — or None, None and what does not match.  Cached (read-only arrays): the same record
    is often graded again."""
    steps = _steps()
    calls = CALLS_PER_STEP[integrator]
    if list(per_step) != [calls] * steps:
        where = next((k for k, n in enumerate(per_step) if n != calls), len(per_step))
        return None, None, (f"under {integrator} the record does not show {calls} feedback call(s) in "
                            f"each of {steps} steps (step {where} differs): tick must not call mj_forward "
                            "or mj_step")
    try:
        rows = _unpack(packed, 3, calls * steps)
    except (ValueError, binascii.Error, zlib.error):
        return None, None, f"the {integrator} run's packed numbers cannot be read"
    if len(rows) != calls * steps:
        return None, None, f"the {integrator} record holds {len(rows)} feedback calls, not {calls * steps}"
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
        return None, None, state["wrong"]
    angles.setflags(write=False)
    rows.setflags(write=False)
    return angles, rows, ""


def pi_law(rows: np.ndarray, calls: int, h: float, target: float = TARGET, ki: float = KI) -> np.ndarray:
    """The exercise's control at every recorded feedback call: ``KP·(target − q) − KV·q̇ + ki·z``
    (N·m) with q, q̇ the state the call saw (``rows[:, 0]``, ``rows[:, 1]``) and z the integral
    that ``tick`` advanced once before the step, ``z_k = Σ_{i≤k} h·(target − q_i)`` (rad·s), q_i
    the angle at the start of step i (what its first feedback call saw).  ``calls``: feedback
    calls per step; ``h``: the timestep, s; ``target``, ``ki``: the variant's (default
    :data:`TARGET`, :data:`KI`).  Returns shape (len(rows),)."""
    integral = np.cumsum(h * (target - rows[::calls, 0]))
    return KP * (target - rows[:, 0]) - KV * rows[:, 1] + ki * np.repeat(integral, calls)


LAW_TOLERANCE = 1e-9
"""Relative (and absolute, in N·m) tolerance of the recomputed law: round-off of a sum of 1500
terms is ~1e-13, while advancing the integral one step late already changes ctrl by KI·h·error."""


def _law_breach(rows: np.ndarray, integrator: str, target: float = TARGET, ki: float = KI) -> str:
    """"" if every recorded control of the run is :func:`pi_law` of the state it saw (to
    :data:`LAW_TOLERANCE`), with the variant's ``target`` and ``ki``, else where and how it is not."""
    calls = CALLS_PER_STEP[integrator]
    h = mujoco.MjModel.from_xml_string(COUNTER_XML).opt.timestep
    law = pi_law(rows, calls, h, target, ki)
    off = np.abs(rows[:, 2] - law) > LAW_TOLERANCE * (1 + np.abs(law))
    if not off.any():
        return ""
    k = int(np.argmax(off))
    # the chapter's mistake: the integral advanced in feedback, at every call (four per RK4 step)
    naive = KP * (target - rows[:, 0]) - KV * rows[:, 1] + ki * np.cumsum(h * (target - rows[:, 0]))
    if calls > 1 and np.all(np.abs(rows[:, 2] - naive) <= LAW_TOLERANCE * (1 + np.abs(naive))):
        return (f"under {integrator} the integral grows at every feedback call, {calls} times per step: "
                "feedback updates state of its own")
    published = pi_law(rows, calls, h)
    if (target, ki) != (TARGET, KI) and np.all(np.abs(rows[:, 2] - published)
                                               <= LAW_TOLERANCE * (1 + np.abs(published))):
        return (f"under {integrator} feedback follows the law with the chapter's TARGET = {fmt(TARGET)} rad "
                f"and KI = {fmt(KI)}; your numbers are target {fmt(target)} rad and ki {fmt(ki)}")
    return (f"under {integrator}, feedback call {k} (step {k // calls}) left ctrl[0] = {fmt(rows[k, 2])} "
            f"N·m; KP·(target − q) − KV·q̇ + ki·z with target {fmt(target)} rad, ki {fmt(ki)} and z "
            f"advanced once per step in tick gives {fmt(law[k])} N·m")


def _controller_record(record: Any) -> dict[str, Any]:
    """A record of :func:`probe_controller`, validated for shape and types only
    (``{"runs": {"EULER": run, "RK4": run}}``, each run ``{"per_step": [int, ...], "feedback":
    text}``; AnswerError otherwise): its content is verified by the replay and the law."""
    if not (isinstance(record, dict) and set(record) == {"runs"} and isinstance(record["runs"], dict)
            and set(record["runs"]) == set(CALLS_PER_STEP)):
        raise AnswerError("the record of the function should hold its closed-loop runs, EULER and RK4, "
                          "and nothing else")
    for integrator, run in record["runs"].items():
        if not (isinstance(run, dict) and set(run) == {"per_step", "feedback"}
                and isinstance(run["feedback"], str) and isinstance(run["per_step"], list)
                and all(isinstance(n, int) and not isinstance(n, bool) for n in run["per_step"])):
            raise AnswerError(f"the record's {integrator} run is not a recorded run")
    return record


# the variants: targets of 0.5-1.5 rad and integral gains of 10-40 N·m/(rad·s), each away from the
# published 1 rad and 20 (the recomputed law then differs from the first call on, so neither the
# published controller nor a neighbour's passes).  The loop I·s³ + (KV + 0.1)·s² + KP·s + ki stays
# far inside Routh-Hurwitz (1.1·5 = 5.5 > I·ki ≤ 0.6), and its slowest pole, ≈ ki/KP ≥ 2 /s, has
# brought the step to within 2 mrad of its target after 3 s on every variant (measured), inside the
# 0.01 rad that "holds the target" asks
TARGET_PARAM = Param(TARGET, 0.5, 1.5, 0.1, unit="rad", label="the angle the controller holds")
KI_PARAM = Param(KI, 10.0, 40.0, 5.0, unit="N·m/(rad·s)", label="the integral gain")


@checker("4.4", "Control state outside the callback", points=3,
         answers={"make_controller": recorded(probe_controller, "a function", validate=_controller_record)},
         params={"target": TARGET_PARAM, "ki": KI_PARAM})
def _control_state(ex: Exercise) -> None:
    target, ki = ex.param("target"), ex.param("ki")
    runs = ex.value("make_controller")["runs"]
    replayed: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    problem = ""
    for integrator in CALLS_PER_STEP:
        run = runs[integrator]
        angles, rows, problem = _replayed(integrator, run["feedback"], tuple(run["per_step"]))
        if problem:
            break
        replayed[integrator] = angles, rows
    # nothing in a record MuJoCo cannot reproduce is trusted
    ex.precondition(not problem, "the recorded runs replay in MuJoCo",
                    failure="your controller's run cannot be verified: " + problem
                            + " (tick and feedback may change nothing but data.ctrl[0] and their own state)")
    # the law recomputed from the states each call saw replaces any self-report: it proves that
    # both runs came from the one controller of the exercise
    breach = {integrator: _law_breach(rows, integrator, target, ki)
              for integrator, (_, rows) in replayed.items()}
    ex.require(not any(breach.values()),
               "at every recorded call, feedback gives KP·(target − q) − KV·q̇ + ki·z with your target and "
               "ki, z advanced once per step",
               failure="; ".join(why for why in breach.values() if why),
               hint="move every state update (the integral) into tick; feedback only reads")
    euler, rk4 = replayed["EULER"][0], replayed["RK4"][0]
    # both trajectory checks follow from the law; they count only for the runs that follow it (a
    # stateless high-gain law holds the target, and any stateless law agrees under both integrators)
    other = "the runs follow another law than the exercise's (above)"
    held = abs(euler[-1] - target) < 0.01
    ex.require(held and not breach["EULER"], "the integral term holds the target against the load",
               failure=(f"after {fmt(SECONDS)} s the angle is {fmt(euler[-1])} rad instead of {fmt(target)}"
                        if not held else f"it holds the target, but {other}"),
               hint="the integral accumulates h·(target − q) once per step, and the control adds ki·integral")
    gap = float(np.abs(rk4 - euler).max())
    ex.require(gap < 0.05 and not any(breach.values()), "RK4 and Euler trajectories agree to within 0.05 rad",
               failure=f"they differ by up to {fmt(gap)} rad" if gap >= 0.05 else f"they agree, but {other}",
               hint="under RK4 mjcb_control runs four times per step")
