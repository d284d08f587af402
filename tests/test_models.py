"""labkit.load: names, paths and strings; errors that say what to do."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import mujoco
import pytest

import labkit


def test_load_by_name_runs_forward(pendulum):
    model, data = pendulum
    assert model.nq == 1 and data.qpos[0] == pytest.approx(0.5)
    assert data.xpos[1].any() or data.site_xpos.any()  # mj_forward filled kinematics


def test_unknown_name_suggests_and_lists():
    with pytest.raises(labkit.ModelError) as info:
        labkit.load("pendulm")
    text = str(info.value)
    assert "Did you mean 'pendulum'" in text and "Available models" in text


def test_broken_mjcf_names_line_and_fix():
    xml = "<mujoco>\n<worldbody>\n  <geom type='box' sizee='1 1 1'/>\n</worldbody>\n</mujoco>"
    with pytest.raises(labkit.ModelError) as info:
        labkit.load(xml)
    text = str(info.value)
    assert "line 3: <geom type='box' sizee='1 1 1'/>" in text
    assert "unrecognized attribute" in text and "What to do:" in text


def test_compile_error_returns_mujocos_message():
    assert labkit.compile_error("<mujoco><worldbody><body mass='1'/></worldbody></mujoco>") == (
        "XML Error: Schema violation: unrecognized attribute: 'mass'\nElement 'body', line 1")
    assert labkit.compile_error("pendulum") is None
    with pytest.raises(labkit.ModelError, match="no course model"):
        labkit.compile_error("pendulm")


def test_malformed_xml_is_called_out():
    with pytest.raises(labkit.ModelError, match="not well-formed"):
        labkit.load("<mujoco><worldbody><geom size='1'></worldbody></mujoco>")


def test_missing_file_and_keyframe(tmp_path):
    with pytest.raises(labkit.ModelError, match="No model file"):
        labkit.load(tmp_path / "absent.xml")
    with pytest.raises(labkit.ModelError, match="no keyframe 'nope'"):
        labkit.load("pendulum", keyframe="nope")


def test_load_by_path_equals_load_by_name():
    by_name, _ = labkit.load("pendulum")
    by_path, _ = labkit.load(labkit.model_path("pendulum"))
    assert by_name.nbody == by_path.nbody and by_name.body_mass.tolist() == by_path.body_mass.tolist()


@pytest.mark.parametrize("name", labkit.model_names())
def test_course_models_follow_the_conventions(name):
    path = labkit.model_path(name)
    root = ET.parse(path).getroot()
    quality = root.find("visual/quality")
    assert quality is not None and quality.get("shadowsize") == "1024", "set shadowsize='1024'"
    text = path.read_text()
    assert "<!--" in text, "course models are teaching artifacts: comment what they teach"
    model, _ = labkit.load(name)
    assert model.nmesh == 0 or re.search(r"mesh", name), "primitive geoms unless about meshes"
    assert mujoco.mjtGeom.mjGEOM_MESH not in set(model.geom_type) or model.nmesh > 0
