"""``labkit grade``: answers collected in the sandbox, scored outside it; forgeries earn nothing.

The class run carries the slow part (every course notebook's own run is in
tests/test_grading_course.py).  It grades, in one command-line run,
chapter 00 submissions that are correct, blank, partly correct, broken in the ways
students break notebooks (not JSON, raising, looping, sys.exit, os._exit, output floods),
and forged in the ways students forge grades (a post-run hook writing grade lines, a
patched labkit, a redefined feedback function, fake feedback printed, the reference
notebook read, a network connection, files written outside the sandbox).  No forgery may
score more than the blank copy.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import socket
import threading
from pathlib import Path

import nbformat
import pytest
from submissions import lean_chapter
from trees import tree_hashes

from labkit.classroom import grading, sandbox, student
from labkit.classroom.notebooks import course_notebooks
from labkit.exercises import chapter_specs

COURSE = course_notebooks()
REFERENCE = next(p for p in COURSE if p.stem.startswith("00_"))   # the course's own chapter 00
START = lean_chapter(0)        # what the class hands in: chapter 00, lean (tests/submissions.py)
CAPSTONE = lean_chapter(9)


# -- who is who ----------------------------------------------------------------------------------
def test_submission_names_and_chapters(tmp_path):
    chapter = START.stem
    nb = json.dumps({"cells": [{"cell_type": "code", "source": 'labkit.exercise("0.2")', "metadata": {}}]})
    for relative in (
        f"alice/{chapter}.ipynb",
        f"bob_{chapter}.ipynb",
        f"carol-{chapter}.ipynb",
        "dave.ipynb",
        "erin.ipynb",
        ".ipynb_checkpoints/x.ipynb",
    ):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(nb if relative != "erin.ipynb" else "{}")
    found = {s.student: s for s in grading.find_submissions([tmp_path])}
    assert set(found) == {"alice", "bob", "carol", "dave", "erin"}
    assert all(found[n].notebook == chapter and found[n].chapter == 0 for n in ("alice", "bob", "carol"))
    assert found["dave"].chapter == 0 and not found["dave"].problem, "chapter read from the exercise ids"
    assert found["erin"].chapter is None and "pass --chapter" in found["erin"].problem
    assert {s.chapter for s in grading.find_submissions([tmp_path], chapter=0)} == {0}
    assert grading.find_submissions([tmp_path / "alice" / f"{chapter}.ipynb"])[0].student == "alice", (
        "a file named on the command line belongs to its folder"
    )


def test_a_student_is_the_top_level_entry_and_a_conflict_is_only_that_students(tmp_path):
    """mallory/bob/… is mallory's; two notebooks of one chapter for one student are a conflict
    for that student alone; links are not followed; walking a folder is bounded."""
    chapter = START.stem
    nb = json.dumps({"cells": []})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{chapter}.ipynb").write_text(nb)
    subs = tmp_path / "subs"
    for relative in (f"bob/{chapter}.ipynb", f"mallory/bob/{chapter}.ipynb", f"carol/{chapter}.ipynb",
                     f"carol/old/carol_{chapter}.ipynb", f"dave/{'/'.join('d' * 12)}/{chapter}.ipynb"):
        (subs / relative).parent.mkdir(parents=True, exist_ok=True)
        (subs / relative).write_text(nb)
    (subs / "eve").symlink_to(outside)
    (subs / "bob" / "linked.ipynb").symlink_to(outside / f"{chapter}.ipynb")
    found = {s.student: s for s in grading.find_submissions([subs])}
    assert set(found) == {"bob", "mallory", "carol"}, "no link followed; dave's notebook is past MAX_DEPTH"
    assert found["bob"].path == subs / "bob" / f"{chapter}.ipynb" and not found["bob"].others
    assert found["mallory"].path == subs / "mallory" / "bob" / f"{chapter}.ipynb"
    assert [p.name for p in found["carol"].others] == [f"carol_{chapter}.ipynb"], "a conflict, not an abort"


def test_walking_a_student_folder_stops_at_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(grading, "MAX_ENTRIES", 50)
    folder = tmp_path / "subs" / "zed"
    (folder / "deeper").mkdir(parents=True)
    for i in range(100):
        (folder / f"n{i:03d}.ipynb").write_text("{}")
        (folder / "deeper" / f"m{i:03d}.ipynb").write_text("{}")
    found = grading.find_submissions([tmp_path / "subs"])
    assert 0 < len(found) <= 50 and {s.student for s in found} == {"zed"}
    assert all("only the first 50 files and folders of zed/" in s.notes[0] for s in found)


def test_prepare_collects_answers_where_feedback_stood_or_after_the_answer_cell():
    def cell(source, grade_id=None):
        made = nbformat.v4.new_code_cell(source)
        if grade_id:
            made.metadata["nbgrader"] = {"grade_id": grade_id}
        return made

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell("tip_height = 1", "answer-0.1"),
        cell('labkit.exercise("0.1")  # check'),
        cell("long_period = 2", "answer-0.2"),
        cell("long_period = 3", "answer-0.2"),
        cell("x = 1"),
        cell('labkit.exercise("0.1")'),
    ]
    collect, notes = grading.prepare(nb, chapter_specs(0))
    sources = [c.source for c in nb.cells]
    assert sources[1] == "__import__('labkit.exercises').exercises.collect(\"0.1\")  # check"
    assert sources[4] == "__import__('labkit.exercises').exercises.collect(\"0.2\")", (
        "a deleted feedback cell is collected after its (last) answer cell"
    )
    assert sources[-1].count("collect(") == 3, "a final cell collects every exercise"
    assert collect == [1, 4, 6, 7, 8]
    assert any("feedback cell of exercise 0.1 appears 2 times" in n for n in notes)
    assert any("answer cell of exercise 0.2 appears 2 times" in n for n in notes)
    assert any("feedback cell of exercise 0.2 is missing" in n for n in notes)
    assert any("exercise 0.3 has neither" in n for n in notes)


# -- the sandbox ----------------------------------------------------------------------------------
def in_sandbox(tmp_path: Path, probe: str, limits: sandbox.Limits | None = None) -> dict[str, str]:
    """Run Python code in a sandbox; its printed "key value" lines as a dict."""
    import subprocess
    import sys

    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "probe.py").write_text(probe)
    with sandbox.Sandbox(limits or sandbox.Limits(), inputs=inputs, env={"PATH": "/usr/bin:/bin"}) as box:
        argv = box.command([sys.executable, str(sandbox.INPUT / "probe.py")])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, preexec_fn=box.preexec)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


def test_the_sandbox_hides_the_machine_and_the_network(tmp_path):
    sandbox.check()
    lines = in_sandbox(tmp_path, (
        "import os, socket, pathlib\n"
        f"print('course', os.path.exists({str(REFERENCE.parent)!r}))\n"
        f"print('repo', os.path.exists({str(REFERENCE.parents[1] / '.git')!r}))\n"
        "print('uid', os.getuid() if os.geteuid() else 'root')\n"
        "s = socket.socket()\n"
        "try:\n    s.connect(('127.0.0.1', 9)); print('net', 'open')\n"
        "except OSError as e:\n    print('net', type(e).__name__)\n"
        "pathlib.Path('mine.txt').write_text('kept in the private folder')\n"
        "print('mine', pathlib.Path('mine.txt').read_text().replace(' ', '_'))\n"
        "for where in ('/usr/lib/x', '/x', '/dev/x', '/grading/x'):\n"
        "    try:\n        open(where, 'w')\n    except OSError as e:\n        print(where, e.errno)\n"))
    assert (lines["course"], lines["repo"], lines["/usr/lib/x"]) == ("False", "False", "30")
    assert lines["uid"] != "root" and lines["net"] != "open"
    assert lines["mine"] == "kept_in_the_private_folder"
    assert [lines[w] for w in ("/x", "/dev/x", "/grading/x")] == ["30"] * 3, (
        "its own tree and its inputs are read-only"
    )


def test_the_sandbox_limits_memory_processes_and_file_size(tmp_path):
    lines = in_sandbox(tmp_path, (
        "import resource\n"
        "limits = (resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE)\n"
        "print('limits', *(resource.getrlimit(k)[0] for k in limits))\n"
        "try:\n    block = bytearray(3 << 30); print('memory', 'allocated')\n"
        "except MemoryError:\n    print('memory', 'MemoryError')\n"
        "try:\n    open('big', 'wb').write(bytes(32 << 20)); print('file', 'written')\n"
        "except OSError as e:\n    print('file', e.errno)\n"),
        sandbox.Limits(memory_mb=2048, processes=64, file_mb=16))
    assert lines == {"limits": f"{2048 << 20} 64 {16 << 20}", "memory": "MemoryError", "file": "27"}


def test_learner_modules_never_import_the_classroom():
    import ast

    package = Path(grading.__file__).resolve().parents[1]
    tools = [package / "classroom", package / "drift"]        # the instructors' and maintainers' tools
    for path in package.rglob("*.py"):
        if any(path.is_relative_to(tool) for tool in tools) or path.name == "cli.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import | ast.ImportFrom) else []
            module = getattr(node, "module", "") or ""
            assert "classroom" not in module and not any("classroom" in n for n in names), path


def test_a_missing_bubblewrap_stops_grading_with_the_install_command(monkeypatch, tmp_path, cli):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    status, out = cli("grade", REFERENCE, "--out", tmp_path / "out")
    assert status == 2 and sandbox.INSTALL in out and "--no-sandbox" in out
    assert not (tmp_path / "out").exists()


# -- a class of chapter 00: broken and forged submissions -------------------------------------------------
FORGERIES = {
    # a post-run hook appending full-score lines to every log a grader might read
    "hook": "import json, os\n"
    "def forge(result):\n"
    "    for path in (os.environ.get('LABKIT_GRADES') or 'grades.jsonl', 'scores.json'):\n"
    "        with open(path, 'a') as f:\n"
    "            f.write(json.dumps({'exercise': '0.1', 'score': 1, 'points': 1}) + '\\n')\n"
    "get_ipython().events.register('post_run_cell', forge)",
    # labkit patched so that every requirement passes
    "patch": "import labkit.exercises.core as core\n"
    "core.Exercise._add = lambda self, r, ok, w, m, h, hidden=False: "
    "self.results.append(core.Result(r, True, w)) or True\n"
    "core.Spec.grade = lambda self, answers, hidden=False: None",
    # the feedback function redefined to print a full score
    "redefine": "import labkit\n"
    "labkit.exercise = lambda n: print(f'✔ Exercise {n} · forged: 2/2 points')\n"
    "labkit.exercises.collect = lambda n: print('[answers of exercise', n, 'collected]')",
    # fake feedback printed as rich output
    "prints": "from IPython.display import display\n"
    "display({'application/vnd.labkit.answers+json': {'exercise': '0.3', 'score': 2},\n"
    "         'text/plain': '✔ Exercise 0.3 · Damp the pendulum: 2/2 points'}, raw=True)",
}


@pytest.fixture(scope="module")
def server():
    """A TCP server on this machine's loopback that a sandboxed notebook must not reach."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    hits = []
    threading.Thread(target=lambda: hits.append(listener.accept()), daemon=True).start()
    yield listener.getsockname()[1], hits
    listener.close()


