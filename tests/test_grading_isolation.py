"""Hostile neighbours: a submission that forks to its limit, fills memory or fills every disk it
can see scores no more than a blank copy and costs the honest submissions graded next to it
(``--jobs 2``) nothing; a grader that fails says so instead of giving a silent 0.

One class of chapter 00 is graded once, with small limits so that the attacks stay cheap:
the forking notebook holds its processes while two honest neighbours run and are scored;
the memory notebook forks three children that each fill 1 GiB under a 3 GiB sandbox; the
disk notebook writes to /tmp, /dev/shm and its working folder until each is full.  The same
class has a nested folder (``mallory/bob/``) and a student with two notebooks of one chapter.
"""

from __future__ import annotations

import csv
import json
import re
import time

import nbformat
import pytest
from submissions import lean_chapter

from labkit.classroom import grading, launch, sandbox, student

START = lean_chapter(0)   # chapter 00 as the grader's tests hand it in (tests/submissions.py)
LIMITS = sandbox.Limits(memory_mb=3072, processes=256, tmp_mb=256, work_mb=256, shm_mb=32)
HOLD = 45  # s the forking notebook holds its processes: longer than two neighbours' runs

# its children sleep until it kills them (so that its own notebook can go on: at its limit,
# it could start no thread either); the times are this machine's clock
FORK = f"""import os, signal, time
kids, why = [], 'no limit met'
while len(kids) < 5000:
    try:
        pid = os.fork()
    except OSError as e:
        why = e.strerror
        break
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    kids.append(pid)
filled = time.time()
time.sleep({HOLD})
held = f'held them from {{filled:.1f}} to {{time.time():.1f}}'
for pid in kids:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
raise RuntimeError(f'forked {{len(kids)}} processes, then {{why}}; {{held}}')
"""

MEMORY = """import os, select, time
r, w = os.pipe()
go_r, go_w = os.pipe()
kids = []
for index in range(3):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(1 << 30)
            block[::4096] = b'x' * len(range(0, 1 << 30, 4096))
            os.write(w, str(index).encode())
        except MemoryError:
            os.write(w, b'M')
        os.read(go_r, 1)
        os._exit(0)
    kids.append(pid)
got, ended, deadline = b'', set(), time.time() + 60
while len(got) + len(ended) < 3 and time.time() < deadline:
    if select.select([r], [], [], 0.1)[0]:
        got += os.read(r, 16)
    ended |= {k for k in kids if k not in ended and os.waitpid(k, os.WNOHANG)[0]}
time.sleep(1)
ended |= {k for k in kids if k not in ended and os.waitpid(k, os.WNOHANG)[0]}
# a block counts only if its child is still alive: the cgroup's OOM killer may have taken an
# earlier one to make room for a later one, and then the blocks were never held at once
held = sum(1 for i, k in enumerate(kids) if str(i).encode() in got and k not in ended)
os.close(go_w)
raise RuntimeError(f"held {held} of 3 blocks of 1 GiB at once")
"""

DISKS = """import os
out = []
for where in ('/tmp', '/dev/shm', '.'):
    written, why = 0, 'no limit met'
    try:
        while written < (1 << 30):
            with open(f'{where}/fill{written}', 'wb') as f:
                f.write(bytes(32 << 20))
            written += 32 << 20
    except OSError as e:
        why = e.strerror
    for name in os.listdir(where):
        if name.startswith('fill'):
            os.remove(f'{where}/{name}')
    out.append(f'{where} {written >> 20} MiB ({why})')
raise RuntimeError('wrote ' + '; '.join(out))
"""


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory):
    root = tmp_path_factory.mktemp("neighbours")
    subs = root / "subs"
    student.write_student_copies([START], root / "handout")
    blank = nbformat.read(root / "handout" / START.name, as_version=4)
    first = next(i for i, c in enumerate(blank.cells) if c.cell_type == "code" and student.STUB in c.source)

    def write(relative: str, nb: nbformat.NotebookNode) -> None:
        (subs / relative).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, subs / relative)

    def attack(source: str, at: int = first) -> nbformat.NotebookNode:
        nb = nbformat.from_dict(json.loads(json.dumps(blank)))
        nb.cells.insert(at, nbformat.v4.new_code_cell(source))
        return nb

    honest = nbformat.read(START, as_version=4)
    # graded in name order, two at once: the forker first (it forks in its first cell), bob next
    # to it (his scorer starts once the forker holds its processes), then carol (a conflict:
    # nothing runs), cat (a blank copy that sleeps 10 s first, so that the forker is surely
    # full) and dave, who starts and ends while the forker holds its processes
    write(f"a_forker/{START.name}", attack(FORK, at=0))
    write(f"bob/{START.name}", honest)
    write(f"carol/{START.name}", honest)
    write(f"carol/old/carol_{START.name}", blank)
    write(f"cat/{START.name}", attack("import time\ntime.sleep(10)"))
    write(f"dave/{START.name}", honest)
    write(f"disks/{START.name}", attack(DISKS))
    write(f"mallory/bob/{START.name}", blank)
    write(f"memory/{START.name}", attack(MEMORY))
    echoed: list[tuple[float, str]] = []  # (when, console line)
    results = grading.grade(
        [subs],
        root / "out",
        jobs=2,
        timeout=120,
        cell_timeout=60,
        limits=LIMITS,
        echo=lambda line: echoed.append((time.time(), line)),
    )
    return {g.student: g for g in results}, root / "out", echoed


