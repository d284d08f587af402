"""The labkit command: doctor reports, claims summarises a run."""

from __future__ import annotations

import subprocess
import sys

import nbformat


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "labkit.cli", *args], capture_output=True,
                          text=True, timeout=300, **kw)


def test_doctor_passes_here_and_names_each_check():
    result = run("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    for topic in ("Python", "MuJoCo", "GL egl", "rendering", "course models", "ffmpeg",
                  "Jupyter kernel"):
        assert topic in result.stdout


def test_claims_summarises_per_chapter(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import labkit\nlabkit.setup()\n"
        "labkit.check('one is one', 1, 1, sources='#1')\n"
        "labkit.check('two is two', 2, 2, sources='#2')")]
    path = tmp_path / "98_tiny.ipynb"
    nbformat.write(nb, path)
    log = tmp_path / "claims.jsonl"
    result = run("claims", str(path), "--log", str(log))
    assert result.returncode == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("98_tiny"))
    assert row.split()[1:3] == ["2", "0"]
    assert len(log.read_text().splitlines()) == 2
    assert nbformat.read(path, as_version=4).cells[0].outputs == []  # the file is untouched


def test_execute_stops_a_cell_that_never_ends(tmp_path):
    from labkit.classroom.notebooks import execute

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("while True:\n    pass")]
    path = tmp_path / "loop.ipynb"
    nbformat.write(nb, path)
    run = execute(path, timeout=2)
    assert run.error == "TimeoutError: a cell ran longer than 2 s" and run.seconds < 30
