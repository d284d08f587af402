"""Checkers of chapters 04–06: reference answers earn full marks, blank ones nothing, typical
mistakes get their own explanation, and a tampered record of exercise 4.4 is worthless.

Every answer goes through ``labkit.exercises.answers_of`` (data, read back from JSON) and
``spec(number).grade`` — exactly the path of a notebook's feedback cell and of the grader.
The reference answers are derived here from the physics, never read from a notebook.
"""

from __future__ import annotations

import copy
import json

import mujoco
import numpy as np
import pytest

import labkit
from labkit.exercises import answers_of, ch04, spec
from labkit.exercises.answers import MAX_BYTES

G = 9.81


def grade(number, **namespace):
    return spec(number).grade(answers_of(number, namespace))


def passed(exercise):
    return {r.requirement: r.passed for r in exercise.results}


# -- reference answers, from first principles ---------------------------------------------

def ctrl_index(model, actuator, name):
    """The slot of ``name`` in the actuator's packed block of data.ctrl."""
    i = model.actuator(actuator).id
    for k in range(model.actuator_ctrlnum[i]):
        if mujoco.mj_actuatorInputName(model, i, k) == name:
            return int(model.actuator_ctrladr[i] + k)
    raise KeyError(name)


def make_controller():
    """PI with the integral advanced once per step in tick; feedback only reads."""
    state = {"z": 0.0}

    def tick(model, data):
        state["z"] += model.opt.timestep * (ch04.TARGET - data.qpos[0])

    def feedback(model, data):
        error = ch04.TARGET - data.qpos[0]
        data.ctrl[0] = ch04.KP * error - ch04.KV * data.qvel[0] + ch04.KI * state["z"]
    return tick, feedback


def naive_controller():
    """The chapter's mistake: the integral advanced in the callback (four times per RK4 step)."""
    state = {"z": 0.0}

    def feedback(model, data):
        error = ch04.TARGET - data.qpos[0]
        state["z"] += model.opt.timestep * error
        data.ctrl[0] = ch04.KP * error - ch04.KV * data.qvel[0] + ch04.KI * state["z"]
    return (lambda m, d: None), feedback


def _limit_solref():
    _, arm_data = labkit.load("solver_limit")
    a0 = 2.0 / arm_data.M[0]                           # τ / I about the hinge
    return (np.sqrt(0.05 / ((1 - 0.95) * a0)), 1.0)   # depth = a0·(1 − dmax)·timeconst² at d = dmax


_W_RUBBER = 2 / (2 + 1)                                # solmix weight of the rubber
# 5.3: constant impedance d = 0.9: depth = (1 − d)·g·(τζ)² = 1 mm fixes τζ; overshoot 25 % fixes ζ
_TZ = np.sqrt(1e-3 / ((1 - 0.9) * G))
_ZETA_25 = -np.log(0.25) / np.sqrt(np.pi**2 + np.log(0.25) ** 2)
# 6.3: from rest, v² = 2·g·(sin θ − μ cos θ)·d: 1 m/s after 0.3 m down a 30° chute
_THETA = np.radians(30)
_MU_CHUTE = (np.sin(_THETA) - 1.0**2 / (2 * G * 0.3)) / np.cos(_THETA)

REFERENCE = {
    "4.1": dict(is_bug=False, max_total=3 * 1.0 + 1.0,  # drive: gear 3 × forcerange 1; servo: 1
                hip_attrs='actuatorfrcrange="-2.5 2.5"'),
    "4.2": dict(actrange=(-np.radians(30), np.radians(30))),
    "4.3": dict(ctrl_index=ctrl_index),
    "4.4": dict(make_controller=make_controller),
    "5.1": dict(block_solref=(2 * 0.002, 1.0), block_solimp=(0.95, 0.99, 0.001, 0.5, 2)),
    "5.2": dict(block_depth=labkit.solver.rest_penetration((0.01, 1), (0.95, 0.99, 0.002, 0.5, 2),
                                                           timestep=0.001, accel=G / 4)),
    "5.3": dict(solref_critical=(_TZ, 1.0), solref_bouncy=(_TZ / _ZETA_25, _ZETA_25)),
    "5.4": dict(limit_solref=_limit_solref()),
    "6.1": dict(masks={"left": (2, 0), "right": (2, 0), "cube": (1, 3)}),
    "6.2": dict(mixed_sliding=max(1.2, 0.4), mixed_rolling=max(0.0001, 0.0004),
                mixed_timeconst=_W_RUBBER * 0.01 + (1 - _W_RUBBER) * 0.04,
                mixed_dampratio=_W_RUBBER * 1.0 + (1 - _W_RUBBER) * 0.5),
    "6.3": dict(mu_chute=_MU_CHUTE),
}

