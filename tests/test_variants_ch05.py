"""Chapter 05's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests

import labkit
from labkit import solver
from labkit.exercises.ch05 import TWO_LINK_ARM, settle


def block_solref_solimp(p):
    # a constant impedance d = 0.9: each corner row rests (1 - d)·(g/4)·τ² deep; ζ = 1 does not bounce
    tau = np.sqrt(p["depth"] / ((1 - 0.9) * 9.81 / 4))
    return {"block_solref": (tau, 1.0), "block_solimp": (0.9, 0.9, 0.001, 0.5, 2)}


def block_depth(p):
    mu = p["friction"]
    a0 = 9.81 / 4 * mu**2 * (1 + mu**2) / 2           # four corners, each a condim-3 pyramid
    return {"block_depth": solver.rest_penetration((p["timeconst"], 1), (0.95, 0.99, 0.002, 0.5, 2),
                                                   timestep=0.001, accel=a0)}


def two_solrefs(p):
    d = float(solver.impedance(solver.DEFAULT_SOLIMP, p["depth"]))
    tz = d / solver.DEFAULT_SOLIMP[1] * np.sqrt(p["depth"] / ((1 - d) * 9.81))
    overshoot = {}
    for z in np.arange(0.3, 2.0, 0.05):
        depth = settle((tz / z, z), solver.DEFAULT_SOLIMP, seconds=0.5)["depth"]
        overshoot[z] = depth.max() / depth[-1] - 1
    critical = min(z for z, over in overshoot.items() if over <= 0.005)
    bouncy = min(overshoot, key=lambda z: abs(overshoot[z] - 0.25))
    return {"solref_critical": (tz / critical, critical), "solref_bouncy": (tz / bouncy, bouncy)}


def limit_solref(p):
    arm, _ = labkit.load(TWO_LINK_ARM)
    a0 = p["torque"] * arm.dof_invweight0[0]
    d = float(solver.impedance((0.5, 0.95, 0.1, 0.5, 2), p["depth"]))
    return {"limit_solref": (d / 0.95 * np.sqrt(p["depth"] / ((1 - d) * a0)), 1.0)}


METHODS = {"5.1": block_solref_solimp, "5.2": block_depth, "5.3": two_solrefs, "5.4": limit_solref}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)
