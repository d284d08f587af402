"""labkit drift: the claim-by-claim comparison, the report, record mode and the side
environments' requirements — all without a second MuJoCo."""

from __future__ import annotations

import json

import nbformat
import pytest

import labkit
from labkit.drift.compare import CHANGED, ERROR, HOLDS, compare, read_log, summary
from labkit.drift.environments import requirements
from labkit.drift.record import cell_errors
from labkit.drift.report import read_notes, render
from labkit.errors import ClaimFailed, DriftError, SourceError


def claim(notebook, cell, statement, observed, passed=True, expected=1, **extra):
    return {"notebook": notebook, "cell": cell, "statement": statement, "observed": observed,
            "expected": expected, "passed": passed, **extra}


BASELINE = [claim("03_actuators", 4, "pid without kp has kp = 1", 1.0),
            claim("03_actuators", 4, "pid with ki and slewmax has two states", 2, expected=2),
            claim("03_actuators", 9, "a motor after a position default resets biasprm", [0, 0, 0]),
            claim("05_solver", 2, "eq_data is 12 wide", 12, expected=12),
            claim("05_solver", 7, "a later claim in the same chapter", 1.0),
            claim("05_solver", 8, "f-string statement with value 3.0", 3.0, expected=3.0)]


def test_compare_matches_by_cell_and_order_and_classifies():
    other = [claim("03_actuators", 4, "pid without kp has kp = 1", 0.0, passed=False),
             claim("03_actuators", 4, "pid with ki and slewmax has two states", 2, expected=2),
             # the chapter's cell 9 raised on the other version: its claim is never reached
             {"notebook": "03_actuators", "cell": 9, "error": "ValueError: actdim > 1 is only allowed"},
             claim("05_solver", 2, "eq_data is 12 wide", 11, passed=False, expected=12),
             {"notebook": "05_solver", "cell": 5, "error": "AttributeError: no attribute 'x'"},
             # a statement with a computed value matches by position, not by text
             claim("05_solver", 8, "f-string statement with value 2.9", 3.0, expected=3.0,
                   unresolved_sources=["mjmodel.h:foo: no such field"])]
    outcomes = compare(BASELINE, other)
    assert [o.status for o in outcomes] == [CHANGED, HOLDS, ERROR, CHANGED, ERROR, HOLDS]
    assert outcomes[0].other["observed"] == 0.0 and outcomes[0].baseline["observed"] == 1.0
    assert outcomes[2].error == "ValueError: actdim > 1 is only allowed"          # its own cell raised
    assert outcomes[4].error == "AttributeError: no attribute 'x' (in cell 5)"    # an earlier cell did
    assert outcomes[5].unresolved == ("mjmodel.h:foo: no such field",)
    assert summary(outcomes) == {"03_actuators": {HOLDS: 1, CHANGED: 1, ERROR: 1},
                                 "05_solver": {HOLDS: 1, CHANGED: 1, ERROR: 1}}


def test_a_claim_missing_without_any_error_is_not_reached():
    outcomes = compare(BASELINE[:1], [])
    assert outcomes[0].status == ERROR and outcomes[0].error == "not reached"


def test_the_same_log_holds_everywhere():
    assert {o.status for o in compare(BASELINE, BASELINE)} == {HOLDS}


def test_report_lists_values_and_notes_and_counts_the_unexplained(tmp_path):
    other = [claim("03_actuators", 4, "pid without kp has kp = 1", 0.0, passed=False)]
    notes = tmp_path / "drift-notes.toml"
    notes.write_text('[[note]]\nversions = ["3.15.0"]\nchapter = "03_actuators"\n'
                     'match = "pid without kp"\ntext = "3.15.0 compiled a missing kp to 0."\n')
    text, unexplained = render("3.17.0", {"3.15.0": compare(BASELINE, other)}, read_notes(notes),
                               command="labkit drift --mujoco 3.15.0", environment="test")
    assert "| [`03_actuators`](03_actuators.ipynb) | 0 hold · 1 changed · 2 error |" in text
    assert "3.17.0: `1.0` · 3.15.0: `0.0`" in text
    assert "*Why:* 3.15.0 compiled a missing kp to 0." in text
    # the errors (one per chapter, 'not reached') have no note
    assert unexplained == 2 and text.count("**not yet explained**") == 2


