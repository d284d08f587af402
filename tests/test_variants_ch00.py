"""Chapter 00's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests

import labkit
from labkit.exercises.ch00 import swung_pendulum, two_bob_pendulum


def tip_height(p):
    _, data = swung_pendulum(p["swing"])
    return {"tip_height": data.site("tip").xpos[2]}


def long_period(p):
    model, data = two_bob_pendulum()
    data.joint("swing").qpos = p["release"]
    swings = labkit.record(model, data, {"angle": data.joint("swing").qpos}, duration=10.0)
    return {"long_period": np.diff(swings.crossings("angle")).mean()}


def damping(p):
    def kept(b):
        model, data = labkit.load("pendulum", keyframe="tilted")
        model.dof_damping[0] = b
        swing = labkit.record(model, data, {"angle": data.joint("swing").qpos}, duration=3.0)
        return np.abs(swing["angle"][swing.t > 3.0 - 1.42 / 2]).max() / 0.5
    tried = {b: kept(b) for b in np.arange(0.02, 0.3, 0.02)}
    return {"damping": min(tried, key=lambda b: abs(tried[b] - p["keep"]))}


METHODS = {"0.1": tip_height, "0.2": long_period, "0.3": damping}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)