TITLES = {"4.1": ("Several actuators, one joint", 3), "4.2": ("Clamp the setpoint, not the rate", 3),
          "4.3": ("Find a packed input by name", 2), "4.4": ("Control state outside the callback", 3),
          "5.1": ("Rest with at most 20 µm penetration", 3),
          "5.2": ("Predict the resting depth of a block on four contacts", 2),
          "5.3": ("A critically damped and an under-damped contact, 1 mm deep", 3),
          "5.4": ("Soften a joint limit to a given stop depth", 2),
          "6.1": ("Fingers that grip but do not clash", 3), "6.2": ("Rubber on steel", 4),
          "6.3": ("A friction coefficient for an exit speed", 3)}


@pytest.mark.parametrize("number", sorted(REFERENCE))
def test_the_reference_answer_earns_full_marks(number):
    assert (spec(number).title, spec(number).points) == TITLES[number]
    graded = grade(number, **REFERENCE[number])
    assert graded.passed and graded.score == spec(number).points, graded.text()
    assert mujoco.get_mjcb_control() is None


@pytest.mark.parametrize("number", sorted(REFERENCE))
def test_a_blank_submission_earns_nothing(number):
    graded = grade(number)
    assert graded.score == 0, graded.text()
    assert "you have not defined" in graded.text()


# -- typical mistakes ----------------------------------------------------------------------

def test_4_1_mistakes():
    graded = grade("4.1", is_bug=True, max_total=2.0, hip_attrs='actuatorfrcrange="-4 4"')
    text = graded.text()
    assert graded.score == 0.75, text                  # only the actuators' own outputs are right
    assert "forgets the drive's gear of 3" in text and "the largest joint torque is 4 N·m" in text
    shrunk = grade("4.1", **dict(REFERENCE["4.1"], hip_attrs='actuatorfrcrange="-1 1"'))
    assert not passed(shrunk)["the joint receives at most 2.5 N·m, and the full 2.5 N·m is still available"]


def test_4_1_attributes_cannot_smuggle_xml_into_the_model():
    attack = 'actuatorfrcrange="-2.5 2.5"/></body><body><joint name="x"'
    graded = grade("4.1", **dict(REFERENCE["4.1"], hip_attrs=attack))
    assert graded.score == 1.5 and "is not a list of XML attributes" in graded.text()
    with pytest.raises(ValueError):
        ch04.extreme_torques('"/><include file="/etc/passwd"/><joint a="')


def test_4_2_degrees_in_actrange():
    graded = grade("4.2", actrange=(-30, 30))
    assert graded.score < 3 and "it reached -1 … 1 rad" in graded.text()


def test_4_3_canonical_offsets_and_a_table_fail():
    def offsets(model, actuator, name):          # the mistake of the exercise: slots by canonical position
        canonical = {"pos": 0, "vel": 1, "ff": 2, "qw": 0, "qx": 1, "qy": 2, "qz": 3,
                     "rx": 0, "ry": 1, "rz": 2}
        return int(model.actuator_ctrladr[model.actuator(actuator).id] + canonical[name])

    graded = grade("4.3", ctrl_index=offsets)
    text = graded.text()
    assert graded.score < 2 and "it returned 2, which feeds spin.ff" in text, text
    assert "not an index into data.ctrl" in text

    shown = {(3, "spin", "vel"): 1, (3, "spin", "ff"): 2, (8, "spin", "ff"): 6, (8, "gaze", "qz"): 3}

    def table(model, actuator, name):            # learnt from the two printed layouts
        return shown.get((model.nu, actuator, name), 0)

    graded = grade("4.3", ctrl_index=table)
    assert 0 < graded.score < 2, graded.text()
    assert all(ok for req, ok in passed(graded).items() if "PID_XML" in req or "LAYOUT_XML" in req)
    assert not any(ok for req, ok in passed(graded).items() if "third layout" in req)

    def broken(model, actuator, name):
        raise RuntimeError("no idea")

    assert "it raised RuntimeError: no idea" in grade("4.3", ctrl_index=broken).text()
    assert "should be a function" in grade("4.3", ctrl_index=3).text()


def test_4_4_integral_in_the_callback_fails_purity_and_agreement():
    graded = grade("4.4", make_controller=naive_controller)
    results = passed(graded)
    assert not results["calling feedback twice on the same state gives the same control"]
    assert not results["RK4 and Euler trajectories agree to within 0.05 rad"]
    assert "feedback updates state of its own" in graded.text()
    assert mujoco.get_mjcb_control() is None


