"""Sources resolve against the installed MuJoCo, and fail when they no longer do."""

from __future__ import annotations

import pytest

import labkit
from labkit import sources


def test_header_resolves_the_declaring_line():
    src = labkit.header("mjmodel.h", "nq")
    assert src.kind == "header"
    number = int(src.url.rsplit("#L", 1)[1])
    line = sources._header_lines("mjmodel.h")[number - 1]
    assert "nq;" in line and line.strip() == src.detail
    assert src.url.startswith("https://github.com/google-deepmind/mujoco/blob/3.17.0/include/")


def test_header_skips_mentions_in_comments():
    # "qpos" appears in the comment of nq's line before its own declaration
    src = labkit.header("mjdata.h", "qpos")
    assert src.detail.split("//")[0].split()[-1] == "qpos;"


def test_vanished_header_symbol_fails():
    with pytest.raises(labkit.SourceError, match="declares no 'njmax_retired'"):
        labkit.header("mjmodel.h", "njmax_retired")


def test_unknown_header_lists_the_real_ones():
    with pytest.raises(labkit.SourceError, match=r"mjmodel\.h"):
        labkit.header("mjmodels.h", "nq")


def test_engine_confirms_public_and_internal_functions():
    assert "found in libmujoco" in labkit.engine("engine_forward.c", "mj_fwdActuation").detail
    internal = labkit.engine("engine_core_constraint.c", "mj_makeImpedance")
    assert internal.url.endswith("/src/engine/engine_core_constraint.c")


def test_engine_finds_functions_with_compiler_suffixes():
    # the symbol table holds mj_solPrimal.llvm.<hash>, a local copy made by the optimiser
    assert "found" in labkit.engine("engine_solver.c", "mj_solPrimal").detail


def test_engine_finds_cpp_methods():
    assert "found" in labkit.engine("user_objects.cc", "mjCGeom::SetInertia").detail
    with pytest.raises(labkit.SourceError):
        labkit.engine("user_objects.cc", "mjCGeom::Compile_gone")


def test_engine_rejects_an_inlined_helper():
    with pytest.raises(labkit.SourceError, match="cite its caller"):
        labkit.engine("engine_collision_driver.c", "filterBitmask")


def test_doc_and_issue_permalinks():
    assert labkit.doc("modeling", "CDefault").url == (
        "https://mujoco.readthedocs.io/en/3.17.0/modeling.html#cdefault")
    with pytest.raises(labkit.SourceError, match="did you mean modeling"):
        labkit.doc("modelling")
    with pytest.raises(labkit.SourceError, match="did you mean CDefault"):
        labkit.doc("modeling", "CDefaults")
    assert labkit.doc("APIreference/APIfunctions", "mj_step").url.endswith("#mj-step")
    assert labkit.doc("XMLreference", "body-geom-size").url.endswith("#body-geom-size")
    assert labkit.issue(1741).url.endswith("/issues/1741")
    with pytest.raises(labkit.SourceError):
        labkit.issue(-3)
