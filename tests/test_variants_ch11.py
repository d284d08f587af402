"""Chapter 11's exercises on other students' numbers (see tests/variant_harness.py).  The models
come from the real-model corpus: offline these tests skip (the ``corpus`` fixture says why)."""

from __future__ import annotations

import pytest
from variant_harness import chapter_tests

from labkit.exercises.ch11 import cross_legged, humanoid, overlaps, pendulum, standing

pytestmark = pytest.mark.usefixtures("corpus")


def exclude_pairs(p):
    """The pairs that overlap with the root welded to the world but not with a free root."""
    pose = cross_legged(p["twist"])
    welded, free = overlaps(*humanoid(pose=pose)), overlaps(*humanoid("free", pose=pose))
    return {"exclude_pairs": sorted(set(welded) - set(free))}


def hinge_timeconst(p):
    """What MuJoCo used at the old step: the file's time constant, or 2·timestep if larger."""
    tuned, _ = pendulum(p["timestep"])
    return {"hinge_timeconst": max(tuned.joint("hinge").solref[0], 2 * tuned.opt.timestep)}


def largest_timestep(p):
    """Half the smallest time constant the contacts ask for (MuJoCo's own mix)."""
    _, data = standing(floor_timeconst=p["timeconst"])
    return {"largest_timestep": min(c.solref[0] for c in data.contact[:data.ncon]) / 2}


METHODS = {"11.1": exclude_pairs, "11.2": hinge_timeconst, "11.3": largest_timestep}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)
