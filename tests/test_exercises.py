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
        with pytest.raises(labkit.ExerciseFailed, match="2/4 points"):
            labkit.exercise("99.1")
    finally:
        del globals()["mass"], globals()["nq"]


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
        (kinds.recorded(lambda f: [f(2)], "a function"), lambda x: 2 * x, {"value": [4]}),
        (kinds.recorded(lambda f: [f(2)], "a function"), lambda x: 1 / 0, "raised ZeroDivisionError"),
        (kinds.recorded(lambda f: [f(2)], "a function"), 5, "should be a function"),
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
    for chapter in range(11):
        found = chapter_specs(chapter)
        assert len(found) >= 3, f"chapter {chapter} has at least three exercises"
        assert [s.id for s in found] == [f"{chapter}.{i}" for i in range(1, len(found) + 1)]
        for s in found:
            assert s.points > 0 and s.answers and s.title
    with pytest.raises(KeyError, match=r"no exercise '42\.1'"):
        spec("42.1")