def test_4_4_a_proportional_controller_does_not_hold_the_target():
    def p_only():
        return (lambda m, d: None), lambda m, d: d.ctrl.__setitem__(0, ch04.KP * (ch04.TARGET - d.qpos[0]))

    graded = grade("4.4", make_controller=p_only)
    assert not passed(graded)["the integral term holds the target against the load"]
    assert "after 3 s the angle is" in graded.text()


def test_4_4_record_is_compact():
    data = answers_of("4.4", {"make_controller": make_controller})
    assert "value" in data["make_controller"], data
    size = len(json.dumps(data["make_controller"]["value"]))
    assert size < 0.8 * MAX_BYTES, size
    runs = data["make_controller"]["value"]["runs"]
    assert runs["RK4"]["per_step"] == [4] * 1500 and runs["EULER"]["per_step"] == [1] * 1500
    rows = ch04._unpack(runs["RK4"]["feedback"], 3, 6000)
    assert rows.shape == (6000, 3) and rows[0, 0] == 0.0          # the first call sees the initial state


def _tampered(change):
    data = answers_of("4.4", {"make_controller": make_controller})
    record = copy.deepcopy(data["make_controller"]["value"])
    change(record)
    return spec("4.4").grade({"make_controller": {"value": json.loads(json.dumps(record))}})


def _edit_rows(integrator, edit):
    def change(record):
        run = record["runs"][integrator]
        rows = ch04._unpack(run["feedback"], 3, 4 * 1500).copy()
        rows = edit(rows, run)
        run["feedback"] = ch04._pack(rows)
    return change


def _nudge(row, column, by):
    def edit(rows, run):
        rows[row, column] += by
        return rows
    return edit


