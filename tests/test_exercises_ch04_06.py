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
from labkit.exercises import answers_of, ch04, ch05, spec
from labkit.exercises.answers import MAX_BYTES

G = 9.81


def grade(number, **namespace):
    return spec(number).grade(answers_of(number, namespace))


def passed(exercise):
    return {r.requirement: r.passed for r in exercise.results}


LAW = ("at every recorded call, feedback gives KP·(target − q) − KV·q̇ + ki·z with your target and ki, "
       "z advanced once per step")


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
    # the two-link arm: the limit row's a0 is τ·(M⁻¹)[0, 0] at qpos0 (the forearm free), not τ/M[0, 0]
    arm, arm_data = labkit.load(ch05.TWO_LINK_ARM, keyframe="at_limit")
    mujoco.mj_forward(arm, arm_data)
    full = np.zeros((arm.nv, arm.nv))
    mujoco.mj_fullM(arm, arm_data, full)
    a0 = 2.0 * np.linalg.inv(full)[0, 0]
    # solimplimit (0.5, 0.95, 0.1, 0.5, 2): 0.05 rad is its midpoint, d = 0.5 + 0.5·0.45
    d, dmax = 0.725, 0.95
    # rest: K·d²·δ = (1 − d)·a0 with K = 1/(dmax·τ)²
    return (d / dmax * np.sqrt(0.05 / ((1 - d) * a0)), 1.0)


def _block_depth():
    # four corners share 2 kg·g; a condim-3 pyramidal contact with μ = 0.5 scales |a0| by μ²(1 + μ²)/2
    return labkit.solver.rest_penetration((0.01, 1), (0.95, 0.99, 0.002, 0.5, 2), timestep=0.001,
                                          accel=G / 4 * 0.5**2 * (1 + 0.5**2) / 2)


_W_RUBBER = 2 / (2 + 1)                                # solmix weight of the rubber
# 5.1: a flat impedance at τ = 2h, ζ = 1: each corner row carries m·g/4 with the block's 1/m, so it
# rests (1 − d)·(g/4)·τ² deep
_D_BLOCK = 1 - 20e-6 / (G / 4 * 0.004**2)
# 5.3: 1 mm is the default solimp's width, so d = dmax = 0.95 at rest: depth = (1 − d)·g·(τζ)² fixes
# τζ. The impedance rises along the transient, so the overshoot is measured over ζ at that τζ
_TZ = np.sqrt(1e-3 / ((1 - 0.95) * G))
_ZETA_25 = -np.log(0.25) / np.sqrt(np.pi**2 + np.log(0.25) ** 2)   # a flat impedance's 25 %


def _settle_overshoots():
    overshoot = {}
    for zeta in np.arange(0.5, 1.6, 0.05):
        depth = ch05.settle((_TZ / zeta, zeta), ch05.SETTLE_SOLIMP, seconds=0.5)["depth"]
        overshoot[zeta] = depth.max() / depth[-1] - 1
    return overshoot


def _settle_reference():
    overshoot = _settle_overshoots()
    critical = min(z for z, o in overshoot.items() if o <= 0.005)
    bouncy = min(overshoot, key=lambda z: abs(overshoot[z] - 0.25))
    return dict(solref_critical=(_TZ / critical, critical), solref_bouncy=(_TZ / bouncy, bouncy))
# 6.3: from rest, v² = 2·g·(sin θ − μ cos θ)·d: 1 m/s after 0.3 m down a 30° chute; the part's
# friction decides only with a priority above the liner's 1 (equal priority: the larger, 0.6)
_THETA = np.radians(30)
_MU_CHUTE = (np.sin(_THETA) - 1.0**2 / (2 * G * 0.3)) / np.cos(_THETA)