def test_notes_file_errors_are_actionable(tmp_path):
    bad = tmp_path / "drift-notes.toml"
    bad.write_text('[[note]]\nversions = ["4.0.0"]\n')
    with pytest.raises(DriftError, match="versions, chapter, match and text"):
        read_notes(bad)
    assert read_notes(tmp_path / "missing.toml") == []


def test_read_log_names_a_broken_line(tmp_path):
    log = tmp_path / "claims.jsonl"
    log.write_text(json.dumps(BASELINE[0]) + "\n{not json\n")
    with pytest.raises(DriftError, match="line 2"):
        read_log(log)


def test_requirements_swap_only_mujoco():
    reqs = requirements("4.0.0")
    assert "mujoco==4.0.0" in reqs and not any(r.startswith("mujoco==3") for r in reqs)
    assert any(r.startswith("numpy==") for r in reqs)            # the other pins stay
    with pytest.raises(DriftError, match=r"looks like 3\.15\.0"):
        requirements("latest; rm -rf /")


def test_record_mode_logs_instead_of_raising(tmp_path, monkeypatch):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("LABKIT_CLAIMS", str(log))
    with pytest.raises(ClaimFailed):
        labkit.check("one is two", 1, 2, sources=["mjmodel.h:nq"])
    with pytest.raises(SourceError):
        labkit.check("one is one", 1, 1, sources=["mjmodel.h:no_such_field"])
    monkeypatch.setenv("LABKIT_CLAIMS_MODE", "record")
    failed = labkit.check("one is two", 1, 2, sources=["mjmodel.h:nq"])
    held = labkit.check("one is one", 1, 1, sources=["mjmodel.h:no_such_field", "mjmodel.h:nq"])
    assert not failed.passed and held.passed
    records = read_log(log)
    assert [r["passed"] for r in records] == [False, False, True]    # the strict failure was logged too
    assert records[-1]["unresolved_sources"][0].startswith("mjmodel.h:no_such_field")
    assert [s["label"] for s in records[-1]["sources"]] == ["mjmodel.h:nq"]


def test_cell_errors_reads_error_outputs():
    nb = nbformat.v4.new_notebook()
    good = nbformat.v4.new_code_cell("1", execution_count=1)
    bad = nbformat.v4.new_code_cell("x", execution_count=2)
    bad.outputs = [nbformat.v4.new_output("error", ename="NameError", evalue="name 'x' is not defined",
                                          traceback=[])]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), good, bad]
    assert cell_errors(nb) == [(2, "NameError: name 'x' is not defined")]


def test_report_groups_unresolved_citations_and_takes_notes_for_them():
    gone = ["engine_forward.c:mj_advance: libmujoco 4.0.0 has no function 'mj_advance'"]
    base = [claim("04_limits", 3, "delays shift the input", 1.0), claim("04_limits", 5, "delays again", 1.0)]
    other = [claim("04_limits", 3, "delays shift the input", 1.0, unresolved_sources=gone),
             claim("04_limits", 5, "delays again", 1.0, unresolved_sources=gone)]
    text, unexplained = render("3.17.0", {"4.0.0": compare(base, other)}, [], command="c", environment="e")
    assert "**04_limits** (2 claims): engine_forward.c:mj_advance" in text and unexplained == 1
    from labkit.drift.report import Note
    note = Note(("4.0.0",), "04_limits", "engine_forward.c:mj_advance", "4.0.0 renamed it.")
    text, unexplained = render("3.17.0", {"4.0.0": compare(base, other)}, [note],
                               command="c", environment="e")
    assert "*Why:* 4.0.0 renamed it." in text and unexplained == 0
