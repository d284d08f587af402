"""Chapter 08's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests

import labkit
from labkit import kinematic
from labkit.exercises.ch08 import (
    CLOSE,
    RELAXED,
    fingertips,
    projected_close,
    relaxed_start,
    requested_pinch,
    tip_speeds,
)


def glove(p):
    """The notebook's way: leaders for the mimics, index_pip measured, then the glove's mapping."""
    pose, point = requested_pinch(p)
    model, data = labkit.load("hand")
    driver = kinematic.Driver(model, data)
    wanted = dict(pose)
    for c in driver.couplings:                      # a mimic has no channel: command its leader
        if c.follower in wanted:
            wanted[c.leader] = c.leader_for(wanted.pop(c.follower))
    pips = np.linspace(0, 1.6, 1601)                # index_pip's range, 1 mrad apart
    misses = []
    for pip in pips:
        driver.reset({**wanted, "index_pip": pip})
        misses.append(np.linalg.norm(fingertips(model, data)[0] - point))
    wanted["index_pip"] = pips[int(np.argmin(misses))]
    lo, hi = kinematic.joint_ranges(model, driver.active)
    fraction = (np.array([wanted[name] for name in driver.active]) - lo) / (hi - lo)
    backwards = [name not in ("lift", "thumb_yaw") for name in driver.active]
    return {"glove": 255 * np.where(backwards, 1 - fraction, fraction)}


def gentle_slew(p):
    """Synchronized rates for a 1 s close from the student's start, measured, then scaled to the
    band's middle."""
    start = relaxed_start(p)
    distance = {name: CLOSE[name] - start[name] for name in CLOSE}
    fastest_in_1s = max(tip_speeds(distance, start).values())
    close_time = fastest_in_1s / (0.95 * p["tip_speed"])
    return {"gentle_slew": {name: d / close_time for name, d in distance.items()}}


def projection(p):
    """Rest at the band's depth, then the fewest halvings that meet both requirements."""
    tolerance = p["band"]
    for iterations in range(21):
        worst, gaps, _ = projected_close(tolerance, iterations, slew=p["slew"])
        if worst <= p["depth"] and np.all(np.abs(gaps) <= p["band"]):
            break
    return {"tolerance": tolerance, "iterations": iterations}


METHODS = {"8.1": glove, "8.2": gentle_slew, "8.3": projection}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)


def test_the_published_numbers_are_the_chapters_pose_and_start():
    from labkit.exercises.ch08 import INDEX_TIP, PINCH

    assert requested_pinch() == (dict(PINCH), INDEX_TIP)
    assert requested_pinch(labkit.given("8.1")) == (dict(PINCH), INDEX_TIP)
    assert relaxed_start() == relaxed_start(labkit.given("8.2")) == dict(RELAXED)