REFERENCE = {
    "4.1": dict(is_bug=False, max_total=3 * 1.0 + 1.0,  # drive: gear 3 × forcerange 1; servo: 1
                hip_attrs='actuatorfrcrange="-2.5 2.5"'),
    "4.2": dict(actrange=(-2 * np.radians(30), 2 * np.radians(30))),   # the servo's length: gear 2 × angle
    "4.3": dict(ctrl_index=ctrl_index),
    "4.4": dict(make_controller=make_controller),
    "5.1": dict(block_solref=(2 * 0.002, 1.0), block_solimp=(_D_BLOCK, _D_BLOCK, 0.001, 0.5, 2)),
    "5.2": dict(block_depth=_block_depth()),
    "5.3": _settle_reference(),
    "5.4": dict(limit_solref=_limit_solref()),
    "6.1": dict(masks={"left": (2, 0), "right": (2, 0), "cube": (1, 3)}),
    "6.2": dict(mixed_sliding=max(1.2, 0.4), mixed_rolling=max(0.0001, 0.0004),
                mixed_timeconst=_W_RUBBER * 0.01 + (1 - _W_RUBBER) * 0.04,
                mixed_dampratio=_W_RUBBER * 1.0 + (1 - _W_RUBBER) * 0.5),
    "6.3": dict(part_friction=_MU_CHUTE, part_priority=2),
}

TITLES = {"4.1": ("Several actuators, one joint", 3), "4.2": ("Clamp the setpoint, not the rate", 3),
          "4.3": ("Find a packed input by name", 2), "4.4": ("Control state outside the callback", 3),
          "5.1": ("A block that rests at a given depth on its four corners", 3),
          "5.2": ("Predict the resting depth of a block on four pyramidal contacts", 2),
          "5.3": ("No overshoot and a 25 % overshoot, both at a given depth", 3),
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
    # "each actuator's own output is unchanged" is met by any attribute that limits nothing: it counts
    # only once the joint is limited as asked (it earned 0.75 here)
    assert graded.score == 0, text
    assert "forgets the drive's gear of 3" in text and "the largest joint torque is 4 N·m" in text
    shrunk = grade("4.1", **dict(REFERENCE["4.1"], hip_attrs='actuatorfrcrange="-1 1"'))
    assert not passed(shrunk)["the joint receives at most 2.5 N·m, and the full 2.5 N·m is still available"]
    assert shrunk.score == 1.5                         # the verdict with its number


def test_4_1_the_verdict_alone_or_an_empty_string_earns_nothing():
    # is_bug = False (a coin toss) and hip_attrs = "" (the hip as it is) earned 0.75 each
    assert grade("4.1", is_bug=False).score == 0
    graded = grade("4.1", is_bug=False, max_total=3.0, hip_attrs="")
    assert graded.score == 0 and "it counts together with `max_total`" in graded.text()
    assert "this counts once the joint is limited as asked" in graded.text()
    wrong_verdict = grade("4.1", is_bug=True, max_total=4.0, hip_attrs=REFERENCE["4.1"]["hip_attrs"])
    assert wrong_verdict.score == 2.25 and "`is_bug` is not right" in wrong_verdict.text()


def test_4_1_attributes_cannot_smuggle_xml_into_the_model():
    attack = 'actuatorfrcrange="-2.5 2.5"/></body><body><joint name="x"'
    graded = grade("4.1", **dict(REFERENCE["4.1"], hip_attrs=attack))
    assert graded.score == 1.5 and "is not a list of XML attributes" in graded.text()
    with pytest.raises(ValueError):
        ch04.extreme_torques('"/><include file="/etc/passwd"/><joint a="')


def test_4_2_degrees_in_actrange():
    graded = grade("4.2", actrange=(-30, 30))            # the degrees the chapter shows just before
    assert graded.score == 0 and "it aimed at -0.75 … 0.75 rad" in graded.text()   # 15 s at 0.1/s, gear 2
    assert "but so does the servo with no clamp at all" in graded.text()


def test_4_2_the_joint_range_in_radians_forgets_the_gear():
    # the chapter's own servo (gear 1) is right with the joint range in radians; behind gear 2 its
    # activation is a length, gear × angle, and the hinge then covers only half its range
    graded = grade("4.2", actrange=(-np.radians(30), np.radians(30)))
    assert graded.score == 0 and "it only reached -0.2626 … 0.2626 rad" in graded.text(), graded.text()
    assert "chapter 03 §4" in graded.text()
    wider = grade("4.2", actrange=(-1.0, 1.0))           # a little inside ±1.047: still within 5 %
    assert wider.score == spec("4.2").points, wider.text()


@pytest.mark.parametrize("actrange", [(0, 0), (1, 1), (1, 0), (-0.01, 0.01), (-0.3, 0.3), (-1.2, 1.2)])
def test_4_2_a_servo_that_cannot_move_or_has_no_clamp_earns_nothing(actrange):
    # (0, 0) and (1, 1) are no clamp at all (the runaway servo); (-0.01, 0.01) a clamp too narrow to
    # move: each meets one of the two one-sided requirements alone; (-1.2, 1.2) lets the target
    # pass the limit by 0.08 rad
    graded = grade("4.2", actrange=actrange)
    assert graded.score == 0, graded.text()


def test_4_2_an_actrange_beyond_any_setpoint_is_refused():
    graded = grade("4.2", actrange=(-1e4, 1e4))
    assert graded.score == 0 and "beyond ±1000 rad it is no bound here" in graded.text()


def offsets(model, actuator, name):
    """Exercise 4.3's mistake: slots by their canonical position."""
    canonical = {"pos": 0, "vel": 1, "ff": 2, "qw": 0, "qx": 1, "qy": 2, "qz": 3, "rx": 0, "ry": 1, "rz": 2}
    return int(model.actuator_ctrladr[model.actuator(actuator).id] + canonical[name])


SHOWN = {(3, "spin", "vel"): 1, (3, "spin", "ff"): 2, (8, "spin", "ff"): 6, (8, "gaze", "qz"): 3}


def table(model, actuator, name):
    """Exercise 4.3 answered from the two printed layouts."""
    return SHOWN.get((model.nu, actuator, name), 0)


def graded_for_seed(number, seed, monkeypatch, **namespace):
    """Grade as labkit grade does with the probe seed ``seed``: in the kernel and in the scorer."""
    monkeypatch.setenv("LABKIT_PROBE_SEED", str(seed))
    return spec(number).grade(answers_of(number, namespace), seed=seed)


def test_4_3_canonical_offsets_and_a_table_fail():
    graded = grade("4.3", ctrl_index=offsets)
    text = graded.text()
    assert graded.score < 2 and "it returned 2, which feeds spin.ff" in text, text
    assert not passed(graded)[next(r for r in passed(graded) if ch04.UNSEEN in r)]

    graded = grade("4.3", ctrl_index=table)
    assert graded.score == 1, graded.text()             # the shown layouts, not the drawn one
    assert all(ok for req, ok in passed(graded).items() if "PID_XML" in req or "LAYOUT_XML" in req)
    assert not any(ok for req, ok in passed(graded).items() if ch04.UNSEEN in req)

    def broken(model, actuator, name):
        raise RuntimeError("no idea")

    assert "it raised RuntimeError: no idea" in grade("4.3", ctrl_index=broken).text()
    assert "should be a function" in grade("4.3", ctrl_index=3).text()
    assert "not an index into data.ctrl (nu = 3)" in grade("4.3", ctrl_index=lambda m, a, n: 99).text()


@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**40 + 3])
def test_4_3_the_reference_finds_every_input_of_every_drawn_layout(seed, monkeypatch):
    graded = graded_for_seed("4.3", seed, monkeypatch, ctrl_index=ctrl_index)
    assert graded.passed and graded.score == 2, graded.text()
    assert graded_for_seed("4.3", seed, monkeypatch, ctrl_index=offsets).score < 2    # always a gapped pid


