"""Forged answer payloads, end to end: whatever a notebook hands the grader, only validated
answer values reach a checker, and junk scores no more than a blank copy.

Each submission is a blank chapter 00 copy plus one attack on the way answers leave the
student's kernel: a patched collector, a patched ``answers_of``, the answers MIME type
displayed by hand in a feedback cell, and a line written straight into the runner's report
pipe.  They carry NaN, Infinity, a list where a number is asked, and the values that earned
points before the scorer validated answers (``damping = 0`` gave 1/2 on exercise 0.3).
"""

from __future__ import annotations

import json

import nbformat
import pytest
from submissions import lean_chapter

from labkit.classroom import grading, launch, student
from labkit.exercises import ANSWERS_MIME

START = lean_chapter(0)   # chapter 00 as the grader's tests hand it in (tests/submissions.py)

JUNK = {"tip_height": float("nan"), "long_period": [1e308, 1e308], "damping": 0.0}

_PAYLOAD = (
    "import math\n"
    "import labkit.exercises as lx\n"
    "JUNK = {'tip_height': math.nan, 'long_period': [1e308, 1e308], 'damping': 0.0}\n"
    "def forged(number):\n"
    "    return {name: {'value': JUNK.get(name, math.inf)} for name in lx.spec(number).answers}\n"
)

ATTACKS = {
    "collector": _PAYLOAD + (
        "from IPython.display import display\n"
        "lx.collect = lambda number: display({lx.ANSWERS_MIME: {'exercise': number, "
        "'answers': forged(number)}, 'text/plain': ''}, raw=True)\n"),
    "answers_of": _PAYLOAD + "lx.answers_of = lambda number, namespace: forged(number)\n",
    # after every cell (the grader's collection cells too), a forged line into the report
    "report_pipe": _PAYLOAD + (
        "import json, os, stat\n"
        "def forge(result=None):\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        "            if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        "                for n in ('0.1', '0.2', '0.3'):\n"
        "                    line = {'answers': {'exercise': n, 'answers': forged(n)}, 'cell': 0}\n"
        "                    os.write(fd, (json.dumps(line) + '\\n').encode())\n"
        "        except OSError:\n"
        "            pass\n"
        "get_ipython().events.register('post_run_cell', forge)\n"),
}


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    root = tmp_path_factory.mktemp("attacks")
    student.write_student_copies([START], root / "handout")
    blank = nbformat.read(root / "handout" / START.name, as_version=4)
    first = next(i for i, c in enumerate(blank.cells) if c.cell_type == "code" and student.STUB in c.source)

    def write(name: str, nb: nbformat.NotebookNode) -> None:
        (root / "subs" / name).mkdir(parents=True)
        nbformat.write(nb, root / "subs" / name / START.name)

    for name, source in ATTACKS.items():
        nb = nbformat.from_dict(json.loads(json.dumps(blank)))
        nb.cells.insert(first, nbformat.v4.new_code_cell(source))
        write(name, nb)
    nb = nbformat.from_dict(json.loads(json.dumps(blank)))
    feedback = next(c for c in nb.cells if c.cell_type == "code" and 'labkit.exercise("0.3")' in c.source)
    feedback.source += ("\nfrom IPython.display import display\n"
                        f"display({{{ANSWERS_MIME!r}: {{'exercise': '0.3', 'answers': "
                        "{'damping': {'value': 0.0}}}}, raw=True)")
    write("mime_in_feedback", nb)
    results = grading.grade([root / "subs"], root / "out", jobs=2, timeout=120, cell_timeout=60)
    return {g.student: g for g in results}


@pytest.mark.parametrize("attack", [*ATTACKS, "mime_in_feedback"])
def test_a_forged_payload_scores_no_more_than_a_blank_copy(attacked, attack):
    """A blank copy scores 0 (tests/test_grading.py grades one)."""
    graded = attacked[attack]
    assert graded.total == 0, [(e.id, e.score, e.messages) for e in graded.exercises]


def test_forged_values_reach_the_scorer_and_are_refused_with_the_kinds_message(attacked):
    """The attack did deliver its payload (the refusal is the scorer's, not a lost line)."""
    for attack in ("collector", "answers_of", "report_pipe"):
        messages = "\n".join(m for e in attacked[attack].exercises for m in e.messages)
        assert "`tip_height` should be a finite number" in messages, (attack, messages)
        assert "`long_period` should be a number" in messages, (attack, messages)


def test_the_scorer_process_validates_what_it_is_sent():
    """The scorer itself (a fresh process, no student code) refuses non-finite and
    ill-typed data, as sent by a grader that read a forged report line."""
    records = launch.score_answers({
        "5.1": {"block_solref": {"value": [0.004, 1.0]},
                "block_solimp": {"value": [0.95, 0.99, float("inf"), 0.5, 2]}},
        "0.1": {"tip_height": {"value": "0.4"}},
    })
    assert records["5.1"]["score"] == 0 and records["0.1"]["score"] == 0
    text = json.dumps(records)
    assert "should hold finite numbers only" in text or "finite" in text
    assert "`tip_height` should be a number, got str" in text


def test_the_scorer_grades_a_code_answer_against_the_graders_seed():
    """A record made in a notebook (seed 0, the published default) is worth full marks only
    for seed 0: ``labkit grade`` draws a seed per submission and gives it to the probes and
    to the scorer, so a record copied from the published notebook or a neighbour does not
    transfer."""
    from test_exercises_ch04_06 import ctrl_index

    from labkit.exercises import answers_of

    made = answers_of("4.3", {"ctrl_index": ctrl_index})
    assert made["ctrl_index"]["value"]["seed"] == 0
    assert launch.score_answers({"4.3": made}, seed=0)["4.3"]["score"] == 2
    assert launch.score_answers({"4.3": made}, seed=987654321)["4.3"]["score"] == 0
