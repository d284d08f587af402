"""labkit.load: names, paths and strings; errors that say what to do."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

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


# -- relative paths and nested <include>s (issue 20) ---------------------------------------------

def _nested(root):
    """robot/scene.xml includes parts/arm.xml, which includes joints.xml from its own folder."""
    (root / "robot" / "parts").mkdir(parents=True)
    (root / "robot" / "scene.xml").write_text(
        '<mujoco>\n  <include file="parts/arm.xml"/>\n'
        '  <worldbody><geom type="plane" size="1 1 .1"/></worldbody>\n</mujoco>\n')
    (root / "robot" / "parts" / "arm.xml").write_text(
        '<mujoco>\n  <include file="joints.xml"/>\n  <worldbody><body name="arm" pos="0 0 1">'
        '<joint class="hinge"/><geom size=".1"/></body></worldbody>\n</mujoco>\n')
    (root / "robot" / "parts" / "joints.xml").write_text(
        '<mujoco><default><default class="hinge"><joint axis="0 1 0" damping="0.25"/>'
        "</default></default></mujoco>\n")
    return root / "robot" / "scene.xml"


def test_a_relative_path_to_nested_includes_loads(tmp_path, monkeypatch):
    scene = _nested(tmp_path)
    monkeypatch.chdir(tmp_path)
    # the cause: MuJoCo 3.17 prefixes the relative model folder twice for the inner include
    with pytest.raises(ValueError, match=re.escape("robot/parts/robot/parts/joints.xml")):
        mujoco.MjModel.from_xml_path("robot/scene.xml")
    for source in ("robot/scene.xml", "./robot/scene.xml", scene):
        model, _ = labkit.load(source)
        assert model.dof_damping[0] == 0.25   # the innermost file's default reached the joint
        assert labkit.spec(source).compile().dof_damping[0] == 0.25


def test_a_missing_nested_include_names_the_file_and_where_it_was_looked_for(tmp_path, monkeypatch):
    scene = _nested(tmp_path)
    (scene.parent / "parts" / "joints.xml").rename(scene.parent / "parts" / "joint.xml")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(labkit.ModelError) as info:
        labkit.load("robot/scene.xml")
    text = str(info.value)
    looked = (scene.parent / "parts" / "joints.xml").resolve()
    assert f"MuJoCo looked for it at {looked}" in text and "'joint.xml'" in text   # a close name
    assert "does not exist at that path" not in text
    (scene.parent / "parts" / "joint.xml").unlink()
    (scene.parent / "parts").rename(scene.parent / "bits")
    with pytest.raises(labkit.ModelError) as info:
        labkit.load("robot/scene.xml")
    missing = (scene.parent / "parts").resolve()
    assert "'parts/arm.xml' is missing" in str(info.value)
    assert f"the folder {missing} does not exist" in str(info.value)


def test_a_missing_mesh_names_meshdir(tmp_path):
    model_file = tmp_path / "m.xml"
    model_file.write_text('<mujoco><compiler meshdir="meshes"/><asset><mesh file="arm.stl"/>'
                          '</asset><worldbody><geom type="mesh" mesh="arm"/></worldbody></mujoco>')
    with pytest.raises(labkit.ModelError) as info:
        labkit.load(model_file)
    assert f"MuJoCo looked for it at {tmp_path.resolve() / 'meshes' / 'arm.stl'}" in str(info.value)


def test_a_corpus_model_included_from_another_folder_loads_by_relative_path(
        corpus, tmp_path, monkeypatch):
    # dm_control's cheetah includes ./common/*.xml; included itself from elsewhere, those become
    # nested includes, resolved from cheetah's own folder
    cheetah = corpus.path("dm_control/suite/cheetah")
    (tmp_path / "scenes").mkdir()
    relative = Path("..") / os.path.relpath(cheetah, tmp_path)
    (tmp_path / "scenes" / "wrap.xml").write_text(f'<mujoco><include file="{relative}"/></mujoco>')
    monkeypatch.chdir(tmp_path)
    wrapped, _ = labkit.load("scenes/wrap.xml")
    direct, _ = corpus.load("dm_control/suite/cheetah")
    assert (wrapped.ngeom, wrapped.nmat, wrapped.ntex) == (direct.ngeom, direct.nmat, direct.ntex)
    assert direct.nmat > 0      # the materials come from common/materials.xml, a nested include