def test_4_3_the_unseen_layout_is_drawn_from_the_seed():
    fresh = ch04.unseen_layout.__wrapped__                           # not the cached draw
    assert fresh(0) == fresh(0) == ch04.unseen_layout(0)            # the notebook's default: reproducible
    drawn = {ch04.unseen_layout(seed) for seed in range(20)}
    assert len(drawn) == 20 and len({xml for xml, _ in drawn}) == 20
    for seed in range(200):
        xml, asked = ch04.unseen_layout(seed)
        model = mujoco.MjModel.from_xml_string(xml)
        assert len(set(asked)) == ch04.UNSEEN_QUERIES
        assert len({ctrl_index(model, actuator, name) for actuator, name in asked}) == ch04.UNSEEN_QUERIES


def test_4_3_a_record_made_for_one_seed_does_not_transfer(monkeypatch):
    # a bare forged list of 8 numbers got 2/2; the unseen layout was a file anyone could read
    made = answers_of("4.3", {"ctrl_index": ctrl_index})        # the notebook's default seed, 0
    assert made["ctrl_index"]["value"]["seed"] == 0
    assert spec("4.3").grade(made, seed=0).score == 2
    moved = spec("4.3").grade(made, seed=1)
    assert moved.score == 0 and "it was made for the layout of seed 0" in moved.text()
    relabelled = copy.deepcopy(made)
    relabelled["ctrl_index"]["value"]["seed"] = 1                # the seed forged too
    graded = spec("4.3").grade(relabelled, seed=1)
    assert graded.score < 2 and not passed(graded)[next(r for r in passed(graded) if ch04.UNSEEN in r)]
    bare = spec("4.3").grade({"ctrl_index": {"value": [1, 2, 6, 3, 4, 2, 7, 5]}}, seed=0)
    assert bare.score == 0 and "seed and indices" in bare.text()


