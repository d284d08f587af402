"""Chapter 03's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests, score

import labkit
from labkit.exercises import spec
from labkit.exercises.ch03 import ARM


def counts(p):
    # per actuator: a pid with pos vel, ki and slewmax reads 2, keeps 2, writes 1; a quaternion
    # orientation servo reads 4, keeps none, writes 3; a filtered position servo 1, 1, 1
    pids, gazes, filters = p["pids"], p["gazes"], p["filters"]
    return {"counts": tuple(int(n) for n in (pids + gazes + filters, 2 * pids + 4 * gazes + filters,
                                             2 * pids + filters, pids + 3 * gazes + filters))}


def pid_block(p):
    return {"drive_block": [p["speed"], p["ff"]], "ff_index": 1 + 1}   # after the motor's one control


def cable_target(p):
    return {"ctrl_target": 3 * 0.1 * p["angle"]}          # l = gear · (tendon length) = 3 · 0.1 · q


def cable_spring(p):
    moment_arm = 3 * p["pulley"]                         # dl/dq: gear · the pulley's radius
    return {"joint_stiffness": 1000 * moment_arm**2, "joint_damping": 100 * moment_arm**2}


def design(p):
    model, _ = labkit.load(ARM)
    inertia = model.dof_M0[0]
    mgl = -model.opt.gravity[2] * model.body("arm").mass[0] * model.body("arm").ipos[0]
    kp = 2 * mgl / p["band"]                             # the sag m·g·L·cos(target)/kp: at most half
    return {"kp_design": kp, "kv_design": 2 * 0.9 * np.sqrt(kp * inertia)}      # ζ = 0.9


METHODS = {"3.1": counts, "3.2": pid_block, "3.3": cable_target, "3.4": cable_spring, "3.5": design}


# 3.5 is a design: a classmate's passes whenever it was made for a band as tight as one's own
test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)


def test_the_counted_model_is_the_published_one_by_default_and_grows_with_the_numbers():
    from labkit.exercises.ch03 import COUNT_ME, count_me

    assert count_me() == COUNT_ME
    model, _ = labkit.load(count_me(2, 1, 3))
    assert (model.nactuator, model.nu, model.na, model.nout) == (6, 11, 7, 8)


def test_the_mistakes_use_the_variants_numbers():
    cases = [("3.3", {"ctrl_target": -0.15}, {"angle": -0.15}, "that ctrl is a joint angle"),
             ("3.3", {"ctrl_target": 3 * -0.15}, {"angle": -0.15}, "§5's rule for a geared joint"),
             ("3.4", {"joint_stiffness": 1000 * 3 * 0.06, "joint_damping": 100 * 9},
              {"pulley": 0.06}, "one factor of the moment arm is missing"),
             ("3.4", {"joint_stiffness": 1000 * 0.06**2, "joint_damping": 100.0},
              {"pulley": 0.06}, "the gear is part of the moment arm too"),
             ("3.5", {"kp_design": 1000.0, "kv_design": 28.5}, {"target": 0.9, "band": 0.002},
              "it stays within 2 mrad of 0.9 rad"),
             ("3.2", {"drive_block": [0.5, 2.5], "ff_index": 2}, {"speed": 2.5, "ff": 0.5},
              "kv·(2.5 − 0) + 0.5 N·m")]
    for number, answers, values, said in cases:
        got, text = score(number, answers, values)
        assert got < spec(number).points and said in text, text
