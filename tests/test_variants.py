"""Variants: every exercise's numbers declared, derived from a secret, shown from the
parameters (never restated by hand), carried by handouts and never trusted by the grader.

Each chapter's reference methods on sampled students' numbers are in
``tests/test_variants_chNN.py``; grading with variants runs in tests/test_grading.py and
tests/test_gradescope.py."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from variant_harness import SECRET

from labkit.classroom import student
from labkit.classroom.notebooks import course_notebooks
from labkit.exercises import Param, chapter_specs, spec
from labkit.exercises.variants import (
    NAMESPACE_KEY,
    RosterError,
    SecretError,
    derive,
    given,
    new_secret,
    read_roster,
    read_secret,
)

COURSE = {int(p.name[:2]): p for p in course_notebooks()}
SPECS = [s for chapter in range(100) for s in chapter_specs(chapter)]
VARIED = [s for s in SPECS if s.params]


@pytest.mark.parametrize("number", [s.id for s in SPECS])
def test_every_exercise_varies_or_says_why_not(number):
    found = spec(number)
    assert found.params or len(found.fixed) >= 10, f"exercise {number} has no parameters and no reason"


def test_only_the_exercise_the_readme_names_is_fixed():
    assert [s.id for s in SPECS if not s.params] == ["4.3"]
    assert "Exercise 4.3 cannot vary" in (COURSE[0].parents[1] / "README.md").read_text()


def test_at_least_80_percent_of_the_points_vary():
    share = sum(s.points for s in VARIED) / sum(s.points for s in SPECS)
    assert share >= 0.8, f"{share:.0%} of the course's points vary"


def _question(number: str) -> tuple[list[str], list[str]]:
    """(markdown of the exercise's question, code before its feedback cell) in its chapter."""
    cells = nbformat.read(COURSE[spec(number).chapter], as_version=4).cells
    heading = re.compile(rf"^(\*\*|#+ (\d+ · )?)Exercise {re.escape(number)}\b", re.M)  # where it is posed
    start = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and heading.search(c.source))
    end = next(i for i, c in enumerate(cells) if i > start and c.cell_type == "code"
               and re.search(rf"exercise\(\s*['\"]{re.escape(number)}['\"]\s*\)", c.source))
    part = cells[start:end]
    return ([c.source for c in part if c.cell_type == "markdown"],
            [c.source for c in part if c.cell_type == "code"])


@pytest.mark.parametrize("number", [s.id for s in VARIED])
def test_the_question_shows_the_numbers_from_the_parameters(number):
    prose, code = _question(number)
    found = spec(number)
    asks = [i for i, text in enumerate(code) if re.search(rf"given\(\s*['\"]{re.escape(number)}['\"]", text)]
    answers = [i for i, text in enumerate(code) if "BEGIN SOLUTION" in text]
    assert asks and (not answers or asks[0] <= answers[0]), f"no labkit.given({number!r}) before the answer"
    for name, param in found.params.items():
        shown = param.show(param.default)
        for text in prose:
            said = re.sub(r"\s+", " ", text.replace("&nbsp;", " "))
            assert not re.search(rf"(?<![\d.,]){re.escape(shown)}(?![.,]?\d)", said), (
                f"exercise {number}'s question restates the default {name} = {shown}")


@pytest.mark.parametrize("number", [s.id for s in VARIED])
def test_the_grid_keeps_away_from_the_default(number):
    for name, param in spec(number).params.items():
        values = param.values()
        gap = param.step if param.gap is None else param.gap
        assert len(values) >= 4, f"{number}.{name}: only {len(values)} variants"
        assert all(param.low - 1e-12 <= v <= param.high + 1e-12 for v in values)
        assert all(abs(v - param.default) >= gap * (1 - 1e-9) for v in values)


def test_a_variant_is_stable_and_belongs_to_its_login_and_secret():
    found = next(s for s in VARIED if any(len(p.values()) >= 8 for p in s.params.values()))
    alice = derive(SECRET, "alice", found.id, found.params)
    assert alice == derive(SECRET, "alice", found.id, found.params)
    logins = [derive(SECRET, f"s{i}", found.id, found.params) for i in range(40)]
    assert len({json.dumps(v, sort_keys=True) for v in logins}) >= 4     # students differ
    other = [derive(SECRET + b"!", f"s{i}", found.id, found.params) for i in range(40)]
    assert other != logins                                                # so do secrets
    with pytest.raises(SecretError, match="at least"):
        derive(b"short", "alice", found.id, found.params)


def test_params_refuse_what_cannot_vary():
    with pytest.raises(ValueError, match="outside"):
        Param(5.0, 0.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="step > 0"):
        Param(0.5, 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="far enough"):
        Param(0.5, 0.5, 0.5, 0.1)
    assert Param(0.3, 0.1, 0.5, 0.1).values() == [0.1, 0.2, 0.4, 0.5]     # rounded to the step