def test_4_3_no_constant_index_meets_a_requirement():
    for index in range(8):
        assert grade("4.3", ctrl_index=lambda m, a, n, i=index: i).score == 0, index


def test_4_4_integral_in_the_callback_fails_the_law_and_agreement():
    graded = grade("4.4", make_controller=naive_controller)
    results = passed(graded)
    assert not results[LAW]
    assert not results["RK4 and Euler trajectories agree to within 0.05 rad"]
    assert results["the integral term holds the target against the load"]      # Euler calls it once a step
    assert "feedback updates state of its own" in graded.text()
    assert graded.score == 1                            # it was 1.5 of 3 (with "no callback is left")
    assert mujoco.get_mjcb_control() is None


def test_4_4_a_proportional_controller_does_not_hold_the_target():
    def p_only():
        return (lambda m, d: None), lambda m, d: d.ctrl.__setitem__(0, ch04.KP * (ch04.TARGET - d.qpos[0]))

    graded = grade("4.4", make_controller=p_only)
    assert not passed(graded)["the integral term holds the target against the load"]
    assert "after 3 s the angle is" in graded.text()
    assert graded.score == 0


def test_4_4_a_stiff_or_idle_controller_earns_nothing():
    # an idle controller agrees under both integrators, a stiff one also holds the target: the
    # trajectory checks count only for runs that follow the exercise's law
    def stiff():
        return (lambda m, d: None), lambda m, d: d.ctrl.__setitem__(0, 100 * (ch04.TARGET - d.qpos[0])
                                                                   - 1.0 * d.qvel[0])

    graded = grade("4.4", make_controller=stiff)
    assert graded.score == 0 and "it holds the target, but the runs follow another law" in graded.text()
    idle = grade("4.4", make_controller=lambda: ((lambda m, d: None), (lambda m, d: None)))
    assert idle.score == 0, idle.text()


def test_4_4_the_integral_advanced_one_step_late_is_another_law():
    def late():
        state = {"z": 0.0, "error": 0.0}

        def tick(model, data):
            state["z"] += model.opt.timestep * state["error"]
            state["error"] = ch04.TARGET - data.qpos[0]

        def feedback(model, data):
            data.ctrl[0] = (ch04.KP * (ch04.TARGET - data.qpos[0]) - ch04.KV * data.qvel[0]
                            + ch04.KI * state["z"])
        return tick, feedback

    graded = grade("4.4", make_controller=late)
    assert not passed(graded)[LAW] and "feedback call 0 (step 0) left ctrl[0] = 5 N·m" in graded.text()


def test_4_4_the_law_is_recomputed_from_the_states_in_the_record():
    data = answers_of("4.4", {"make_controller": make_controller})
    for integrator, calls in ch04.CALLS_PER_STEP.items():
        run = data["make_controller"]["value"]["runs"][integrator]
        rows = ch04._unpack(run["feedback"], 3, calls * 1500)
        law = ch04.pi_law(rows, calls, 0.002)
        assert np.abs(rows[:, 2] - law).max() < 1e-12          # the reference: to round-off


def _record(controller):
    return copy.deepcopy(answers_of("4.4", {"make_controller": controller})["make_controller"]["value"])


