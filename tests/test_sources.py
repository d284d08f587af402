"""Sources resolve against the installed MuJoCo, and fail when they no longer do."""

from __future__ import annotations

import pytest

import labkit
from labkit import sources


def test_header_resolves_the_declaring_line():
    src = sources.header("mjmodel.h", "nq")
    assert src.kind == "header"
    number = int(src.url.rsplit("#L", 1)[1])
    line = sources._header_lines("mjmodel.h")[number - 1]
    assert "nq;" in line and line.strip() == src.detail
    assert src.url.startswith("https://github.com/google-deepmind/mujoco/blob/3.17.0/include/")


def test_header_skips_mentions_in_comments():
    # "qpos" appears in the comment of nq's line before its own declaration
    src = sources.header("mjdata.h", "qpos")
    assert src.detail.split("//")[0].split()[-1] == "qpos;"


def test_vanished_header_symbol_fails():
    with pytest.raises(labkit.SourceError, match="declares no 'njmax_retired'"):
        sources.header("mjmodel.h", "njmax_retired")


def test_unknown_header_lists_the_real_ones():
    with pytest.raises(labkit.SourceError, match=r"mjmodel\.h"):
        sources.header("mjmodels.h", "nq")


def test_engine_confirms_public_and_internal_functions():
    assert "found in libmujoco" in sources.engine("engine_forward.c", "mj_fwdActuation").detail
    internal = sources.engine("engine_core_constraint.c", "mj_makeImpedance")
    assert internal.url.endswith("/src/engine/engine_core_constraint.c")


def test_engine_finds_functions_with_compiler_suffixes():
    # the symbol table holds mj_solPrimal.llvm.<hash>, a local copy made by the optimiser
    assert "found" in sources.engine("engine_solver.c", "mj_solPrimal").detail


def test_engine_finds_cpp_methods():
    assert "found" in sources.engine("user_objects.cc", "mjCGeom::SetInertia").detail
    with pytest.raises(labkit.SourceError):
        sources.engine("user_objects.cc", "mjCGeom::Compile_gone")


def test_engine_rejects_an_inlined_helper():
    with pytest.raises(labkit.SourceError, match="cite its caller"):
        sources.engine("engine_collision_driver.c", "filterBitmask")


def test_doc_and_issue_permalinks():
    assert sources.doc("modeling", "CDefault").url == (
        "https://mujoco.readthedocs.io/en/3.17.0/modeling.html#cdefault")
    with pytest.raises(labkit.SourceError, match="did you mean modeling"):
        sources.doc("modelling")
    with pytest.raises(labkit.SourceError, match="did you mean CDefault"):
        sources.doc("modeling", "CDefaults")
    assert sources.doc("APIreference/APIfunctions", "mj_step").url.endswith("#mj-step")
    assert sources.doc("XMLreference", "body-geom-size").url.endswith("#body-geom-size")
    assert sources.issue(1741).url.endswith("/issues/1741")
    with pytest.raises(labkit.SourceError):
        sources.issue(-3)


def test_an_issue_is_cited_with_one_topic_everywhere():
    assert sources.cite("#786").label == "mujoco#786 (impratio and cones)"
    with pytest.raises(labkit.SourceError, match=r"cited as 'impratio and cones'.*write '#786'"):
        sources.cite("#786 (cones)")
    unlisted = sources.cite("#99999 (a thread the file does not list)")
    assert unlisted.label == "mujoco#99999 (a thread the file does not list)"


@pytest.mark.parametrize("label, kind, printed", [
    ("mjmodel.h:nq", "header", "mjmodel.h:nq"),
    ("engine_forward.c:mj_fwdActuation", "engine", "engine_forward.c:mj_fwdActuation"),
    ("user_mesh.cc:mjCMesh::Compile", "engine", "user_mesh.cc:mjCMesh::Compile"),
    ("XMLreference#body-joint-type", "doc", "docs XMLreference#body-joint-type"),
    ("docs XMLreference#body-joint-type", "doc", "docs XMLreference#body-joint-type"),
    ("computation/index", "doc", "docs computation/index"),
    ("#1741", "issue", "mujoco#1741 (from N/m to solref)"),
    ("mujoco#1741 (from N/m to solref)", "issue", "mujoco#1741 (from N/m to solref)"),
    ("#99999", "issue", "mujoco#99999"),
    ("ref:mjcf-book §6", "reference", "ref:mjcf-book §6"),
    ("ref:e2-course", "reference", "ref:e2-course"),
])
def test_claims_cite_sources_by_their_printed_labels(label, kind, printed):
    source = sources.cite(label)
    assert (source.kind, source.label) == (kind, printed)
    assert sources.cite(printed) == source, "a printed label cites the same source again"


@pytest.mark.parametrize("label, why", [
    ("mjmodel.h:nqq", "did you mean nq"),
    ("XMLreference#body-joint-typ", "did you mean body-joint-type"),
    ("engine_forward.c:mj_fwdActuator", "no function 'mj_fwdActuator'"),
    ("XMLrefrence", "did you mean XMLreference"),
    ("??", "cannot read the source"),
    ("ref:mjcf-bok §2", "did you mean mjcf-book"),
    ("seed 004 §2", "cannot read the source"),
])
def test_a_typo_in_a_source_label_fails_at_once_with_a_suggestion(label, why):
    with pytest.raises(labkit.SourceError, match=why):
        labkit.check("a claim", observed=1, expected=1, sources=[label])
