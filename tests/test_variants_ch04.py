"""Chapter 04's exercises on other students' numbers (see tests/variant_harness.py).  Exercise
4.3 has none: its answer is a method, asked on a layout drawn per grading instead."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests, score

from labkit.exercises import ch04, spec


def several_actuators(p):
    # the drive: gear × its forcerange 1; the servo: its own clamped 1; the joint clamps the sum
    return {"is_bug": False, "max_total": p["gear"] * 1.0 + 1.0,
            "hip_attrs": f'actuatorfrcrange="{-p["limit"]:g} {p["limit"]:g}"'}


def clamp_setpoint(p):
    return {"actrange": (-p["gear"] * np.deg2rad(30), p["gear"] * np.deg2rad(30))}   # the length g·q


def control_state(p):
    target, ki = p["target"], p["ki"]

    def make_controller():
        state = {"z": 0.0}

        def tick(model, data):                 # the control clock: once per step
            state["z"] += model.opt.timestep * (target - data.qpos[0])

        def feedback(model, data):             # may run at every RK4 stage: read only
            error = target - data.qpos[0]
            data.ctrl[0] = ch04.KP * error - ch04.KV * data.qvel[0] + ki * state["z"]
        return tick, feedback
    return {"make_controller": make_controller}


METHODS = {"4.1": several_actuators, "4.2": clamp_setpoint, "4.4": control_state}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)


def test_4_3_is_fixed_for_a_reason():
    assert not spec("4.3").params and "layout drawn at random" in spec("4.3").fixed


def test_the_mistakes_use_the_variants_numbers():
    hip = {"gear": 4.5, "limit": 3.25}
    got, text = score("4.1", {"is_bug": False, "max_total": 4.5, "hip_attrs": ""}, hip)
    assert "that is the drive alone" in text and "at most 3.25 N·m" in text
    got, text = score("4.1", {"is_bug": False, "max_total": 2.0, "hip_attrs": ""}, hip)
    assert "forgets the drive's gear of 4.5" in text
    # the published controller on another student's numbers: the law names the chapter's constants
    got, text = score("4.4", control_state(spec("4.4").defaults), {"target": 0.7, "ki": 35.0})
    assert got == 0 and "the chapter's TARGET = 1 rad and KI = 20" in text, text


def test_the_published_test_lasts_as_long_as_before_and_scales_with_the_gear():
    assert ch04.ahead_and_back_seconds() == (ch04.AHEAD, ch04.BACK)
    assert ch04.ahead_and_back_seconds(3.0) == (1.5 * ch04.AHEAD, 1.5 * ch04.BACK)