def test_the_instructor_files_say_what_is_wrong(tmp_path):
    secret = new_secret(tmp_path / "secret")
    assert len(read_secret(secret)) == 64 and (secret.stat().st_mode & 0o077) == 0
    with pytest.raises(SecretError, match="exists already"):
        new_secret(secret)
    with pytest.raises(SecretError, match="labkit variants secret"):
        read_secret(tmp_path / "missing")
    (tmp_path / "tiny").write_text("abc")
    with pytest.raises(SecretError, match="at least"):
        read_secret(tmp_path / "tiny")
    roster = tmp_path / "roster.csv"
    for text, problem in [("name\nalice\n", "`login` column"), ("login\nalice\nalice\n", "twice"),
                          ("login\n../etc\n", "folder name"), ("login\n\n", "`login` column")]:
        roster.write_text(text)
        with pytest.raises(RosterError, match=problem):
            read_roster(roster)
    roster.write_text("login,name\nalice@uni.edu,Alice\nbob,Bob\n")
    assert read_roster(roster) == ["alice@uni.edu", "bob"]
    roster.write_text("Login ,name\nalice,A\nAlice,B\n")
    with pytest.raises(RosterError, match="ignore case"):
        read_roster(roster)
    roster.write_bytes("login\nJosé\n".encode("latin-1"))
    with pytest.raises(RosterError, match="UTF-8"):
        read_roster(roster)
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbf" + read_secret(secret) + b"\r\n")
    assert read_secret(tmp_path / "bom") == read_secret(secret)


def test_a_login_cannot_name_a_source_folder(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / COURSE[0].name).write_bytes(COURSE[0].read_bytes())
    before = (course / COURSE[0].name).read_bytes()
    with pytest.raises(student.StudentCopyError, match="folder of the source"):
        student.write_handouts([course], tmp_path, roster=["course"], secret=SECRET, force=True)
    assert (course / COURSE[0].name).read_bytes() == before


def test_given_shows_the_published_numbers_or_the_copys_own(capsys):
    found = VARIED[0]
    published = given(found.id)
    assert published.as_dict() == found.defaults and "published" in capsys.readouterr().out
    own = {n: p.values()[0] for n, p in found.params.items()}
    globals()[NAMESPACE_KEY] = {"login": "alice", "numbers": {found.id: own}}
    try:
        mine = given(found.id)
    finally:
        del globals()[NAMESPACE_KEY]
    assert mine.as_dict() == own and "your own numbers" in capsys.readouterr().out


def test_a_handout_carries_each_students_numbers_and_no_solution(tmp_path):
    secret = new_secret(tmp_path / "secret")
    roster = tmp_path / "roster.csv"
    roster.write_text("login\nalice\nbob\n")
    out = tmp_path / "handout"
    written = student.write_handouts([COURSE[0]], out, roster=read_roster(roster), secret=read_secret(secret))
    assert sorted(p.relative_to(out).as_posix() for p, _ in written) == [
        f"{who}/{COURSE[0].name}" for who in ("alice", "bob")]
    for who in ("alice", "bob"):
        cells = nbformat.read(out / who / COURSE[0].name, as_version=4).cells
        variant = [c for c in cells if student.VARIANT_TAG in c.metadata.get("tags", [])]
        assert len(variant) == 1 and variant[0].metadata["editable"] is False
        numbers = {s.id: derive(read_secret(secret), who, s.id, s.params) for s in chapter_specs(0)}
        assert json.dumps(numbers, sort_keys=True) in variant[0].source
        assert not any("BEGIN SOLUTION" in c.source for c in cells)
    with pytest.raises(student.StudentCopyError, match="overwrite"):
        student.write_handouts([COURSE[0]], out, roster=["alice"], secret=read_secret(secret))


def test_the_variants_command_makes_a_secret_and_lists_everyones_numbers(cli, tmp_path):
    status, text = cli("variants", "secret", tmp_path / "secret")
    assert status == 0 and "keep it safe" in text
    status, text = cli("variants", "secret", tmp_path / "secret")
    assert status == 2 and "exists already" in text
    (tmp_path / "roster.csv").write_text("login\nalice\nbob\n")
    status, text = cli("variants", "show", "--roster", tmp_path / "roster.csv", "--secret",
                       tmp_path / "secret", "--chapter", "0")
    secret = read_secret(tmp_path / "secret")
    lines = text.strip().splitlines()
    assert status == 0 and len(lines) == 2 * len(chapter_specs(0))
    swing = derive(secret, "bob", "0.1", spec("0.1").params)["swing"]
    assert f"bob\t0.1\tswing = {spec('0.1').params['swing'].show(swing)}" in lines
