"""The grader's own process reads untrusted input only within bounds of size and time.

Student files (folders, notebooks, cell text) and what a notebook writes to the runner's
report channel never reach a parser, a pattern or a list without a cap: a huge or deeply
nested file is an invalid notebook, a pathological cell is searched in linear time, a
forged report line is data of bounded size and adds no unbounded problems.  (Bounded
folder walks are in tests/test_grading.py.)
"""

from __future__ import annotations

import io
import json
import time

import nbformat

from labkit.classroom import grading, launch, reports
from labkit.classroom.notebooks import course_notebooks
from labkit.exercises import chapter_specs

START = next(p for p in course_notebooks() if p.stem.startswith("00_"))


def graded(path, **kw):
    sub = grading.find_submissions([path])[0]
    return grading.grade_one(
        sub,
        timeout=60,
        cell_timeout=10,
        max_output=1 << 20,
        use_sandbox=True,
        limits=grading.sandbox.Limits(),
        **kw,
    )


def test_a_long_cell_is_searched_in_linear_time():
    """The old call pattern took ~5 s on 10 kB of ``a.a.a…`` (quadratic): hours on 1 MB."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("a." * 500_000),
        nbformat.v4.new_code_cell('labkit.exercise("0.1")'),
    ]
    start = time.perf_counter()
    collect, _ = grading.prepare(nb, chapter_specs(0))
    assert time.perf_counter() - start < 5
    assert nb.cells[1].source == "__import__('labkit.exercises').exercises.collect(\"0.1\")" and 1 in collect


def test_a_notebook_past_the_size_cap_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(grading, "MAX_NOTEBOOK", 4096)
    (tmp_path / "alice").mkdir()
    path = tmp_path / "alice" / START.name
    path.write_text(json.dumps({"cells": [], "pad": "x" * 10_000}))
    result = graded(path)
    assert result.status == "invalid notebook" and "larger than" in result.problems[0]
    assert grading._chapter_of_content(path) is None


def test_deeply_nested_json_is_an_invalid_notebook_not_a_grader_error(tmp_path):
    (tmp_path / "bob").mkdir()
    path = tmp_path / "bob" / START.name
    path.write_text("[" * 200_000 + "]" * 200_000)
    result = graded(path)
    assert result.status == "invalid notebook" and "nested too deeply" in result.problems[0], result.problems
    (tmp_path / "bob" / "other.ipynb").write_text("[" * 200_000)
    assert grading._chapter_of_content(tmp_path / "bob" / "other.ipynb") is None


def test_report_lines_are_capped_in_length_and_in_total():
    stream = io.BytesIO(
        b"x" * (5 << 20) + b"\n" + b'{"cell": 1}\n' + b"[" * 100_000 + b"\n" + b'{"cell": 2}\n'
    )
    lines: list[dict] = []
    launch._read_lines(stream, lines, line_limit=1 << 20)
    assert lines == [{"cell": 1}, {"cell": 2}], "the long line and the nested one are skipped"
    flood: list[dict] = []
    launch._read_lines(io.BytesIO(b'{"cell": 0}\n' * 100_000), flood, limit=1 << 16)
    assert flood[-1] == {"overflow": True} and len(flood) < 10_000


def test_statuses_written_by_the_notebook_are_not_believed():
    """Only the runner reports ok / timed out; the grader's own verdicts come from the grader."""
    lines = launch._verdict([{"cell": 0}, {"status": "grader error"}, {"status": "conflict"}], False, 1, "")
    assert [line.get("status") for line in lines if "status" in line] == ["kernel died"]
    flooded = launch._verdict([{"cell": 0}, {"overflow": True}], False, 0, "")
    assert flooded[-1]["status"] == "runner error" and "flooded" in flooded[-1]["message"]


def test_forged_error_records_add_bounded_problems():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x = {i}") for i in range(200)]
    lines = [{"cell": 0}, {"error": {"cell": [1]}}, {"error": {"cell": 10**9, "ename": "E"}}, {"error": "x"}]
    lines += [{"error": {"cell": i, "ename": "E" * 10_000, "evalue": "v" * 10**5}} for i in range(200)]
    lines.append({"status": "ok"})
    specs = chapter_specs(0)
    result = reports.GradedSubmission(
        "eve", START.stem, "f", "ok", [reports.ExerciseScore(s.id, s.title, s.points) for s in specs]
    )
    reports.fill(result, nb, lines, {}, {}, timeout=60, cell_timeout=10, max_output=1 << 20)
    assert len(result.problems) == reports.MAX_PROBLEMS + 1 and "more problems" in result.problems[-1]
    assert all(len(p) <= 300 for p in result.problems) and result.total == 0