def test_4_4_claims_in_a_forged_record_earn_nothing():
    # purity and callback_left were taken from the record as given: with them forged, the naive
    # controller went from 1.5 to 3 points
    honest = spec("4.4").grade({"make_controller": {"value": _record(naive_controller)}}).score
    forged = dict(_record(naive_controller), purity=[1.0, 1.0], callback_left=False)
    graded = spec("4.4").grade({"make_controller": {"value": forged}})
    assert graded.score <= honest and graded.score == 0 and "and nothing else" in graded.text()


def test_4_4_runs_of_two_controllers_do_not_make_one():
    def doubled():                                       # a PI with twice the integral gain
        state = {"z": 0.0}

        def tick(model, data):
            state["z"] += 2 * model.opt.timestep * (ch04.TARGET - data.qpos[0])

        def feedback(model, data):
            error = ch04.TARGET - data.qpos[0]
            data.ctrl[0] = ch04.KP * error - ch04.KV * data.qvel[0] + ch04.KI * state["z"]
        return tick, feedback

    right, other, naive = _record(make_controller), _record(doubled), _record(naive_controller)
    for euler, rk4 in ((right, other), (other, right), (right, naive)):
        mixed = {"runs": {"EULER": euler["runs"]["EULER"], "RK4": rk4["runs"]["RK4"]}}
        graded = spec("4.4").grade({"make_controller": {"value": mixed}})
        assert graded.score <= 1 and not passed(graded)[LAW], graded.text()
    # the naive controller's Euler run is the right controller's, bit for bit (one call per step):
    # with the right RK4 run it is the right record, and it passes
    same = {"runs": {"EULER": naive["runs"]["EULER"], "RK4": right["runs"]["RK4"]}}
    assert spec("4.4").grade({"make_controller": {"value": same}}).score == 3


def test_run_pi_leaves_no_callback_installed():
    # this was a requirement of 4.4, but it tests labkit's run_pi (its finally clause), not the learner
    tick, feedback = make_controller()
    ch04.run_pi("RK4", tick, feedback, seconds=0.01)
    assert mujoco.get_mjcb_control() is None

    def failing(model, data):
        raise RuntimeError("feedback fails")

    with pytest.raises(RuntimeError):
        ch04.run_pi("EULER", lambda m, d: None, failing, seconds=0.01)
    assert mujoco.get_mjcb_control() is None
    with pytest.raises(RuntimeError):
        ch04.run_pi("EULER", lambda m, d: failing(m, d), feedback, seconds=0.01)
    assert mujoco.get_mjcb_control() is None
    answers_of("4.4", {"make_controller": naive_controller})   # the probe, too
    assert mujoco.get_mjcb_control() is None


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
    lambda record: record["runs"]["EULER"].update(feedback="not base64!"),
], ids=["rk4-ctrl", "euler-ctrl", "rk4-qpos", "euler-qvel", "rk4-removed", "euler-removed", "garbage"])
def test_4_4_a_tampered_record_earns_nothing(change):
    graded = _tampered(change)
    assert graded.score == 0, graded.text()
    assert "cannot be verified" in graded.text()
    assert mujoco.get_mjcb_control() is None


@pytest.mark.parametrize("change", [
    lambda record: record["runs"].pop("RK4"),
    lambda record: record.update(runs=[]),
    lambda record: record["runs"]["RK4"].update(per_step=[True] * 1500),
    lambda record: record["runs"]["EULER"].update(extra=1),
], ids=["no-rk4", "no-runs", "booleans", "extra-field"])
def test_4_4_a_record_of_another_shape_is_refused_before_checking(change):
    graded = _tampered(change)
    assert graded.score == 0 and "run" in graded.text(), graded.text()
    assert "cannot be verified" not in graded.text()          # refused by the record's validator


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
    assert not passed(deep)["the block rests 20 µm (±5 %) deep"] and "µm deep" in deep.text()