def problems(graded) -> str:
    return "\n".join(graded.problems)


def test_honest_neighbours_of_a_forking_notebook_get_full_marks(neighbours):
    report, _, echoed = neighbours
    for name in ("bob", "dave"):
        graded = report[name]
        others = [p for p in graded.problems if not p.startswith("PUBLISHED SOLUTION")]  # the reference's
        assert (graded.status, graded.total, others) == ("ok", 5, []), (name, graded.problems)
    cat = report["cat"]  # a neighbour too: a blank copy, unharmed
    assert (cat.status, cat.total, cat.problems) == ("ok", 0, []), cat.problems
    forker = report["a_forker"]
    assert forker.total <= cat.total, [(e.id, e.score) for e in forker.exercises]
    found = re.search(
        r"forked (\d+) processes, then Resource temporarily unavailable; held them from "
        r"([\d.]+) to ([\d.]+)",
        problems(forker),
    )
    assert found and 100 < int(found[1]) <= LIMITS.processes, problems(forker)
    ended = next(when for when, line in echoed if re.match(r". dave ", line))
    started = ended - report["dave"].seconds
    assert float(found[2]) < started and ended < float(found[3]), (
        "dave's whole run (runner and scorer) falls while the forker holds its processes",
        found[0],
        started,
        ended,
    )


def test_memory_is_bounded_for_the_whole_sandbox(neighbours):
    report, _, _ = neighbours
    hog = report["memory"]
    assert hog.total == 0
    if sandbox.mechanism() == "rlimits":
        pytest.skip("no writable cgroup here: memory is bounded per process only (RLIMIT_AS)")
    held = re.search(r"held (\d) of 3 blocks", problems(hog))
    assert (held and int(held[1]) <= 2) or hog.status == "kernel died", problems(hog)


def test_tmp_shm_and_the_working_folder_are_bounded(neighbours):
    report, _, _ = neighbours
    filler = report["disks"]
    assert filler.total == 0
    wrote = dict(re.findall(r"(/tmp|/dev/shm|\.) (\d+) MiB \(No space left on device\)", problems(filler)))
    assert set(wrote) == {"/tmp", "/dev/shm", "."}, problems(filler)
    assert int(wrote["/tmp"]) <= LIMITS.tmp_mb and int(wrote["."]) <= LIMITS.work_mb
    assert int(wrote["/dev/shm"]) <= LIMITS.shm_mb


def test_a_nested_folder_is_its_top_level_students(neighbours):
    report, out, _ = neighbours
    assert report["bob"].file.endswith(f"subs/bob/{START.name}") and report["bob"].total == 5
    assert report["mallory"].file.endswith(f"subs/mallory/bob/{START.name}") and report["mallory"].total == 0
    with open(out / "scores.csv", newline="") as handle:
        assert [r["student"] for r in csv.DictReader(handle)].count("bob") == 1


def test_a_conflict_is_reported_for_its_student_and_the_class_is_graded(neighbours):
    report, out, echoed = neighbours
    carol = report["carol"]
    assert carol.status == "conflict" and carol.total == 0
    assert "2 notebooks of 00_start_here were submitted for carol" in problems(carol)
    assert all(e.status == "not graded" for e in carol.exercises)
    with open(out / "scores.csv", newline="") as handle:
        assert {r["student"]: r["status"] for r in csv.DictReader(handle)}["carol"] == "conflict"
    assert "2 notebooks of 00_start_here were submitted" in (out / "feedback_carol.md").read_text()
    assert any(re.match(r"✘ carol +00_start_here .* conflict", line) for _, line in echoed), echoed
    assert len(report) == 8


