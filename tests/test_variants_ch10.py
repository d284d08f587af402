"""Chapter 10's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests

from labkit.exercises.ch10 import exercise_finger


def servo_timestep(p):
    # one Euler step: kv and the tendon's damping explicit, the joint's implicit (section 1)
    omega = np.sqrt(p["kp"] / 1.0)                                  # the ball weighs 1 kg
    z_net = (p["kv"] + p["tendon_damping"] - p["joint_damping"]) / (2 * omega * 1.0)
    return {"servo_timestep": 0.99 * 2 * (np.sqrt(z_net**2 + 1) - z_net) / omega}


def finger_armature(p):
    # kv explicit under Euler: the hinge needs (kp·h² + 2·kv·h)/4 in all, less the finger's own inertia
    bare, _ = exercise_finger(kv=p["kv"])
    h = p["timestep"]
    needed = (bare.actuator_gainprm[0, 0] * h**2 + 2 * p["kv"] * h) / 4
    return {"finger_armature": 1.1 * (needed - bare.dof_M0[0])}


def cgs_numbers(p):
    return {"cgs_gravity": 9.81 * 100, "cgs_density": p["density"] * 1000 / 100**3,
            "cgs_damping": p["damping"] * 1000 * 100**2, "cgs_width": p["width"] * 100}


METHODS = {"10.1": servo_timestep, "10.2": finger_armature, "10.3": cgs_numbers}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)
