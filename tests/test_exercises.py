"""Exercises: answers as data, checkers in labkit, scores and feedback."""

from __future__ import annotations

import json

import numpy as np
import pytest

import labkit
from labkit.exercises import answers as kinds
from labkit.exercises import answers_of, chapter_specs, core, spec


@pytest.fixture
def toy():
    """A throwaway exercise "99.1" registered for the test (and removed afterwards)."""
    @core.checker("99.1", "Mass of a box", points=4, answers={"mass": kinds.NUMBER, "nq": kinds.INTEGER})
    def _(ex):
        ex.close("mass", 48.0, rtol=1e-6, unit="kg", hint="size is half-lengths",
                 mistakes={6.0: "you used the full lengths as half-lengths"})
        ex.equal("nq", 7, hint="a free joint")
        if ex.hidden:
            ex.require(ex.value("mass") > 0, "the mass is positive", hidden=True)
    yield spec("99.1")
    del core._REGISTRY["99.1"]


def grade(found, hidden=False, **namespace):
    return found.grade(answers_of(found.id, namespace), hidden=hidden)


def test_right_answers_earn_full_marks(toy):
    graded = grade(toy, mass=np.float64(48.0), nq=np.int64(7))
    assert graded.passed and graded.score == 4
    assert graded.text().startswith("✔ Exercise 99.1 · Mass of a box: 4/4 points")


def test_wrong_answer_gets_the_specific_explanation_and_partial_credit(toy):
    graded = grade(toy, mass=6.0, nq=7)
    text = graded.text()
    assert graded.score == 2 and "2/4 points" in text and "you used the full lengths" in text
    assert "hint: size is half-lengths" in text
    assert "48" not in text, "the answer is never revealed"


def test_missing_and_ill_typed_answers_say_what_to_do(toy):
    assert "you have not defined `mass` yet" in grade(toy, nq=7).text()
    assert grade(toy, nq=7).score == 2
    assert "`mass` should be a finite number, got nan" in grade(toy, mass=float("nan"), nq=7).text()
    assert "`nq` should be a whole number" in grade(toy, mass=48, nq=7.5).text()
    assert "should be a number, got str '" in grade(toy, mass="48", nq=7).text()


def test_hidden_requirements_count_only_when_graded(toy):
    shown = grade(toy, mass=48.0, nq=7)
    graded = grade(toy, hidden=True, mass=48.0, nq=7)
    assert len(graded.results) == len(shown.results) + 1 and graded.results[-1].hidden
    assert "(hidden test)" in graded.text()


def test_a_checker_error_is_feedback_not_a_crash():
    @core.checker("99.2", "Broken", points=1, answers={"x": kinds.NUMBER})
    def _(ex):
        ex.require(1 / 0 > 1, "divides")
    try:
        graded = grade(spec("99.2"), x=1)
        assert graded.score == 0 and "raised ZeroDivisionError" in graded.text()
    finally:
        del core._REGISTRY["99.2"]


def test_the_feedback_cell_reads_the_notebook_and_raises_on_failure(toy):
    mass, nq = 48.0, 7  # noqa: F841 - read by name through the caller's globals
    globals().update(mass=48.0, nq=7)
    try:
        assert labkit.exercise("99.1") is None
        globals()["mass"] = 6.0
        with pytest.raises(labkit.ExerciseFailed, match="2/4 points") as raised:
            labkit.exercise("99.1")
        # outside IPython the message is the whole feedback; IPython shows one line instead
        assert str(raised.value) == grade(toy, mass=6.0, nq=7).text()
        assert raised.value._render_traceback_() == [
            "Exercise 99.1 is not solved yet (2/4 points): the feedback above says what to change"]
    finally:
        del globals()["mass"], globals()["nq"]
    bare = labkit.ExerciseFailed("`x` is missing\nset it")   # raised without a feedback box shown
    assert bare._render_traceback_() == ["ExerciseFailed: `x` is missing", "set it"]


