"""Exercises: full marks for right answers, specific feedback and partial credit otherwise."""

from __future__ import annotations

import json

import pytest

import labkit


def grade(namespace, **answers):
    """Run exercise 'T' against a namespace, the way a notebook cell would."""
    namespace.update(answers)
    ex = labkit.exercises.Exercise("T", "test", 4, namespace)
    with ex:
        ex.close("mass", 48.0, unit="kg", hint="size is half-lengths",
                 mistakes={6.0: "you used the full lengths as half-lengths"})
        ex.equal("nq", 7, hint="a free joint")
    return ex


def test_right_answers_earn_full_marks():
    ex = grade({}, mass=48.0, nq=7)
    assert ex.passed and ex.score == 4


def test_wrong_answer_gets_the_specific_explanation_and_partial_credit():
    with pytest.raises(labkit.ExerciseFailed) as info:
        grade({}, mass=6.0, nq=7)
    text = str(info.value)
    assert "2/4 points" in text and "you used the full lengths" in text
    assert "hint: size is half-lengths" in text
    assert "48" not in text  # the answer is never revealed


def test_missing_answer_says_what_to_define():
    with pytest.raises(labkit.ExerciseFailed, match="you have not defined `mass` yet"):
        grade({}, nq=7)


def test_an_error_while_checking_is_feedback_not_a_crash():
    ex = labkit.exercises.Exercise("E", "error", 1, {})
    with pytest.raises(labkit.ExerciseFailed, match="raised ZeroDivisionError"), ex:
        ex.require(1 / 0 > 1, "divides")
    assert ex.score == 0


def test_grades_log(tmp_path, monkeypatch):
    log = tmp_path / "grades.jsonl"
    monkeypatch.setenv("LABKIT_GRADES", str(log))
    grade({}, mass=48.0, nq=7)
    with pytest.raises(labkit.ExerciseFailed):
        grade({}, mass=1.0, nq=7)
    right, wrong = (json.loads(line) for line in log.read_text().splitlines())
    assert right["score"] == 4 and wrong["score"] == 2 and wrong["points"] == 4
    assert [r["passed"] for r in wrong["results"]] == [False, True]


def test_exercise_reads_the_callers_namespace():
    mass, nq = 48.0, 7  # noqa: F841 - read by name through the frame's globals
    ex = labkit.exercise("N", "namespace")
    assert ex._namespace is globals()