def _remove(row):
    def edit(rows, run):
        run["per_step"][row // (4 if len(rows) > 1500 else 1)] -= 1
        return np.delete(rows, row, axis=0)
    return edit


@pytest.mark.parametrize("change", [
    _edit_rows("RK4", _nudge(2000, 2, 1e-3)),          # one control value
    _edit_rows("EULER", _nudge(700, 2, -0.5)),
    _edit_rows("RK4", _nudge(10, 0, 1e-9)),            # one state the controller saw
    _edit_rows("EULER", _nudge(1499, 1, 1e-6)),
    _edit_rows("RK4", _remove(3001)),                  # one call removed (and its count fixed)
    _edit_rows("EULER", lambda rows, run: rows[:-1]),  # one call removed (count left alone)
    lambda record: record["runs"].pop("RK4"),
    lambda record: record["runs"]["EULER"].update(feedback="not base64!"),
    lambda record: record.update(runs=[]),
], ids=["rk4-ctrl", "euler-ctrl", "rk4-qpos", "euler-qvel", "rk4-removed", "euler-removed", "no-rk4",
        "garbage", "no-runs"])
def test_4_4_a_tampered_record_earns_nothing(change):
    graded = _tampered(change)
    assert graded.score == 0, graded.text()
    assert "cannot be verified" in graded.text()
    assert mujoco.get_mjcb_control() is None


def test_4_4_a_record_from_an_other_plant_fails_the_replay():
    def cheat(record):                                   # the reference run without the load torque
        heavy = ch04.LOAD
        try:
            ch04.LOAD = 0.0
            fake = answers_of("4.4", {"make_controller": make_controller})["make_controller"]["value"]
            record["runs"] = fake["runs"]
        finally:
            ch04.LOAD = heavy
    assert _tampered(cheat).score == 0


def test_4_4_a_controller_that_changes_the_state_fails_the_replay():
    def helping():
        tick, feedback = make_controller()

        def pushy(model, data):
            feedback(model, data)
            data.qfrc_applied[0] = 0.0                   # quietly removes the load
        return tick, pushy

    graded = grade("4.4", make_controller=helping)
    assert graded.score == 0 and "cannot be verified" in graded.text()


def test_5_1_mistakes():
    clamped = grade("5.1", block_solref=(0.001, 1), block_solimp=(0.95, 0.99, 0.001, 0.5, 2))
    assert clamped.score < 3 and "is silently raised to 0.004 s" in clamped.text()
    deep = grade("5.1", block_solref=(0.02, 1), block_solimp=(0.9, 0.95, 0.001, 0.5, 2))
    assert not passed(deep)["the block rests at most 20 µm deep"] and "µm deep" in deep.text()


def test_5_2_one_contact_instead_of_four():
    sphere = labkit.solver.rest_penetration((0.01, 1), (0.95, 0.99, 0.002, 0.5, 2), timestep=0.001)
    graded = grade("5.2", block_depth=sphere)
    assert graded.score == 0 and "a single contact carrying the whole weight" in graded.text()


def test_5_3_swapped_damping_ratios_and_the_chapters_values():
    graded = grade("5.3", solref_critical=(_TZ / _ZETA_25, _ZETA_25), solref_bouncy=(_TZ, 1.0))
    results = passed(graded)
    assert not results["solref_critical overshoots by at most 1 %"]
    assert not results["solref_bouncy overshoots by 20-30 %"]
    assert graded.score < 3 and "it overshoots" in graded.text()
    copied = grade("5.3", solref_critical=(0.02, 1.0), solref_bouncy=(0.02, 0.3))   # section 3's values
    results = passed(copied)
    assert not results["solref_critical rests 1 mm (±5 %) deep"]
    assert not results["solref_bouncy overshoots by 20-30 %"]
    assert "it rests 0.3924 mm deep" in copied.text()
    same_tau = grade("5.3", solref_critical=(_TZ, 1.0), solref_bouncy=(_TZ, _ZETA_25))  # τ kept, not τζ
    assert not passed(same_tau)["solref_bouncy rests 1 mm (±5 %) deep"]
    slow = grade("5.3", solref_critical=(_TZ / 5, 5.0), solref_bouncy=(_TZ / _ZETA_25, _ZETA_25))
    assert not passed(slow)["solref_critical reaches 90 % of its depth within 0.2 s"]
    direct = grade("5.3", solref_critical=(-2500, -100), solref_bouncy=(0.02, 0.3))
    assert not passed(direct)["`solref_critical` uses the positive (timeconst, dampratio) format"]


def test_5_4_gravity_instead_of_the_motor_and_a_swinging_arm():
    wrong = grade("5.4", limit_solref=(np.sqrt(0.05 / ((1 - 0.95) * G)), 1.0))
    assert wrong.score == 0 and "it rests 0.32" in wrong.text()
    timeconst = _limit_solref()[0]
    swinging = grade("5.4", limit_solref=(timeconst, 0.01))   # passes through 0.05 rad, never rests there
    assert swinging.score == 0 and "it has not settled" in swinging.text()


def test_6_1_default_masks_collide_everything():
    graded = grade("6.1", masks={"left": (1, 1), "right": (1, 1), "cube": (1, 1)})
    assert graded.score == 1.5 and "MuJoCo generates it" in graded.text()
    missing = grade("6.1", masks={"left": (2, 0), "cube": (1, 3)})
    assert missing.score == 0 and "`masks` has no entry 'right'" in missing.text()
    negative = grade("6.1", masks={"left": (2, -1), "right": (2, 0), "cube": (1, 3)})
    assert negative.score == 0 and "non-negative integers" in negative.text()


def test_6_2_averages_instead_of_maxima():
    graded = grade("6.2", mixed_sliding=0.8, mixed_rolling=0.0001, mixed_timeconst=0.025,
                   mixed_dampratio=2 / 3)
    text = graded.text()
    assert graded.score == 0
    for why in ("that is the plain average; friction takes the maximum", "that is the rubber's value",
                "that is the plain average; solmix weights it", "that gives the steel the larger weight"):
        assert why in text


def test_6_3_the_threshold_and_the_distance_formula_miss_the_speed():
    held = grade("6.3", mu_chute=np.tan(_THETA))                       # Coulomb's threshold: it holds
    assert held.score == 0 and "does not get 0.3 m down the chute" in held.text()
    in_one_second = (np.sin(_THETA) - 2 * 0.3 / G) / np.cos(_THETA)    # ½·a·t² = 0.3 m with t = 1 s
    graded = grade("6.3", mu_chute=in_one_second)
    assert passed(graded)["the part slides down the 30° chute"]
    assert graded.score == 1.5 and "it passes 0.3 m at 0.59" in graded.text()
    assert grade("6.3", mu_chute=-0.1).score == 0


def test_5_1_a_clamped_impedance_is_not_the_value_mujoco_uses():
    graded = grade("5.1", block_solref=(0.004, 1), block_solimp=(0.95, 1.5, 0.001, 0.5, 2))
    assert not passed(graded)["MuJoCo uses block_solimp as written (not clamped)"]
    assert graded.score < 3 and "is clamped" in graded.text()
