"""``labkit grade --roster --secret``: each student graded on their own numbers, never on
the numbers their copy carries.

Chapter 00 (three exercises, all with parameters) is handed out to a roster.  Alice
answers her own numbers; Bob submits Alice's notebook; Carol edits her copy's numbers to
the published ones and pastes the published solution; Dave hands in the blank handout;
Eve is not on the roster.  One command-line run grades them all.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from submissions import lean_chapter

from labkit.classroom import student
from labkit.exercises import chapter_specs
from labkit.exercises.variants import derive, read_secret, variant_cell

START = lean_chapter(0)   # chapter 00 as the grader's tests hand it in (tests/submissions.py)
POINTS = sum(s.points for s in chapter_specs(0))


def numbers_of(secret: bytes, login: str) -> dict:
    return {s.id: derive(secret, login, s.id, s.params) for s in chapter_specs(0)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, cli):
    root = tmp_path_factory.mktemp("variants")
    secret_file = root / "secret"      # fixed, so that the run is the same every time
    secret_file.write_text("the grading test's secret, 0423456789abcdef\n")
    secret = read_secret(secret_file)
    alice_numbers, bob_numbers = numbers_of(secret, "alice"), numbers_of(secret, "bob")
    assert all(alice_numbers[n] != bob_numbers[n] for n in alice_numbers), "pick a secret where they differ"
    (root / "roster.csv").write_text("login,name\nalice,Alice\nbob,Bob\ncarol,Carol\ndave,Dave\n"
                                     "frank,Frank\ngrace,Grace\n")
    status, text = cli("student", START, root / "handout", "--roster", root / "roster.csv",
                       "--secret", secret_file)
    assert status == 0, text
    reference = nbformat.read(START, as_version=4)
    alice = student.with_variant(reference, "alice", secret)      # the solutions, on Alice's numbers
    carol = student.with_variant(reference, "carol", secret)
    cell = next(c for c in carol.cells if student.VARIANT_TAG in c.metadata.get("tags", []))
    cell.source = variant_cell("carol", {s.id: s.defaults for s in chapter_specs(0)}, secret)
    forged = student.with_variant(reference, "frank", secret)    # numbers no float can hold
    forged.cells.insert(4, nbformat.v4.new_code_cell(
        "__labkit_variant__['numbers']['0.1']['swing'] = 10**400"))
    subs = root / "subs"
    for who, nb in {"alice": alice, "bob": alice, "carol": carol, "eve": alice, "frank": forged,
                    "Grace": student.with_variant(reference, "grace", secret),
                    "dave": nbformat.read(root / "handout" / "dave" / START.name, as_version=4)}.items():
        (subs / who).mkdir(parents=True)
        nbformat.write(nb, subs / who / START.name)
    status, text = cli("grade", subs, "--out", root / "out", "--roster", root / "roster.csv",
                       "--secret", secret_file, "--jobs", "2", "--timeout", "120")
    report = json.loads((root / "out" / "scores.json").read_text())
    status, text_plain = cli("grade", subs / "alice", "--out", root / "plain", "--jobs", "1")
    assert status == 0, text_plain
    plain = json.loads((root / "plain" / "scores.json").read_text())
    return ({s["student"]: s for s in report["submissions"]}, text, secret,
            plain["submissions"][0], (root / "handout"))


def test_the_handout_shows_each_student_their_own_numbers(graded):
    *_, secret, _, handout = graded
    for who in ("alice", "bob"):
        source = "".join(c.source for c in nbformat.read(handout / who / START.name, as_version=4).cells)
        assert json.dumps(numbers_of(secret, who), sort_keys=True) in source


def test_alice_earns_full_marks_on_her_own_numbers(graded):
    report, *_ = graded
    assert report["alice"]["total"] == POINTS and report["alice"]["variant"] == "own"
    assert not any("VARIANT" in p for p in report["alice"]["problems"])


def test_alices_notebook_earns_bob_under_half_and_is_flagged(graded):
    report, *_ = graded
    assert report["bob"]["total"] < POINTS / 2 and report["bob"]["variant"] == "changed"
    assert sum("VARIANT CHANGED" in p for p in report["bob"]["problems"]) == len(chapter_specs(0))


def test_the_published_solution_on_edited_numbers_earns_nothing_and_is_flagged(graded):
    report, *_ = graded
    assert report["carol"]["total"] == 0 and report["carol"]["variant"] == "changed"
    assert any("the copy's numbers are" in p and "carol" not in p for p in report["carol"]["problems"])


def test_the_blank_handout_earns_nothing_and_is_not_flagged(graded):
    report, *_ = graded
    assert report["dave"]["total"] == 0 and report["dave"]["variant"] == "own"


def test_a_student_not_on_the_roster_is_not_graded(graded):
    report, *_ = graded
    assert report["eve"]["status"] == "not on roster" and report["eve"]["total"] == 0


def test_without_the_secret_the_published_numbers_are_graded_and_it_says_so(graded):
    *_, plain, _ = graded
    assert plain["variant"] == "published"
    assert any("no --secret" in p for p in plain["problems"])


def test_the_command_refuses_a_roster_without_a_secret(cli, tmp_path):
    (tmp_path / "roster.csv").write_text("login\nalice\n")
    status, text = cli("grade", tmp_path, "--out", tmp_path / "out", "--roster", tmp_path / "roster.csv")
    assert status == 2 and "--secret" in text
    status, text = cli("student", START, tmp_path / "h", "--roster", tmp_path / "roster.csv")
    assert status == 2 and "go together" in text
    status, text = cli("grade", tmp_path, "--out", tmp_path / "out", "--secret", tmp_path / "none")
    assert status == 2 and "labkit variants secret" in text


def test_the_published_solution_code_on_ones_own_numbers_is_named(graded):
    """The reference solutions compute from the given numbers, so pasted into one's own
    handout they answer them: the score stands (a method may be fair), the report names it."""
    report, *_ = graded
    assert report["alice"]["copied"] == ["0.2", "0.3"]        # 0.1's one-line answer is everyone's
    assert sum("PUBLISHED SOLUTION" in p for p in report["alice"]["problems"]) == 2
    assert report["dave"]["copied"] == []


def test_logins_ignore_case_and_forged_numbers_cannot_break_the_grader(graded):
    report, *_ = graded
    assert report["Grace"]["total"] == POINTS and report["Grace"]["variant"] == "own"
    assert report["frank"]["status"] == "ok" and report["frank"]["variant"] == "changed"
    assert any("swing = unreadable" in p for p in report["frank"]["problems"])


def test_a_grader_given_another_secret_says_so(graded, cli, tmp_path):
    secret = graded[2]
    (tmp_path / "other").write_text("another secret, 0123456789abcdef\n")
    (tmp_path / "roster.csv").write_text("login\nalice\n")
    subs = tmp_path / "subs" / "alice"
    subs.mkdir(parents=True)
    nbformat.write(student.with_variant(nbformat.read(START, as_version=4), "alice", secret),
                   subs / START.name)
    cli("grade", tmp_path / "subs", "--out", tmp_path / "out", "--roster", tmp_path / "roster.csv",
        "--secret", tmp_path / "other")
    alice = json.loads((tmp_path / "out" / "scores.json").read_text())["submissions"][0]
    assert alice["variant"] == "other secret" and not any("VARIANT CHANGED" in p for p in alice["problems"])
    assert any("made with another secret" in p for p in alice["problems"])
