"""The checks are real: change a model parameter a claim depends on, and the chapter fails.

Each case copies models/ to a temporary folder, edits one attribute of one model, runs
one chapter against the copy (LABKIT_MODELS points labkit.load there) and expects a
ClaimFailed or ExerciseFailed, not a pass and not an unrelated error.
"""

from __future__ import annotations

import shutil

import pytest

from labkit.models import models_dir
from labkit.notebooks import course_dir, execute

MUTATIONS = [
    # (chapter, model file, original text, replacement, why a claim must fail)
    ("00_start_here", "pendulum.xml", 'damping="0"', 'damping="0.05"',
     "damping drains energy: the bounded-wobble claim breaks"),
    ("00_start_here", "pendulum.xml", 'size="0.05" mass="1"', 'size="0.05" mass="1.5"',
     "the body-mass claim sums the geoms' masses"),
]


@pytest.mark.parametrize(("chapter", "file", "old", "new", "why"), MUTATIONS,
                         ids=[f"{m[0]}:{m[3]}" for m in MUTATIONS])
def test_a_changed_parameter_fails_the_chapter(tmp_path, chapter, file, old, new, why):
    mutated = tmp_path / "models"
    shutil.copytree(models_dir(), mutated)
    text = (mutated / file).read_text()
    assert text.count(old) == 1, f"mutation target {old!r} not unique in {file}"
    (mutated / file).write_text(text.replace(old, new))
    run = execute(course_dir() / f"{chapter}.ipynb", env={"LABKIT_MODELS": str(mutated)})
    assert run.error is not None, f"{chapter} still passes although {why}"
    assert run.error.startswith(("ClaimFailed", "ExerciseFailed")), run.error
