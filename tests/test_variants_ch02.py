"""Chapter 02's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests, score

from labkit.exercises.ch02 import old_model


def servo_range(p):
    low, high = np.degrees(p["low"]), np.degrees(p["high"])
    return {"servo_xml": f"""<mujoco><worldbody><body>
  <joint name="elbow" range="{low} {high}"/><geom size="0.05"/></body></worldbody>
  <actuator><position name="servo" joint="elbow" kp="10" ctrlrange="{p['low']} {p['high']}"/></actuator>
</mujoco>"""}


def mount(p):
    return {"mount_xml": f"""<mujoco><compiler angle="radian" eulerseq="XYZ"/><worldbody>
  <body name="mount" euler="{p['roll']} {p['pitch']} {p['yaw']}"><geom size="0.05"/></body>
</worldbody></mujoco>"""}


def brick(p):
    mass = p["density"] * 8 * p["hx"] * p["hy"] * p["hz"]
    a, b, c = p["hx"], p["hy"], p["hz"]
    inertia = [mass / 3 * (y**2 + z**2) for y, z in ((b, c), (a, c), (a, b))]
    return {"brick_inertial": f'<inertial pos="0 0 {p["offset"]}" mass="{mass}" '
                              f'diaginertia="{inertia[0]} {inertia[1]} {inertia[2]}"/>'}


def modern(p):
    old = old_model(p["density_L"], p["density_hull"])
    return {"modern_xml": old.replace('<compiler exactmeshinertia="true"/>', "")
            .replace(' shellinertia="true"', "")
            .replace('<mesh name="lprism"', '<mesh name="lprism" inertia="exact"', 1)
            .replace('<mesh name="lprism_hull"', '<mesh name="lprism_hull" inertia="shell"', 1)}


METHODS = {"2.1": servo_range, "2.2": mount, "2.3": brick, "2.4": modern}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)


def test_2_1_the_feedback_names_the_students_own_range():
    mine = {"low": np.radians(-50), "high": np.radians(90)}
    got, text = score("2.1", servo_range({"low": np.radians(-30), "high": np.radians(120)}), mine)
    assert got == 0 and "✘ the elbow is limited to -50°..90°" in text