def test_5_1_the_stiffest_preset_and_a_sphere_design_earn_nothing():
    # section 4's "stiffest at h = 2 ms" preset, printed for the sphere: the block rests ~2 µm deep
    preset = grade("5.1", block_solref=(0.004, 1), block_solimp=(0.95, 0.99, 0.001, 0.5, 2))
    assert preset.score == 0 and "✘ the block rests 20 µm (±5 %) deep" in preset.text()
    # designed for one contact under the whole weight (|a0| = g): the block rests a quarter as deep
    d_sphere = 1 - 20e-6 / (G * 0.004**2)
    sphere = grade("5.1", block_solref=(0.004, 1), block_solimp=(d_sphere, d_sphere, 0.001, 0.5, 2))
    assert sphere.score == 0 and "the block stands on four" in sphere.text(), sphere.text()


def test_5_1_mujocos_defaults_earn_nothing():
    # the defaults are not clamped, rest, and do not bounce: 2.4 points of 3 for writing nothing
    graded = grade("5.1", block_solref=(0.02, 1), block_solimp=(0.9, 0.95, 0.001, 0.5, 2))
    assert graded.score == 0 and "✘ the block rests 20 µm (±5 %) deep" in graded.text()
    assert "it does not bounce, but it does not rest 20 µm deep" in graded.text()
    soft = grade("5.1", block_solref=(1, 1), block_solimp=(0.9, 0.95, 0.001, 0.5, 2))
    assert soft.score == 0


def test_5_1_a_solref_mixing_signs_is_not_what_mujoco_uses():
    graded = grade("5.1", block_solref=(0.004, -1), block_solimp=(0.95, 0.99, 0.001, 0.5, 2))
    assert graded.score == 0 and "replaced by the default (0.02, 1)" in graded.text()


@pytest.mark.parametrize(("number", "answers", "message"), [
    ("5.1", dict(block_solref=(5.0, 1), block_solimp=(0.95, 0.99, 0.001, 0.5, 2)), "at most 1 s"),
    ("5.1", dict(block_solref=(0.004, 1), block_solimp=(0.95, 0.99, 5.0, 0.5, 2)), "far below 1 m"),
    ("5.3", dict(solref_critical=(0.03, 1e4), solref_bouncy=(0.03, 0.4)), "a dampratio of at most 100"),
    ("5.4", dict(limit_solref=(-1e300, -1)), "stiffness of at most 1e7"),
])
def test_5_x_a_solref_or_solimp_outside_its_range_is_refused(number, answers, message):
    graded = grade(number, **answers)
    assert graded.score == 0 and message in graded.text(), graded.text()


def test_5_2_one_contact_instead_of_four_and_the_elliptic_share():
    def rest(accel):
        return labkit.solver.rest_penetration((0.01, 1), (0.95, 0.99, 0.002, 0.5, 2), timestep=0.001,
                                              accel=accel)

    for depth, why in ((rest(G), "a single frictionless contact carrying the whole weight"),
                       (rest(G / 4), "the block on four elliptic contacts"),
                       (rest(G * 0.5**2 * 1.25 / 2), "a single pyramidal contact"),
                       (G / 4 * 0.5**2 * 1.25 / 2 * 0.01 * 0.01**2, "the constant-impedance formula")):
        graded = grade("5.2", block_depth=depth)
        assert graded.score == 0 and why in graded.text(), graded.text()


def test_5_3_the_flat_impedance_formulas_do_not_fit_this_transient():
    # dampratio 1 and the overshoot formula's ζ for 25 %: right depth, wrong transients (3.3 %, 49 %)
    formula = grade("5.3", solref_critical=(_TZ, 1.0), solref_bouncy=(_TZ / _ZETA_25, _ZETA_25))
    results = passed(formula)
    assert not results["solref_critical overshoots by at most 1 %"]
    assert not results["solref_bouncy overshoots by 20-30 %"]
    assert results["solref_bouncy rests 1 mm (±5 %) deep"]
    assert formula.score < 3 and "measure the overshoot with settle" in formula.text()