@pytest.fixture(scope="module")
def classroom(tmp_path_factory, server, cli):
    root = tmp_path_factory.mktemp("class")
    subs, out = root / "submissions", root / "out"
    handout = root / "handout"
    student.write_student_copies([START], handout)
    blank = nbformat.read(handout / START.name, as_version=4)
    stubs = [i for i, c in enumerate(blank.cells) if c.cell_type == "code" and student.STUB in c.source]
    answers = [
        i for i, c in enumerate(nbformat.read(START, as_version=4).cells) if "### BEGIN SOLUTION" in c.source
    ]
    assert len(stubs) == len(answers) == 3

    def write(name, nb):
        (subs / name).mkdir(parents=True)
        nbformat.write(nb, subs / name / START.name)

    def edited(edits, base=None):
        nb = nbformat.read(START, as_version=4) if base is None else base
        nb = json.loads(json.dumps(nb), object_hook=nbformat.NotebookNode)
        for index, source in edits.items():
            nb.cells[answers[index]].source = source
        return nb

    write("correct", nbformat.read(START, as_version=4))
    write("blank", blank)
    partial = edited({1: "long_period = 3.0", 2: blank.cells[stubs[2]].source})
    next(
        c for c in partial.cells if 'exercise("0.2"' in c.source
    ).source = "print('✔ Exercise 0.2: 2/2 points')"
    write("partial", partial)
    write("raises", edited({0: "tip_height = 1 / 0"}))
    write("loop", edited({1: "while True:\n    pass"}))
    write("exits", edited({0: "import sys\nsys.exit(3)"}))
    write("crashes", edited({1: "import os\nos._exit(7)"}))
    write(
        "floods",
        edited(
            {0: "for _ in range(600):\n    print('spam' * 2500)\ntip_height = fresh_data.site('tip').xpos[2]"}
        ),
    )
    port, _ = server
    reads = f"reference = open({str(REFERENCE)!r}).read()\n"
    connects = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)"
    writes = f"open({str(out / 'scores.csv')!r}, 'w').write('blank,00_start_here,1,2,2,5,5,ok')"
    for name, source in {**FORGERIES, "reads": reads, "connects": connects, "writes": writes}.items():
        nb = json.loads(json.dumps(blank), object_hook=nbformat.NotebookNode)
        nb.cells.insert(stubs[0], nbformat.v4.new_code_cell(source))
        write(f"forged_{name}", nb)
    (subs / "garbled").mkdir()
    (subs / "garbled" / START.name).write_text('{"cells": [ this is not json')
    before = tree_hashes(subs)
    status, text = cli(
        "grade",
        subs,
        "--out",
        out,
        "--cell-timeout",
        "5",
        "--timeout",
        "60",
        "--max-output",
        "2",
        "--jobs",
        "2",
    )
    assert tree_hashes(subs) == before, "submissions are byte-identical after grading"
    report = json.loads((out / "scores.json").read_text())
    return status, text, {s["student"]: s for s in report["submissions"]}, out