def test_in_a_notebook_a_wrong_answer_shows_its_feedback_once_and_no_traceback(tmp_path):
    """A wrong answer to exercise 0.1 in a real kernel (nbclient, as labkit execute, nbval and
    JupyterLab run it): the feedback box once, an error output of one line with no frame of
    labkit's, its evalue the whole feedback, and the run stops there (the cell is an error)."""
    import re

    import nbformat

    from labkit.classroom.notebooks import execute

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in (
        "import labkit\nlabkit.setup()", "tip_height = 3.0", 'labkit.exercise("0.1")', "after = 1")]
    nbformat.write(nb, tmp_path / "wrong.ipynb")
    graded = spec("0.1").grade({"tip_height": {"value": 3.0}})
    feedback = graded.text()                                          # what the box must say
    assert feedback.startswith("✘ Exercise 0.1 ") and graded.score == 0
    line = (f"Exercise 0.1 is not solved yet (0/{graded.points:g} points): "
            "the feedback above says what to change")
    run = execute(tmp_path / "wrong.ipynb")
    assert run.error == f"ExerciseFailed: {feedback}", "the cell fails: Run All, nbval and CI stop there"
    cells = run.notebook.cells
    assert cells[3].execution_count is None, "the cell after the failing one did not run"
    shown = [o for o in cells[2].outputs if o.output_type == "display_data"]
    (error,) = [o for o in cells[2].outputs if o.output_type == "error"]
    assert [o.data["text/plain"] for o in shown] == [feedback], "the box, once"
    assert error.ename == "ExerciseFailed" and error.evalue == feedback
    traceback = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in error.traceback]
    assert traceback == [line]
    assert not any("File " in line or "labkit" in line for line in traceback), traceback
    # JupyterLab shows `ename: evalue` (the feedback a second time) for an empty traceback
    assert "".join(traceback).strip()
    assert not any(line.strip() in "\n".join(traceback) for line in feedback.splitlines()[1:])


def test_a_lesson_cell_using_an_unwritten_answer_fails_in_one_line_naming_the_exercise(tmp_path):
    """In a real kernel after labkit.setup(): a NameError for an answer variable of the
    notebook's chapter (9.4's ``answer`` in chapter 09) is one line that names its exercise,
    and the cell still fails; a name that is another chapter's answer (4.4's
    ``make_controller``), any other name, a function's unbound local and a closure's free
    variable keep IPython's traceback.  Where the notebook's name gives no chapter, every
    chapter's answers count."""
    import nbformat

    from labkit.classroom.notebooks import execute

    def errors(name: str, *sources: str) -> list:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(s)
                    for s in ("import labkit\nlabkit.setup()\nrun = print", *sources)]
        nbformat.write(nb, tmp_path / name)
        run = execute(tmp_path / name, allow_errors=True)
        found = [[o for o in c.outputs if o.output_type == "error"] for c in run.notebook.cells[1:]]
        assert [len(e) for e in found] == [1] * len(sources), "each cell still fails"
        return [e for (e,) in found]

    answer, other_chapter, other, local, free = errors(
        "09_lesson.ipynb", "report = run(answer, 1)", "make_controller()", "undefined_thing + 1",
        "def f():\n    answer += 1\nf()",
        "def g():\n    answer = 1\n    def h():\n        return answer\n    del answer\n"
        "    return h()\ng()")
    assert (answer.ename, answer.evalue) == ("NameError", "name 'answer' is not defined")
    assert answer.traceback == [f"NameError: this cell uses `answer`, the answer to exercise 9.4 · "
                                f"{spec('9.4').title}: write that answer (and run its cell) first"]
    for shown in (other_chapter, other, local, free):
        assert len(shown.traceback) > 1, "IPython's own traceback"
    assert local.ename == "UnboundLocalError" and free.ename == "NameError"
    (anywhere,) = errors("scratch.ipynb", "make_controller()")
    assert anywhere.traceback[0].startswith("NameError: this cell uses `make_controller`, "
                                            "the answer to exercise 4.4")


def _probe_record(record):
    if not (isinstance(record, list) and all(isinstance(v, int) for v in record)):
        raise kinds.AnswerError("the record is not a list of whole numbers")
    return record


RECORDED = kinds.recorded(lambda f: [f(2)], "a function", validate=_probe_record)


