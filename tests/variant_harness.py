"""What every chapter's variant test does: sample students' numbers, apply the reference
method to each, and score it; score the published answer on the same numbers.

A chapter's ``tests/test_variants_chNN.py`` holds one reference method per exercise with
parameters, ``method(values) -> {answer name: value}`` (the notebook's solution, written
against the numbers it is given), and calls :func:`check_method`.  The number of sampled
students is :data:`SAMPLES` (``LABKIT_VARIANT_SAMPLES`` to sweep more, e.g. 50).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from labkit.exercises import spec
from labkit.exercises.variants import derive

SECRET = b"the test suite's secret, not an instructor's"
SAMPLES = int(os.environ.get("LABKIT_VARIANT_SAMPLES", "4"))

Method = Callable[[Mapping[str, float]], Mapping[str, Any]]


def variants(number: str, count: int = SAMPLES) -> list[dict[str, float]]:
    """The numbers of ``count`` different students for exercise ``number`` (all distinct
    when the grid allows it)."""
    found = spec(number)
    seen: list[dict[str, float]] = []
    for i in range(50 * count):
        values = derive(SECRET, f"student{i:04d}", found.id, found.params, found.valid)
        if values not in seen:
            seen.append(values)
        if len(seen) == count:
            break
    return seen


def as_data(number: str, answers: Mapping[str, Any]) -> dict[str, Any]:
    """Answer values as the feedback cell and the grader hand them to the checker."""
    found = spec(number)
    return {name: kind.to_data(answers[name], name) if name in answers else {"missing": True}
            for name, kind in found.answers.items()}


def score(number: str, answers: Mapping[str, Any], values: Mapping[str, float] | None) -> tuple[float, str]:
    """(score, feedback text) of ``answers`` on the numbers ``values``, hidden tests included."""
    graded = spec(number).grade(as_data(number, answers), hidden=True, seed=7, values=values)
    return graded.score, graded.text()


def check_method(number: str, method: Method, count: int = SAMPLES) -> None:
    """The reference method earns full marks on the published numbers and on ``count``
    students' numbers; the published answer earns under half marks on each student's."""
    found = spec(number)
    assert found.params, f"exercise {number} declares no parameters"
    published = dict(method(found.defaults))
    got, text = score(number, published, None)
    assert got == found.points, f"the reference method fails the published numbers:\n{text}"
    for values in variants(number, count):
        got, text = score(number, method(values), values)
        assert got == found.points, f"the reference method fails on {values}:\n{text}"
        got, text = score(number, published, values)
        assert got < found.points / 2, f"the published answer earns {got} on {values}:\n{text}"


def check_classmates(methods: Mapping[str, Method], pairs: int = 20) -> None:
    """A classmate's right answers earn under half of a chapter's varied points, for all but
    one in ten pairs of students: Alice's answers (the reference method on her numbers)
    scored on Bob's numbers, summed over the chapter's exercises ``methods``.  (Not for
    every pair: two students may draw the same number, or numbers within one tolerance of
    each other, for an exercise; the grids make that rare, not impossible.)"""
    points = sum(spec(n).points for n in methods)
    earned = []
    for i in range(pairs):
        alice, bob = f"student{2 * i:04d}", f"student{2 * i + 1:04d}"
        total = 0.0
        for number, method in methods.items():
            found = spec(number)
            mine = derive(SECRET, alice, found.id, found.params, found.valid)
            theirs = derive(SECRET, bob, found.id, found.params, found.valid)
            total += score(number, method(mine), theirs)[0]
        earned.append(total)
    lucky = [e for e in earned if e >= points / 2]
    assert len(lucky) <= pairs // 10, f"{len(lucky)} of {pairs} classmates earn half or more: {earned}"


def chapter_tests(methods: Mapping[str, Method]) -> tuple[Callable[..., None], Callable[[], None]]:
    """A chapter's two variant tests, to bind at its test module's top level (pytest collects
    them there): every reference method on sampled numbers (:func:`check_method`), and the
    classmates check (:func:`check_classmates`)."""
    import pytest

    @pytest.mark.parametrize("number", list(methods))
    def test_the_reference_method_answers_every_variant(number: str) -> None:
        check_method(number, methods[number])

    def test_a_classmates_answers_earn_under_half() -> None:
        check_classmates(methods)

    return test_the_reference_method_answers_every_variant, test_a_classmates_answers_earn_under_half