def test_5_3_swapped_damping_ratios_and_the_chapters_values():
    reference = _settle_reference()
    graded = grade("5.3", solref_critical=reference["solref_bouncy"],
                   solref_bouncy=reference["solref_critical"])
    results = passed(graded)
    assert not results["solref_critical overshoots by at most 1 %"]
    assert not results["solref_bouncy overshoots by 20-30 %"]
    assert graded.score < 3 and "it overshoots" in graded.text()
    copied = grade("5.3", solref_critical=(0.02, 1.0), solref_bouncy=(0.02, 0.3))   # section 3's values
    results = passed(copied)
    assert not results["solref_critical rests 1 mm (±5 %) deep"]
    assert not results["solref_bouncy overshoots by 20-30 %"]
    assert "it rests 0.3" in copied.text()                  # the default contact's 0.37 mm
    same_tau = grade("5.3", solref_critical=(_TZ, 1.0), solref_bouncy=(_TZ, _ZETA_25))  # τ kept, not τζ
    assert not passed(same_tau)["solref_bouncy rests 1 mm (±5 %) deep"]
    slow = grade("5.3", solref_critical=(_TZ / 5, 5.0), solref_bouncy=reference["solref_bouncy"])
    assert not passed(slow)["solref_critical reaches 90 % of its depth within 0.2 s"]
    direct = grade("5.3", solref_critical=(-2500, -100), solref_bouncy=(0.02, 0.3))
    assert not passed(direct)["`solref_critical` uses the positive (timeconst, dampratio) format"]


@pytest.mark.parametrize("solref", [(1, 1), (0.02, 1), (1e-3, 5)])
def test_5_3_one_solref_for_both_earns_nothing(solref):
    # (1, 1) for both met "overshoots at most 1 %" (an overdamped crawl) and the two format checks:
    # 1.29 points of 3; a stiff, overdamped contact met the reach time as well
    graded = grade("5.3", solref_critical=solref, solref_bouncy=solref)
    assert graded.score == 0, graded.text()


def test_5_4_the_single_hinge_inertia_dmax_and_a_swinging_arm():
    arm, arm_data = labkit.load(ch05.TWO_LINK_ARM, keyframe="at_limit")
    mujoco.mj_forward(arm, arm_data)
    as_welded = 0.725 / 0.95 * np.sqrt(0.05 / ((1 - 0.725) * 2.0 / arm_data.M[0]))   # τ/M[0, 0]
    graded = grade("5.4", limit_solref=(as_welded, 1.0))
    assert graded.score == 0 and "as if the forearm were welded on" in graded.text(), graded.text()
    at_dmax = np.sqrt(0.05 / ((1 - 0.95) * 2.0 * arm.dof_invweight0[0]))            # d = dmax assumed
    graded = grade("5.4", limit_solref=(at_dmax, 1.0))
    assert graded.score == 0 and "inside solimplimit's width" in graded.text(), graded.text()
    timeconst = _limit_solref()[0]
    swinging = grade("5.4", limit_solref=(timeconst, 0.01))   # passes through 0.05 rad, never rests there
    assert swinging.score == 0 and "it has not settled" in swinging.text()
    other_split = grade("5.4", limit_solref=(timeconst / 2, 2.0))   # only timeconst·dampratio sets K
    assert other_split.score == 2, other_split.text()


def test_5_4_the_direct_format_is_refused():
    # the direct format (−dmax²·K, −dmax·B) of the reference's stiffness and damping rests 0.05 rad past
    # the limit too (it is the same row), but the exercise asks for a positive (timeconst, dampratio)
    timeconst, dampratio = _limit_solref()
    direct = (-1 / (timeconst * dampratio) ** 2, -2 / timeconst)      # dmax²·K = 1/(τζ)², dmax·B = 2/τ
    assert np.all(np.abs(ch05._stop(direct) - 0.05) <= 0.05 * 0.05)
    graded = grade("5.4", limit_solref=direct)
    assert graded.score == 0, graded.text()
    assert not passed(graded)["`limit_solref` uses the positive (timeconst, dampratio) format"]