def test_answers_become_json_data_of_their_kind():
    cases = [
        (kinds.array(length=2), (0.004, np.float32(1)), {"value": [0.004, 1.0]}),
        (kinds.array(length=2), [1, 2, 3], "should have 2 entries"),
        (kinds.array(integer=True), np.array([[1, 2], [3, 4]]), {"value": [[1, 2], [3, 4]]}),
        (kinds.mapping(kinds.array(length=2, integer=True)), {"left": (2, 0)}, {"value": {"left": [2, 0]}}),
        (kinds.mapping(kinds.NUMBER), {1: 2.0}, "keys should be strings"),
        (kinds.STRING, "<mujoco/>", {"value": "<mujoco/>"}),
        (kinds.STRING, b"<mujoco/>", "should be a string"),
        (kinds.BOOLEAN, np.bool_(False), {"value": False}),
        (kinds.BOOLEAN, 0, "True or False"),
        (kinds.PARAMS, {"cone": "elliptic", "kp": np.int64(3), "solref": (0.01, 1)},
         {"value": {"cone": "elliptic", "kp": 3, "solref": [0.01, 1.0]}}),
        (kinds.STRING, "x" * (kinds.MAX_BYTES + 1), "too large"),
        (kinds.array(), np.zeros(kinds.MAX_ITEMS + 1), "at most"),
        (RECORDED, lambda x: 2 * x, {"value": [4]}),
        (RECORDED, lambda x: 1 / 0, "raised ZeroDivisionError"),
        (RECORDED, 5, "should be a function"),
        (kinds.number(0, 10, low_open=True, unit=" N", why="a force"), 0,
         "should be above 0 N and at most 10 N, got 0 N: a force"),
        (kinds.number(0, 10), 10, {"value": 10.0}),
        (kinds.integer(0, 3), 4, "at most 3"),
        (kinds.array(items=[kinds.number(0, 1), kinds.number(1, 2)]), (0.5, 3), "entry 1: should be"),
        (kinds.array(each=kinds.number(0, 1)), [[0.5, 0.2], [1.5, 0]], "entry 2"),
        (kinds.fields({"kp": kinds.number(0, 100), "cone": kinds.STRING}), {"kp": 3}, {"value": {"kp": 3.0}}),
        (kinds.fields({"kp": kinds.number(0, 100)}), {"kpp": 3}, "unknown entry 'kpp'; did you mean 'kp'?"),
        (kinds.choice((1, 3, 4, 6), "condim"), 2, "should be 1, 3, 4 or 6 (condim), got '2'"),
        (kinds.choice(("pyramidal", "elliptic")), "elliptic", {"value": "elliptic"}),
        (kinds.fields({"kp": kinds.number(0, 100)}, required=["kp"]), {}, "lacks the entry 'kp'"),
    ]
    for kind, value, want in cases:
        got = kind.to_data(value, "x")
        json.dumps(got, allow_nan=False)
        if isinstance(want, dict):
            assert got == want, (kind.name, value)
        else:
            assert want in got["invalid"], (kind.name, got)
    assert kinds.encode(kinds.NUMBER, {}, "x") == kinds.MISSING
    assert kinds.encode(kinds.NUMBER, {"x": ...}, "x") == kinds.MISSING


def test_every_chapter_registers_its_exercises_in_order():
    from labkit.classroom.notebooks import course_notebooks

    for chapter in (int(p.stem[:2]) for p in course_notebooks()):
        found = chapter_specs(chapter)
        assert len(found) >= 3, f"chapter {chapter} has at least three exercises"
        assert [s.id for s in found] == [f"{chapter}.{i}" for i in range(1, len(found) + 1)]
        for s in found:
            assert s.points > 0 and s.answers and s.title
    with pytest.raises(KeyError, match=r"no exercise '42\.1'"):
        spec("42.1")


@pytest.mark.parametrize("forged, message", [
    ({"value": float("nan")}, "`mass` should be a finite number"),
    ({"value": float("inf")}, "`mass` should be a finite number"),
    ({"value": [48.0, 1.0]}, "`mass` should be a number, got list"),
    ({"value": "48"}, "`mass` should be a number, got str"),
    ({"value": True}, "`mass` should be a number, not True"),
    ({"value": {"a": 1}}, "`mass` should be a number, got dict"),
    ({"invalid": 7}, "you have not defined `mass` yet"),
    ({"missing": False}, "you have not defined `mass` yet"),
    ([48.0], "you have not defined `mass` yet"),
    (None, "you have not defined `mass` yet"),
])
def test_the_scorer_validates_forged_answer_data_with_the_kind(toy, forged, message):
    """However the payload was made (a patched collector, a hand-written report line), the
    checker only sees data its kind accepts: the same conversion as the notebook's."""
    graded = toy.grade({"mass": forged, "nq": {"value": 7}})
    assert graded.score == 2 and message in graded.text(), graded.text()
    assert toy.grade({"mass": {"value": 48.0}, "nq": {"value": 7.0}}).score == 4
    assert toy.grade("not a dict").score == 0
    assert "should be a whole number" in toy.grade({"mass": {"value": 48}, "nq": {"value": 7.5}}).text()


