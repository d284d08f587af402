"""Chapter 07's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests

from labkit.exercises.ch07 import restitution


def masks(p):
    frame = 1 << (int(p["bit"]) - 1)
    return {"masks": {"frame": (frame, frame), "arm": (1, 1), "probe": (1, 1 | frame)}}


def bounce_solref(p):
    grid = np.linspace(0.01, 0.7, 2000)                             # restitution() falls in ζ
    zeta = np.interp(p["e"], restitution(grid)[::-1], grid[::-1])
    k = 1 / (0.02 * zeta) ** 2                                      # direct: kept as written
    return {"bounce_solref": (-k, -2 * zeta * np.sqrt(k))}


def slot_walls(p):
    length, width, height = p["length"], p["width"], p["height"]
    long_wall, short_wall = (0.75 * length, width / 8, height / 2), (length / 8, width / 2, height / 2)
    return {"slot_walls": [((0, -5 * width / 8, height / 2), long_wall),
                           ((0, 5 * width / 8, height / 2), long_wall),
                           ((-5 * length / 8, 0, height / 2), short_wall),
                           ((5 * length / 8, 0, height / 2), short_wall)]}


METHODS = {"7.1": masks, "7.2": bounce_solref, "7.3": slot_walls}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)