def test_6_1_default_masks_collide_everything():
    # each half of the table pairs "contact" with "no contact": colliding everything (the default masks)
    # or nothing met the three one-sided halves of the table and earned 1.5 of 3
    graded = grade("6.1", masks={"left": (1, 1), "right": (1, 1), "cube": (1, 1)})
    assert graded.score == 0 and "left–right: MuJoCo generates it" in graded.text()
    nothing = grade("6.1", masks={"left": (0, 0), "right": (0, 0), "cube": (0, 0)})
    assert nothing.score == 0 and "cube–floor: MuJoCo does not generate it" in nothing.text()
    idle_pads = grade("6.1", masks={"left": (0, 0), "right": (0, 0), "cube": (1, 1)})   # pads touch nothing
    assert idle_pads.score == 0 and "this counts once the pads grip the cube" in idle_pads.text()
    off_the_floor = grade("6.1", masks={"left": (2, 0), "right": (2, 0), "cube": (2, 2)})
    assert off_the_floor.score == 1.5 and "cube–floor: MuJoCo does not generate it" in off_the_floor.text()
    missing = grade("6.1", masks={"left": (2, 0), "cube": (1, 3)})
    assert missing.score == 0 and "`masks` has no entry 'right'" in missing.text()
    negative = grade("6.1", masks={"left": (2, -1), "right": (2, 0), "cube": (1, 3)})
    assert negative.score == 0 and "non-negative integers" in negative.text()


def test_6_1_the_gripper_keeps_to_its_own_bit():
    # the right table on bit 3 is another student's answer: the published model reserves bit 2
    on_bit_3 = {"left": (4, 0), "right": (4, 0), "cube": (1, 5)}
    graded = grade("6.1", masks=on_bit_3)
    assert graded.score == 0 and "left uses bit 3" in graded.text() and "cube uses bit 3" in graded.text()
    assert spec("6.1").grade(answers_of("6.1", {"masks": on_bit_3}), values={"bit": 3}).score == 3
    both = spec("6.1").grade(answers_of("6.1", {"masks": {**on_bit_3, "cube": (1, 7)}}), values={"bit": 3})
    assert both.score == 0 and "cube uses bit 2" in both.text()


def test_6_2_averages_instead_of_maxima():
    graded = grade("6.2", mixed_sliding=0.8, mixed_rolling=0.0001, mixed_timeconst=0.025,
                   mixed_dampratio=2 / 3)
    text = graded.text()
    assert graded.score == 0
    for why in ("that is the plain average; friction takes the maximum", "that is the rubber's value",
                "that is the plain average; solmix weights it", "that gives the steel the larger weight"):
        assert why in text


def test_6_3_the_liner_wins_unless_the_part_has_the_higher_priority():
    # the right friction at the liner's priority (or below it): the contact takes the liner's 0.6 and holds
    for priority in (0, 1, -3):
        held = grade("6.3", part_friction=_MU_CHUTE, part_priority=priority)
        assert held.score == 0, held.text()
        assert "does not get 0.3 m down the chute in 3 s" in held.text()
        assert "sliding friction 0.6" in held.text()
    # believing the post's summary, that equal priorities average: 0.162 with the liner's 0.6 "gives" 0.381
    averaged = grade("6.3", part_friction=2 * _MU_CHUTE - 0.6, part_priority=0)
    assert averaged.score == 0 and "sliding friction 0.6" in averaged.text()
    # a higher priority, but Coulomb's threshold: it holds
    threshold = grade("6.3", part_friction=np.tan(_THETA), part_priority=2)
    assert threshold.score == 0 and "sliding friction 0.5774" in threshold.text()
    in_one_second = (np.sin(_THETA) - 2 * 0.3 / G) / np.cos(_THETA)    # ½·a·t² = 0.3 m with t = 1 s
    graded = grade("6.3", part_friction=in_one_second, part_priority=2)
    assert passed(graded)["the part slides down the 30° chute"]
    # sliding is a gate: a frictionless part slides too
    assert graded.score == 0 and "it passes 0.3 m at 0.59" in graded.text()
    for mu in (0, 0.5, 1e-308):
        assert grade("6.3", part_friction=mu, part_priority=2).score == 0
    for mu in (-0.1, 1e300):                       # refused before anything is simulated
        refused = grade("6.3", part_friction=mu, part_priority=2)
        assert refused.score == 0 and "a friction coefficient is not negative" in refused.text()
    for priority in (1.5, 1000, True):
        assert grade("6.3", part_friction=_MU_CHUTE, part_priority=priority).score == 0


def test_5_1_a_clamped_impedance_is_not_the_value_mujoco_uses():
    graded = grade("5.1", block_solref=(0.004, 1), block_solimp=(0.95, 1.5, 0.001, 0.5, 2))
    assert not passed(graded)["MuJoCo uses block_solimp as written (not clamped)"]
    assert graded.score < 3 and "is clamped" in graded.text()