def test_a_record_is_validated_by_its_probes_validator():
    @core.checker("99.3", "Doubling", points=1, answers={"f": RECORDED})
    def _(ex):
        ex.equal("f", [4])
    try:
        assert spec("99.3").grade({"f": {"value": [4]}}).score == 1
        forged = spec("99.3").grade({"f": {"value": [4.5]}})
        assert forged.score == 0 and "not a list of whole numbers" in forged.text()
    finally:
        del core._REGISTRY["99.3"]


@pytest.fixture
def gated():
    """An exercise with a precondition (a positive mass) before its one weighted requirement."""
    @core.checker("99.4", "Positive mass", points=2, answers={"mass": kinds.NUMBER})
    def _(ex):
        ex.precondition(ex.value("mass") > 0, "the mass is positive", failure="it is not")
        ex.close("mass", 48.0, rtol=1e-6)
    yield spec("99.4")
    del core._REGISTRY["99.4"]


def test_a_precondition_earns_nothing_and_a_failed_one_stops_the_exercise(gated):
    right = gated.grade({"mass": {"value": 48.0}})
    assert right.score == 2 and right.passed
    assert [(r.weight, r.gate) for r in right.results] == [(0.0, True), (1.0, False)]
    met_only = gated.grade({"mass": {"value": 3.0}})
    assert met_only.score == 0, "meeting a precondition alone earns nothing"
    stopped = gated.grade({"mass": {"value": -1.0}})
    assert stopped.score == 0 and len(stopped.results) == 1
    assert "✘ the mass is positive · required before any points count" in stopped.text()
    assert stopped.record()["results"][0]["gate"] is True


def test_a_checker_that_cannot_judge_an_answer_scores_zero_not_half():
    @core.checker("99.5", "Raises late", points=2, answers={"x": kinds.NUMBER})
    def _(ex):
        ex.require(True, "the easy half")
        raise labkit.ExerciseFailed("the hard half cannot be judged")
    try:
        graded = spec("99.5").grade({"x": {"value": 1}})
        assert graded.score == 0 and "the hard half cannot be judged" in graded.text()
    finally:
        del core._REGISTRY["99.5"]


def test_weights_are_positive_and_an_exercise_needs_a_weighted_requirement():
    @core.checker("99.6", "Only gates", points=1, answers={"x": kinds.NUMBER})
    def _(ex):
        ex.precondition(True, "x exists")
    @core.checker("99.7", "Zero weight", points=1, answers={"x": kinds.NUMBER})
    def _(ex):
        ex.require(True, "free", weight=0)
    try:
        with pytest.raises(RuntimeError, match="only preconditions"):
            spec("99.6").grade({"x": {"value": 1}})
        assert "use precondition()" in spec("99.7").grade({"x": {"value": 1}}).text()
        assert spec("99.7").grade({"x": {"value": 1}}).score == 0
    finally:
        del core._REGISTRY["99.6"], core._REGISTRY["99.7"]


def test_the_grader_hands_a_checker_its_seed(monkeypatch):
    @core.checker("99.8", "Seeded", points=1, answers={"x": kinds.NUMBER})
    def _(ex):
        ex.require(ex.seed == 17, "the seed is the grader's", failure=f"it is {ex.seed}")
    try:
        assert spec("99.8").grade({"x": {"value": 1}}, seed=17).score == 1
        assert spec("99.8").grade({"x": {"value": 1}}).seed == 0, "a notebook's probes use seed 0"
        monkeypatch.setenv(kinds.SEED_VARIABLE, "17")
        assert kinds.probe_seed() == 17 and spec("99.8").grade({"x": {"value": 1}}).score == 1
        monkeypatch.setenv(kinds.SEED_VARIABLE, "not a number")
        assert kinds.probe_seed() == 0
    finally:
        del core._REGISTRY["99.8"]
