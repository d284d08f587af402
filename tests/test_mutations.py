"""The checks are real: change a model parameter a claim depends on, and the chapter fails.

Each case copies models/ to a temporary folder, edits one attribute of one model, runs
one chapter against the copy (LABKIT_MODELS points labkit.load there) and expects a
ClaimFailed or ExerciseFailed, not a pass and not an unrelated error.
"""

from __future__ import annotations

import shutil

import pytest

from labkit.classroom.notebooks import course_dir, execute
from labkit.models import models_dir

MUTATIONS = [
    # (chapter, model file, original text, replacement, why a claim must fail)
    ("00_start_here", "pendulum.xml", 'damping="0"', 'damping="0.05"',
     "damping drains energy: the bounded-wobble claim breaks"),
    ("00_start_here", "pendulum.xml", 'size="0.05" mass="1"', 'size="0.05" mass="1.5"',
     "the body-mass claim sums the geoms' masses"),
    ("01_mjcf_foundations", "arm.xml", 'size="0.02" mass="0.5"', 'size="0.02" mass="0.6"',
     "the three-routes-to-mass claim expects the forearm's explicit 0.5 kg"),
    ("01_mjcf_foundations", "shapes.xml", 'type="box" size="0.1 0.15 0.05"',
     'type="box" size="0.1 0.15 0.05" density="500"', "the default-density masses change"),
    ("02_units_frames_compiler", "frames_orientation_forms.xml", 'axisangle="1 1 1 120"',
     'axisangle="1 1 1 100"', "the five forms no longer write one orientation"),
    ("02_units_frames_compiler", "compiler_mesh_lprism.xml", '0 0.1 0.04"\n          face=',
     '0 0.1 0.05"\n          face=', "one top vertex rises: the L's exact volume changes"),
    ("03_actuators_force", "actuator_arm.xml", '<position kp="50" kv="5"/>',
     '<position kp="60" kv="5"/>', "the steady-state sag τ/kp is checked against kp = 50"),
    ("03_actuators_force", "actuator_transmissions.xml", 'coef="0.5"', 'coef="0.4"',
     "the tendon's moment arm changes what the joints receive"),
    ("04_actuators_limits_state", "clamp_elbow.xml", 'actuatorfrcrange="-1.2 1.2"',
     'actuatorfrcrange="-2 2"', "the fourth clamp no longer cuts 1.6 down to 1.2"),
    ("04_actuators_limits_state", "clamp_stepper.xml", 'kp="100" kv="100"', 'kp="100" kv="10"',
     "the stepper recipe is no longer unstable under Euler at kv·h/m = 4"),
    # chapter 05's claims are laws computed from the model's own parameters, so most edits
    # keep them true; tilting the ramp past the friction angle breaks their premise
    ("05_solver_parameters", "solver_ramp.xml", 'size="0.4 0.2 0.05" euler="0 20 0"',
     'size="0.4 0.2 0.05" euler="0 30 0"', "past tan θ = μ the cube slides instead of creeping"),
    ("06_contacts_filtering", "contact_arena.xml", 'contype="3" conaffinity="3"',
     'contype="2" conaffinity="2"', "the 0b11-collides-with-1 bitmask lesson loses its bit"),
    ("07_contact_tuning", "tuning_grasp.xml", '<geom friction="0.05 0.005 0.0001"/>',
     '<geom friction="0.2 0.005 0.0001"/>', "the slipping grasp's sliding rate g − 2μN/m changes"),
    ("07_contact_tuning", "tuning_thin_plate.xml", 'size="0.05 0.05 0.001"',
     'size="0.05 0.05 0.02"', "a thick plate no longer lets the small ball through"),
    ("07_contact_tuning", "tuning_peg_mesh.xml", 'name="peg" type="box" size="0.015 0.015 0.04"',
     'name="peg" type="box" size="0.025 0.025 0.04"', "a wider peg no longer fits the decomposed hole"),
    ("08_kinematic_drive", "hand.xml", '<body name="rod" pos="0.005 0 0.125">',
     '<body name="rod" pos="0.02 0 0.125">', "the rod no longer rests 3 mm into its post"),
    ("09_capstone", "capstone_gripper.xml", 'kp="50" kv="20"', 'kp="500" kv="20"',
     "a stiff lift servo no longer sags as the chapter computes"),
    ("06_contacts_filtering", "contact_ball.xml", 'mass="1" friction',
     'mass="1" shellinertia="true" friction',
     "a hollow ball's I = 2/3·m·r² slows the torsional and rolling braking the chapter predicts"),
]


@pytest.mark.parametrize(("chapter", "file", "old", "new", "why"), MUTATIONS,
                         ids=[f"{m[0]}:{m[3]}" for m in MUTATIONS])
def test_a_changed_parameter_fails_the_chapter(tmp_path, chapter, file, old, new, why):
    mutated = tmp_path / "models"
    shutil.copytree(models_dir(), mutated)
    text = (mutated / file).read_text()
    assert text.count(old) == 1, f"mutation target {old!r} not unique in {file}"
    (mutated / file).write_text(text.replace(old, new))
    # only the error matters here: no pictures drawn (labkit.display.pictures_kept)
    run = execute(course_dir() / f"{chapter}.ipynb",
                  env={"LABKIT_MODELS": str(mutated), "LABKIT_PICTURES": "off"})
    assert run.error is not None, f"{chapter} still passes although {why}"
    assert run.error.startswith(("ClaimFailed", "ExerciseFailed")), run.error
