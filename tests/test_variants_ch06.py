"""Chapter 06's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests

G = 9.81


def masks(p):
    gripper = 1 << (int(p["bit"]) - 1)
    return {"masks": {"left": (gripper, 0), "right": (gripper, 0), "cube": (1, 1 | gripper)}}


def rubber_on_steel(p):
    w_rubber = p["rubber_solmix"] / (p["rubber_solmix"] + 1)      # the steel's solmix is 1
    return {"mixed_sliding": max(p["rubber_sliding"], 0.4), "mixed_rolling": max(0.0001, p["steel_rolling"]),
            "mixed_timeconst": w_rubber * 0.01 + (1 - w_rubber) * p["steel_timeconst"],
            "mixed_dampratio": w_rubber * 1 + (1 - w_rubber) * p["steel_dampratio"]}


def exit_friction(p):
    theta = np.radians(30)
    accel = p["speed"] ** 2 / (2 * 0.3)                             # from rest: v² = 2·a·s
    return {"part_friction": (np.sin(theta) - accel / G) / np.cos(theta), "part_priority": 2}


METHODS = {"6.1": masks, "6.2": rubber_on_steel, "6.3": exit_friction}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)