def test_every_sandbox_has_its_own_uid_and_cgroup():
    with sandbox.Sandbox(LIMITS) as one, sandbox.Sandbox(LIMITS) as two:
        if one.uid is not None:
            assert one.uid != two.uid and one.uid >= sandbox.UID_FIRST
        if one._cgroup:
            assert one._cgroup.folders != two._cgroup.folders
            assert all(folder.is_dir() for folder in one._cgroup.folders)
    assert not one._cgroup, "closed: its cgroup is gone"


# -- a grader that fails ---------------------------------------------------------------------------
def tiny(folder, name="zoe"):
    """A chapter 00 submission that only collects its (missing) answers: quick to run."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f'import labkit\nlabkit.exercise("0.{i}")') for i in (1, 2, 3)]
    (folder / name).mkdir(parents=True)
    nbformat.write(nb, folder / name / START.name)
    return folder


def test_a_scorer_that_never_starts_is_a_grader_error_not_a_zero(tmp_path, monkeypatch, cli):
    monkeypatch.setattr(launch, "_SCORER", "import sys; sys.exit('the scorer is broken here')")
    status, out = cli("grade", tiny(tmp_path / "subs"), "--out", tmp_path / "out", "--jobs", "1")
    assert status == 1, out
    assert re.search(r"✘ zoe +00_start_here +0/5 points  grader error", out), out
    assert "the scorer could not start: the scorer is broken here" in out and "NOT graded" in out
    (graded,) = json.loads((tmp_path / "out" / "scores.json").read_text())["submissions"]
    assert graded["status"] == "grader error"
    assert {e["status"] for e in graded["exercises"].values()} == {"not graded"}
    assert "GRADER ERROR" in (tmp_path / "out" / "feedback_zoe.md").read_text()


def test_a_runner_that_never_starts_is_a_grader_error(tmp_path, monkeypatch):
    monkeypatch.setattr(launch, "RUNNER", "labkit.classroom.no_such_runner")
    (graded,) = grading.grade([tiny(tmp_path / "subs")], tmp_path / "out", jobs=1)
    assert graded.status == "grader error" and graded.total == 0
    assert "the notebook runner stopped before the notebook's first cell" in problems(graded)
    assert "No module named labkit.classroom.no_such_runner" in problems(graded)


def test_a_checker_that_crashes_costs_its_exercise_and_is_no_grader_error(monkeypatch):
    """A scorer that starts (says it is ready) and dies on an answer: that answer scores 0
    with its reason; a scorer that never starts raises GraderError."""
    monkeypatch.setattr(launch, "_SCORER", "import os; print('{\"ready\": true}', flush=True); os._exit(1)")
    records = launch.score_answers({"0.1": {"tip_height": {"value": 0.4}}, "0.2": {}})
    assert set(records) == {"0.1", "0.2"} and all("crashed" in r["error"] for r in records.values())
    monkeypatch.setattr(launch, "_SCORER", "import os; os._exit(1)")
    with pytest.raises(launch.GraderError, match="the scorer could not start"):
        launch.score_answers({"0.1": {}})


def test_the_sandbox_reads_the_corpus_and_cannot_change_it(corpus):
    """Chapter 11 loads real models in the grader's sandbox, which has no network: it sees the
    machine's cached corpus read-only, through LABKIT_CORPUS."""
    import subprocess
    import sys

    env = launch._environment(launch._paths()[1], "probe")
    probe = ("import labkit, pathlib; labkit.setup(quiet=True); import labkit.corpus as c; "
             "m, d = c.load('gymnasium/ant'); print(m.ngeom); p = c.path('gymnasium/ant'); "
             "exec('try:\\n p.write_text(\"x\")\\n print(\"wrote\")\\nexcept OSError:\\n "
             "print(\"read-only\")')")
    with launch._box(LIMITS, use_sandbox=True, inputs=None, env=env) as box:
        result = subprocess.run(box.command([sys.executable, "-c", probe]), env=env,
                                capture_output=True, text=True, timeout=120,
                                preexec_fn=box.preexec)
    assert result.returncode == 0, result.stderr[-2000:]
    ngeom = corpus.load("gymnasium/ant")[0].ngeom
    assert result.stdout.split() == [str(ngeom), "read-only"]
