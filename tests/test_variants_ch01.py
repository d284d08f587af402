"""Chapter 01's exercises on other students' numbers (see tests/variant_harness.py)."""

from __future__ import annotations

import numpy as np
from variant_harness import chapter_tests, score


def puck(p):
    # the body turned with the table: its joint axes are in the body's frame
    return {"puck_xml": f"""<body name="puck" euler="{np.degrees(p['tilt'])} 0 0">
  <joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/><joint type="hinge" axis="0 0 1"/>
  <geom type="cylinder" size="0.05 0.01"/>
</body>"""}


def box(p):
    return {"box_xml": f"""<body pos="0 0 {p['short'] / 2}"><freejoint/>
  <geom type="box" size="{p['long'] / 2} {p['middle'] / 2} {p['short'] / 2}"/></body>"""}


def density(p):
    tube = np.pi * 0.02**2 * (p["segment"] + 4 / 3 * 0.02)   # the straight part and its two caps
    return {"rho": (p["mass"] - p["housing"]) / tube}         # the housing's mass is explicit


def servo_class(p):
    return {"servo_defaults": f"""<default><default class="servo">
  <joint damping="{p['damping']}"/><position kp="{p['kp']}"/>
</default></default>"""}


METHODS = {"1.1": puck, "1.2": box, "1.3": density, "1.4": servo_class}


test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half = \
    chapter_tests(METHODS)


def test_1_1_a_level_puck_on_a_tilted_table_is_told_so():
    tilted = {"tilt": np.radians(25)}
    got, text = score("1.1", puck({"tilt": 0.0}), tilted)
    assert got == 1 and "the world's level x-y plane, and the table is tilted" in text
    got, text = score("1.1", puck({"tilt": -tilted["tilt"]}), tilted)
    assert got == 1 and "tilted the other way" in text
    # the axes themselves turned, typed with 4 decimals: within the room the checker leaves
    c, s = np.cos(tilted["tilt"]), np.sin(tilted["tilt"])
    typed = (f'<body><joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 {c:.4f} {s:.4f}"/>'
             f'<joint axis="0 {-s:.4f} {c:.4f}"/><geom size="0.05"/></body>')
    assert score("1.1", {"puck_xml": typed}, tilted)[0] == 3
