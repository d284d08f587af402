"""Chapter 09's exercises on other students' numbers (see tests/variant_harness.py).

The capstone's trials are the course's most expensive simulations (2000 steps each); the
checkers cache them by their parameters and the cube's mass, and the methods below are
formulas, not searches (9.2's bisection runs four rig trials).  The capstone's reference
answer is the notebook's: it aims the lift at the student's shelf (``lift_target``) and
sets the lift's sag from the student's allowance, so a classmate's answer, aimed at
another shelf, leaves the cube outside the window."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests

from labkit.exercises import ch09

G = 9.81                                  # m/s²: the model's gravity
PEAK_ACCELERATION = 6 * ch09.SCRIPT["lift"]["lift"] / ch09.SCRIPT["lift_ramp"] ** 2   # 6h/T² (§4)


def lift_gains(p):
    # sag m·g/kp: half the band; critically damped for the 0.9 kg that moves with the cube
    kp = 2 * ch09.CUBE_MASS * G / p["band"]
    return {"lift_kp": kp, "lift_kv": 2 * np.sqrt(kp * 0.9)}


def grip_min(p):
    # bisect between 150 % of Coulomb's grip (slips) and 225 % (holds), as the notebook does
    coulomb = ch09.CUBE_MASS * (G + PEAK_ACCELERATION) / (2 * p["friction"])
    low, high = 1.5 * coulomb, 2.25 * coulomb
    for _ in range(4):
        mid = (low + high) / 2
        holds = ch09.rig_slip(mid, cone="pyramidal", friction=p["friction"]) <= ch09.RIG_HOLDS
        low, high = (low, mid) if holds else (mid, high)
    return {"grip_min": high}


def table_solref(p):
    # the depth follows (timeconst·dampratio)²: scale the floor that (0.004, 1) rests at (§5);
    # a timeconst just above that 4 ms keeps the dampratio above 0.5, where the contact rests
    floor, timeconst = ch09.table_depth_for((0.004, 1)), 0.0045
    return {"table_solref": (timeconst, 0.004 / timeconst * np.sqrt(p["depth"] / floor))}


def capstone(p):
    # Coulomb's minimum for this cube and this shelf's lift (§4) with a 1.5 margin at a grippy
    # rubber's μ = 2; the lift aimed at the shelf, sagging a quarter of the sag allowed (§3)
    mass, friction, shelf = p["cube_mass"], 2.0, p["shelf"]
    grip = 1.5 * mass * (G + 6 * shelf / ch09.SCRIPT["lift_ramp"] ** 2) / (2 * friction)   # N per pad
    lift_kp = mass * G / (p["sag"] / 4)
    return {"answer": dict(ch09.START, friction=friction, cone="elliptic", impratio=20,
                           solref=(0.008, 1), solimp=(0.95, 0.99, 0.001, 0.5, 2),
                           finger_kp=grip / (ch09.SCRIPT["close"]["left"] - ch09.PAD_TRAVEL),
                           finger_kv=12, lift_target=shelf, lift_kp=lift_kp,
                           lift_kv=2 * np.sqrt(lift_kp * (0.7 + mass)))}


METHODS = {"9.1": lift_gains, "9.2": grip_min, "9.3": table_solref, "9.4": capstone}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)