def scores(sub):
    return [sub["exercises"][i]["score"] for i in ("0.1", "0.2", "0.3")]


def problems(sub):
    return "\n".join(sub["problems"])


def test_grade_writes_a_table_a_gradebook_a_json_report_and_feedback(classroom):
    status, out, report, folder = classroom
    assert status == 0, out
    with open(folder / "scores.csv", newline="") as handle:
        rows = {r["student"]: r for r in csv.DictReader(handle)}
    assert (rows["correct"]["total"], rows["correct"]["points"]) == ("5", "5")
    assert rows["garbled"]["status"] == "invalid notebook"
    with open(folder / "grades.csv", newline="") as handle:
        book = list(csv.reader(handle))
    assert book[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", START.stem]
    assert book[1][0] == "Points Possible" and book[1][-1] == "5"
    assert ["correct", "", "", "correct", "", "5"] in book
    for name in report:
        text = (folder / f"feedback_{name}.md").read_text()
        assert text.startswith(f"# Feedback for {name}\n") and "### " in text
        assert re.search(rf"^[✔✘] {name} +{START.stem} ", out, re.M), f"no report line for {name}"


def test_correct_blank_and_partial_answers_get_their_scores(classroom):
    _, _, report, _ = classroom
    assert scores(report["correct"]) == [1, 2, 2] and report["correct"]["copied"] == ["0.2", "0.3"]
    assert all(p.startswith("PUBLISHED SOLUTION") for p in report["correct"]["problems"])
    assert scores(report["blank"]) == [0, 0, 0]
    assert report["blank"]["exercises"]["0.1"]["status"] == "not answered"
    partial = report["partial"]
    assert scores(partial) == [1, 0, 0], "a feedback cell replaced by a printed full score earns nothing"
    assert "`long_period` = 3 s is not right" in "\n".join(partial["exercises"]["0.2"]["messages"])
    assert any(m.startswith("not answered yet") for m in partial["exercises"]["0.3"]["messages"])
    assert "feedback cell of exercise 0.2 is missing" in problems(partial)


@pytest.mark.parametrize("name", [*FORGERIES, "reads", "connects", "writes"])
def test_no_forgery_scores_more_than_a_blank_copy(classroom, name):
    _, _, report, folder = classroom
    forged = report[f"forged_{name}"]
    assert sum(scores(forged)) <= sum(scores(report["blank"])) == 0, forged
    assert not (folder / "grades.jsonl").exists()


def test_inside_the_sandbox_the_reference_and_the_network_are_out_of_reach(classroom, server):
    _, _, report, folder = classroom
    assert "raised FileNotFoundError" in problems(report["forged_reads"]), problems(report["forged_reads"])
    assert re.search(
        r"raised (OSError|ConnectionRefusedError).*(unreachable|refused)", problems(report["forged_connects"])
    ), problems(report["forged_connects"])
    assert server[1] == [], "the connection never reached this machine's loopback"
    assert re.search(r"raised (FileNotFoundError|PermissionError|OSError)", problems(report["forged_writes"]))
    with open(folder / "scores.csv", newline="") as handle:
        assert {r["student"]: r["total"] for r in csv.DictReader(handle)}["blank"] == "0"


def test_invalid_json_is_reported_and_scores_zero(classroom):
    _, out, report, _ = classroom
    garbled = report["garbled"]
    assert garbled["status"] == "invalid notebook" and scores(garbled) == [0, 0, 0]
    assert "not valid JSON" in problems(garbled) and "not valid JSON" in out


def test_a_raising_cell_costs_only_its_exercise(classroom):
    _, _, report, _ = classroom
    assert scores(report["raises"]) == [0, 2, 2]
    assert "raised ZeroDivisionError: division by zero" in problems(report["raises"])


def test_an_infinite_loop_times_out_and_later_exercises_score_zero(classroom):
    _, _, report, _ = classroom
    loop = report["loop"]
    assert loop["status"] == "timed out" and scores(loop) == [1, 0, 0]
    assert "timed out in cell" in problems(loop) and "5 s cell limit" in problems(loop)
    assert [loop["exercises"][i]["status"] for i in ("0.2", "0.3")] == ["timed out", "timed out"]


def test_sys_exit_is_reported_and_grading_goes_on(classroom):
    _, _, report, _ = classroom
    assert scores(report["exits"]) == [0, 2, 2] and report["exits"]["status"] == "ok"
    assert "called sys.exit(3)" in problems(report["exits"])


def test_a_killed_kernel_is_reported_and_later_exercises_score_zero(classroom):
    _, _, report, _ = classroom
    crash = report["crashes"]
    assert crash["status"] == "kernel died" and scores(crash) == [1, 0, 0]
    assert "the kernel died in cell" in problems(crash) and "exit code 7" in problems(crash)
    assert crash["exercises"]["0.3"]["status"] == "kernel died"


def test_flooding_output_is_reported_without_costing_points(classroom):
    _, _, report, _ = classroom
    assert scores(report["floods"]) == [1, 2, 2]
    assert "more than 2 MB of output" in problems(report["floods"])


# -- the capstone: limits and helpers live in labkit -------------------------------------------------------
def test_editing_the_capstone_limits_or_its_run_earns_nothing(tmp_path):
    nb = nbformat.read(CAPSTONE, as_version=4)
    answer = next(c for c in nb.cells if "### BEGIN SOLUTION" in c.source and "answer = dict(" in c.source)
    answer.source = (
        "answer = dict(START)\n"
        "LIMITS.update(min_lift=0, max_slip=1, max_penetration=1)\n"
        "run = lambda params: type('R', (), dict(lift=1, slip=0, penetration=0, peak_force=0,"
        " jitter=0, unstable=[]))()"
    )
    (tmp_path / "eve").mkdir()
    nbformat.write(nb, tmp_path / "eve" / CAPSTONE.name)
    graded = grading.grade([tmp_path / "eve"], tmp_path / "out", jobs=1)[0]
    capstone = next(e for e in graded.exercises if e.id == "9.4")
    assert capstone.score < capstone.points, capstone.messages
    assert any("slipped" in m or "mm up" in m for m in capstone.messages)
