"""A self-learner's practice copies of the chapters: blank, their own, never overwritten.

``./run.sh lab`` runs ``labkit practice lab`` (:func:`lab`): :func:`init`, then JupyterLab
serving the practice folder, ``practice/`` beside ``course/`` in the repository
(git-ignored; ``$LABKIT_PRACTICE`` moves it), landing on its chapter 00::

    practice/
      00_start_here.ipynb …       the learner's copies (:func:`practice_notebook`)
      reference -> ../course      the reference chapters, solutions shown (a symbolic link)
      references.md, drift.md     links to course/'s pages, so that the chapters' links work
      .backup/                    every notebook a reset replaced, stamped with UTC time
      .practice.json              the reference each copy was made from (labkit's, not yours)

A practice copy is the chapter's student copy (:mod:`.student`: solutions replaced by
``raise labkit.exercises.NotAnswered(...)`` stubs, nothing leaked, outputs cleared) in
which the answer cells, the feedback cells and the lesson cells that use an answer's
variables are tagged ``raises-exception``: Run All shows each blank or wrong answer's
one line and feedback box and goes on (a lesson cell that uses a blank answer shows one
line naming that exercise: :func:`labkit.exercises.explain_missing_answers`).  The
reference chapters carry no such tag, so a wrong answer there still fails the run (nbval,
CI).

- :func:`init` adds the copy of every chapter that has none and never writes over one; a
  copy whose reference has changed since it was made is left alone, and the terminal
  says so once, with the command that gets the new version.
- :func:`reset` puts a whole chapter (``"05"``) or one exercise's answer cells (``"5.2"``)
  back to blank; the notebook is first saved to ``.backup/``.
- :func:`reveal` inserts one exercise's reference solution as a marked markdown cell under
  the learner's answer, which stays what the feedback cell checks.

Course models load from any folder: ``labkit.models`` reads ``$LABKIT_MODELS`` or the
repository's ``models/``, never the notebook's folder (:func:`lab` sets ``LABKIT_MODELS``
for the kernels it starts).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import hashlib
import json
import os
import re
import symtable
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import student
from .notebooks import course_dir

__all__ = [
    "BACKUP",
    "LINKED_PAGES",
    "MANIFEST",
    "PRACTICE_ENV",
    "REFERENCE_LINK",
    "REVEALED_TAG",
    "InitReport",
    "PracticeError",
    "add_commands",
    "exercise_ids",
    "fingerprint",
    "init",
    "lab",
    "lab_command",
    "practice_dir",
    "practice_notebook",
    "reset",
    "reveal",
]

PRACTICE_ENV = "LABKIT_PRACTICE"
REFERENCE_LINK = "reference"
"""The practice folder's link to course/: the reference chapters, one click away."""
LINKED_PAGES = ("references.md", "drift.md")
"""course/ pages the chapters link to (``[…](references.md#…)``), linked into the folder."""
BACKUP = ".backup"
MANIFEST = ".practice.json"
REVEALED_TAG = "revealed-solution"
RUN_ON = student.FEEDBACK_TAG
"""The tag with which JupyterLab's Run All and nbclient go on past a cell that raises."""
_HOW = "run ./run.sh lab (it makes them) or `labkit practice init`"
_RELOAD = ("If it is open in JupyterLab, reload it there: File → Reload Notebook from Disk "
           "(or Revert when JupyterLab says the file changed on disk).")


class PracticeError(ValueError):
    """A practice command cannot do what was asked; the message says what to do instead."""


def practice_dir() -> Path:
    """The practice folder: ``$LABKIT_PRACTICE``, or ``practice/`` beside the course folder."""
    env = os.environ.get(PRACTICE_ENV)
    return Path(env) if env else course_dir().parent / "practice"


# -- the practice copy of one chapter ------------------------------------------------------
def _names(source: str) -> tuple[set[str], set[str]]:
    """(global names a cell reads without binding them, names it binds at top level)."""
    try:
        table = symtable.symtable(student._python(source), "<cell>", "exec")
    except (SyntaxError, ValueError):
        return set(), set()
    symbols = table.get_symbols()
    bound = {s.get_name() for s in symbols
             if s.is_assigned() or s.is_imported() or s.is_namespace()}
    free = {s.get_name() for s in symbols if s.is_referenced()}
    inner = list(table.get_children())
    while inner:                      # functions, lambdas and comprehensions of the cell
        scope = inner.pop()
        free |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
        inner += scope.get_children()
    return free - bound, bound


def _hidden(cell: Any) -> bool:
    return bool(set(cell.get("metadata", {}).get("tags", [])) & student.HIDDEN_TAGS)


def _uses_answers(reference: Any, blank: Any) -> list[int]:
    """Indices of the blank copy's lesson cells that read a variable only an answer defines
    (``report = run(answer)`` after exercise 9.4), or only such a cell: with a blank answer
    they raise too."""
    kept = [c for c in reference.cells if not _hidden(c)]
    if len(kept) != len(blank.cells):  # pragma: no cover - student copies drop only those
        return []
    defined: set[str] = set()         # names a cell that runs has bound so far
    missing: set[str] = set()         # names only a blank answer, or a cell using one, binds
    found = []
    for index, (source, cell) in enumerate(zip(kept, blank.cells, strict=True)):
        if cell.cell_type != "code":
            continue
        free, bound = _names(cell.source)
        if cell.metadata.get("nbgrader", {}).get("solution"):
            whole = bool(set(source.metadata.get("tags", [])) & student.SOLUTION_TAGS)
            region = student._split(source.source, index, True, whole)
            bound = set(student._assigned([line for kind, line in region.secrets
                                           if kind == student.BEGIN_SOLUTION]))
            missing |= bound - defined
        elif not cell.metadata.get("nbgrader", {}).get("grade") and free & missing:
            found.append(index)
            missing |= bound - defined
        else:
            defined |= bound
            missing -= bound
    return found


def practice_notebook(reference: Any) -> Any:
    """The practice copy of a reference chapter (an ``nbformat`` node; it is not modified):
    its student copy with answer cells, feedback cells and the lesson cells that use an
    answer tagged ``raises-exception``."""
    blank = student.student_notebook(reference).notebook
    follow = set(_uses_answers(reference, blank))
    for index, cell in enumerate(blank.cells):
        meta = cell.metadata.get("nbgrader", {})
        runs_on = meta.get("solution") or meta.get("grade") or index in follow
        if cell.cell_type == "code" and runs_on:
            tags = cell.metadata.setdefault("tags", [])
            if RUN_ON not in tags:
                tags.append(RUN_ON)
    return blank


def fingerprint(notebook: Any) -> str:
    """What a practice copy is made from: the cells' types and sources (not their outputs, nor
    tags and metadata that a maintainer adds for the site); ``notebook`` is an ``nbformat``
    node or the notebook's JSON."""
    cells = [[c.get("cell_type"), "".join(c.get("source", ""))]   # on disk, a list of lines
             for c in notebook.get("cells", [])]
    return hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()[:16]


# -- files ---------------------------------------------------------------------------------
def _write(notebook: Any, path: Path, *, replace: bool = True) -> bool:
    """Write atomically: a reader (JupyterLab) never sees half a notebook.  With ``replace``
    False nothing that exists is replaced, even if it appeared a moment ago: returns whether
    the notebook was written."""
    import nbformat

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".practice-", suffix=".ipynb")
    os.close(handle)
    mask = os.umask(0)
    os.umask(mask)
    try:
        os.chmod(temporary, 0o666 & ~mask)      # as an editor would create it, not mkstemp's 0600
        nbformat.write(notebook, temporary)
        if replace:
            os.replace(temporary, path)
            return True
        try:
            os.link(temporary, path)            # fails, atomically, where anything is there
        except FileExistsError:
            return False
        except OSError:                         # a file system without hard links
            if os.path.lexists(path):
                return False
            os.replace(temporary, path)
        return True
    finally:
        Path(temporary).unlink(missing_ok=True)


def _backup(path: Path, folder: Path) -> Path:
    """Copy ``path`` to ``.backup/<stem>-<UTC time>.ipynb``, a new name, never an old one."""
    store = folder / BACKUP
    store.mkdir(exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        target = store / f"{path.stem}-{stamp}{'' if n == 1 else f'-{n}'}{path.suffix}"
        try:
            with open(target, "xb") as out:  # "x": an earlier backup is never replaced
                out.write(path.read_bytes())
            return target
        except FileExistsError:
            continue
    raise PracticeError(f"no free backup name for {path} in {store}")  # pragma: no cover


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    chapters = data.get("chapters") if isinstance(data, dict) else None
    if not isinstance(chapters, dict):
        return {}
    return {name: entry for name, entry in chapters.items() if isinstance(entry, dict)}


def _save_manifest(folder: Path, chapters: dict[str, Any]) -> None:
    data = {"about": "labkit practice: the reference each practice copy was made from; labkit's "
                     "bookkeeping (deleting it loses only the 'reference changed' notes)",
            "chapters": dict(sorted(chapters.items()))}
    temporary = folder / f"{MANIFEST}.tmp"
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, folder / MANIFEST)


def _link(link: Path, target: Path) -> str | None:
    """Make ``link`` a relative symbolic link to ``target``; a note when it cannot."""
    relative = os.path.relpath(target, link.parent)
    if link.is_symlink():
        if os.readlink(link) == relative:
            return None
        link.unlink()        # a link of ours to an old place: nobody's work
    elif link.exists():
        return f"{link} is not a link to {target}; it is left as it is"
    try:
        link.symlink_to(relative, target_is_directory=target.is_dir())
    except OSError as exc:
        return f"could not link {link} to {target} ({exc}); the references are in {target}"
    return None


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it lies below it (shorter to read)."""
    with contextlib.suppress(ValueError):
        return str(path.absolute().relative_to(Path.cwd()))
    return str(path)


# -- init ----------------------------------------------------------------------------------
@dataclass
class InitReport:
    """What :func:`init` did: copies added and kept, notes (reference changed, links)."""

    folder: Path
    added: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        where = _shown(self.folder)
        lines = []
        if self.added:
            numbers = ", ".join(name[:2] for name in self.added)
            lines.append(f"practice copies: {len(self.added)} blank chapter(s) written to {where}/ "
                         f"({numbers}); they are yours, never overwritten")
        if self.kept:
            lines.append(f"practice copies: {len(self.kept)} chapter(s) in {where}/ kept as "
                         "you left them")
        lines.append(f"reference chapters, solutions shown: {where}/{REFERENCE_LINK}/")
        return "\n".join(lines + [f"note: {note}" for note in self.notes])


def init(folder: Path | str | None = None, course: Path | str | None = None) -> InitReport:
    """Make the practice copy of every chapter of ``course`` (default: course/) that has none
    in ``folder`` (default :func:`practice_dir`), link the references, and never write over
    an existing copy.  A copy whose reference changed since it was made gets one note, the
    first time this finds the change."""
    import nbformat

    folder = Path(folder) if folder is not None else practice_dir()
    course = Path(course) if course is not None else course_dir()
    chapters = sorted(course.glob("[0-9][0-9]_*.ipynb"))
    if not chapters:
        raise PracticeError(f"no chapters (NN_name.ipynb) in {course}: set LABKIT_COURSE to "
                            "the course folder")
    if folder.resolve().is_relative_to(course.resolve()):
        raise PracticeError(f"the practice folder {folder} cannot be (inside) the course folder "
                            f"{course}: set {PRACTICE_ENV} to another folder")
    if folder.exists() and not folder.is_dir():
        raise PracticeError(f"{folder} is a file, not a folder: move it away or set "
                            f"{PRACTICE_ENV} to another folder")
    folder.mkdir(parents=True, exist_ok=True)
    report = InitReport(folder)
    made = _manifest(folder)
    for source in chapters:
        text = source.read_text(encoding="utf-8")
        try:
            now = fingerprint(json.loads(text))   # cheap: no validation, no student copy
        except ValueError as exc:
            raise PracticeError(f"the reference chapter {source} is not a notebook ({exc}); "
                                "restore it with `git restore`") from None
        target = folder / source.name
        entry = made.setdefault(source.name, {"made_from": now})
        if not os.path.lexists(target):
            blank = practice_notebook(nbformat.reads(text, as_version=4))
            if _write(blank, target, replace=False):
                made[source.name] = {"made_from": now}
                report.added.append(source.name)
                continue
        report.kept.append(source.name)
        if entry.get("made_from") not in (now, None) and entry.get("told") != now:
            report.notes.append(
                f"{source.name}: the reference chapter has changed since your copy was made; "
                "your copy is left as it is. For the new version run `labkit practice reset "
                f"{source.name[:2]}` (it first saves your copy to {_shown(folder / BACKUP)}/)")
            entry["told"] = now
    for name, target in [(REFERENCE_LINK, course), *((p, course / p) for p in LINKED_PAGES)]:
        if target.exists():
            note = _link(folder / name, target)
            report.notes += [note] if note else []
    _save_manifest(folder, made)
    return report


# -- finding chapters and exercises ----------------------------------------------------------
_EXERCISE = re.compile(r"^0*(\d+)\.0*(\d+)$")
_CHAPTER = re.compile(r"^(\d+)(?:_[\w-]*)?(?:\.ipynb)?$")


def _target(text: str, course: Path) -> tuple[Path, str | None]:
    """(the reference chapter, the exercise id or None) named by ``05``, ``5``,
    ``05_solver_parameters``, a path to it, or ``5.2``."""
    chapters = {int(p.name[:2]): p for p in sorted(course.glob("[0-9][0-9]_*.ipynb"))}
    name = Path(str(text).strip()).name
    exercise, chapter = _EXERCISE.match(name), _CHAPTER.match(name)
    if not (exercise or chapter):
        raise PracticeError(f"{text!r} is neither a chapter (such as 05) nor an exercise "
                            "(such as 5.2)")
    number = int((exercise or chapter).group(1))
    if number not in chapters:
        listed = ", ".join(p.stem for p in chapters.values())
        raise PracticeError(f"there is no chapter {number:02d}; the chapters are {listed}")
    return chapters[number], f"{number}.{int(exercise.group(2))}" if exercise else None


def _role(cell: Any) -> tuple[str, str] | None:
    return student.parse_grade_id(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))


def exercise_ids(notebook: Any) -> list[tuple[str, str]]:
    """(id, title) of the exercises whose feedback cells a notebook holds, in order."""
    found: dict[str, str] = {}
    for cell in notebook.cells:
        role = _role(cell)
        if role and role[0] == "feedback":
            calls = student.exercise_calls(cell.source)
            found.setdefault(role[1], calls[0].title if calls else "")
    return list(found.items())


def _cells(notebook: Any, kind: str, number: str) -> list[int]:
    """Indices of a notebook's ``kind`` ("answer" / "feedback") cells of exercise ``number``."""
    return [i for i, cell in enumerate(notebook.cells) if _role(cell) == (kind, number)]


def _revealed(notebook: Any, number: str) -> list[int]:
    return [i for i, cell in enumerate(notebook.cells)
            if cell.get("metadata", {}).get("labkit", {}).get("revealed") == number]


def _no_folder(folder: Path) -> PracticeError:
    return PracticeError(f"there are no practice copies yet ({folder} does not exist): {_HOW}")


def _open(folder: Path, reference: Path) -> tuple[Path, Any]:
    """The learner's copy of a chapter, read; errors say what to do."""
    import nbformat

    if not folder.is_dir():
        raise _no_folder(folder)
    path = folder / reference.name
    chapter = reference.name[:2]
    if not path.exists():
        raise PracticeError(f"there is no practice copy of chapter {chapter} yet ({path}): {_HOW}")
    try:
        return path, nbformat.read(path, as_version=4)
    except Exception as exc:  # whatever makes it unreadable, the message says what
        why = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise PracticeError(
            f"{path} cannot be read as a notebook ({why}); it is left as it is. `labkit practice "
            f"reset {chapter}` saves it to {folder / BACKUP}/ and makes a blank copy") from None


def _unknown(number: str, reference: Path, blank: Any) -> PracticeError:
    listed = "; ".join(f"{i} · {t}" if t else i for i, t in exercise_ids(blank)) or "none"
    return PracticeError(f"chapter {reference.stem} has no exercise {number}; its exercises "
                         f"are: {listed}")


def _missing(path: Path, number: str, chapter: str) -> PracticeError:
    return PracticeError(f"{path} has neither an answer nor a feedback cell of exercise {number} "
                         f"(deleted?); `labkit practice reset {chapter}` restores the whole "
                         "chapter, after saving your notebook to .backup/")


# -- reset ---------------------------------------------------------------------------------
def _reset_chapter(folder: Path, source: Path, reference: Any, blank: Any) -> str:
    if not folder.is_dir():
        raise _no_folder(folder)
    path = folder / source.name
    saved = _backup(path, folder) if path.exists() else None
    _write(blank, path)
    made = _manifest(folder)
    made[source.name] = {"made_from": fingerprint(reference)}
    _save_manifest(folder, made)
    kept = f" Your previous notebook is saved as {_shown(saved)}." if saved else ""
    return f"✔ {_shown(path)} is a blank copy of the reference chapter again.{kept} {_RELOAD}"


def reset(target: str, folder: Path | str | None = None, course: Path | str | None = None) -> str:
    """Put a chapter (``"05"``) or one exercise's answer cells (``"5.2"``) of the practice copy
    back to blank, after saving the notebook to ``.backup/``; returns what was done.

    Resetting an exercise replaces only its answer cells (and removes its revealed
    solution); every other cell stays as the learner left it."""
    import nbformat

    folder = Path(folder) if folder is not None else practice_dir()
    course = Path(course) if course is not None else course_dir()
    source, number = _target(target, course)
    reference = nbformat.read(source, as_version=4)
    blank = practice_notebook(reference)
    if number is None:
        return _reset_chapter(folder, source, reference, blank)
    if not _cells(blank, "feedback", number):
        raise _unknown(number, source, blank)
    path, notebook = _open(folder, source)
    parts = [blank.cells[i] for i in _cells(blank, "answer", number)]
    mine = _cells(notebook, "answer", number)
    changed = False
    for part, cell in enumerate(parts):
        fresh = copy.deepcopy(cell)
        if part < len(mine):
            old = notebook.cells[mine[part]]
            if (old.cell_type, old.source, old.get("outputs")) == (fresh.cell_type, fresh.source,
                                                                  fresh.get("outputs")):
                continue
            fresh["id"] = old.get("id", fresh.get("id"))
            notebook.cells[mine[part]] = fresh
        else:  # the learner deleted this answer cell: it goes back above the feedback cell
            feedback = _cells(notebook, "feedback", number)
            anchor = mine[-1] + 1 if mine else feedback[0] if feedback else None
            if anchor is None:
                raise _missing(path, number, source.name[:2])
            if fresh.get("id") in {c.get("id") for c in notebook.cells}:
                from nbformat.corpus.words import generate_corpus_id

                fresh["id"] = generate_corpus_id()      # cell ids are unique in a notebook
            notebook.cells.insert(anchor, fresh)
            mine = _cells(notebook, "answer", number)
        changed = True
    shown = _revealed(notebook, number)
    for index in reversed(shown):
        del notebook.cells[index]
    if not (changed or shown):
        return f"✔ exercise {number} in {_shown(path)} is already blank: nothing was written."
    saved = _backup(path, folder)
    _write(notebook, path)
    also = " and its revealed solution removed" if shown else ""
    return (f"✔ exercise {number} in {_shown(path)}: its answer cell(s) are blank again{also}; "
            "every other cell is as you left it. Your previous notebook is saved as "
            f"{_shown(saved)}. {_RELOAD}")


# -- reveal --------------------------------------------------------------------------------
def _solution(reference: Any, number: str) -> list[str]:
    """The reference answer cells of exercise ``number``, without markers or hidden tests."""
    marked = copy.deepcopy(reference)
    student.nbgrader_metadata(marked)
    texts = []
    for index in _cells(marked, "answer", number):
        lines, hidden = [], False
        for line in marked.cells[index].source.splitlines():
            match = student._MARKER.match(line)
            if match:
                hidden = match.group(1) == student.BEGIN_HIDDEN
            elif not hidden:
                lines.append(line)
        texts.append("\n".join(lines).strip("\n"))
    return texts


def _fenced(code: str) -> str:
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
    return f"{fence}python\n{code}\n{fence}"


def reveal(number: str, folder: Path | str | None = None, course: Path | str | None = None) -> str:
    """Insert exercise ``number``'s reference solution into the practice copy, as a markdown
    cell marked *Revealed* right under the learner's answer (which is kept, and stays what
    the feedback cell checks); returns what was done.  Nothing else changes."""
    import nbformat

    folder = Path(folder) if folder is not None else practice_dir()
    course = Path(course) if course is not None else course_dir()
    source, exercise = _target(number, course)
    if exercise is None:
        first = f"{int(source.name[:2])}.1"
        raise PracticeError(f"reveal shows one exercise, such as {first}, not a whole chapter "
                            f"({number!r})")
    reference = nbformat.read(source, as_version=4)
    texts = _solution(reference, exercise)
    if not texts:
        raise _unknown(exercise, source, practice_notebook(reference))
    path, notebook = _open(folder, source)
    shown = _revealed(notebook, exercise)
    if shown:
        return (f"exercise {exercise} is already revealed in {_shown(path)}, cell "
                f"{shown[0] + 1}: nothing was written.")
    mine, feedback = _cells(notebook, "answer", exercise), _cells(notebook, "feedback", exercise)
    anchor = mine[-1] + 1 if mine else feedback[0] if feedback else None
    if anchor is None:
        raise _missing(path, exercise, source.name[:2])
    title = dict(exercise_ids(notebook)).get(exercise, "")
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"**Revealed: the reference solution of Exercise {exercise}"
            f"{f' · {title}' if title else ''}** (`labkit practice reveal {exercise}`, {when}).\n"
            "Your answer is kept in the cell above and is still what the feedback cell checks; "
            f"to try this solution, copy it there. `labkit practice reset {exercise}` removes "
            "this cell and blanks your answer."
            + "".join(f"\n\n{_fenced(code)}" for code in texts))
    notebook.cells.insert(anchor, nbformat.v4.new_markdown_cell(
        text, metadata={"tags": [REVEALED_TAG], "labkit": {"revealed": exercise}}))
    _write(notebook, path)
    return (f"✔ the reference solution of exercise {exercise} is in {_shown(path)}, cell "
            f"{anchor + 1}, under your answer, marked Revealed; nothing else changed. {_RELOAD}")


# -- JupyterLab ----------------------------------------------------------------------------
def lab_command(folder: Path, jupyter_args: list[str]) -> list[str]:
    """The JupyterLab command line that serves ``folder`` and opens its first chapter."""
    chapters = sorted(p.name for p in folder.glob("[0-9][0-9]_*.ipynb"))
    landing = [f"--LabApp.default_url=/lab/tree/{chapters[0]}"] if chapters else []
    return [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
            f"--ServerApp.root_dir={folder.resolve()}", *landing, *jupyter_args]


def lab(jupyter_args: list[str], folder: Path | str | None = None) -> None:
    """:func:`init`, print what it did, then replace this process by JupyterLab on the
    practice folder (``jupyter_args`` go to JupyterLab, e.g. ``["--port=9000"]``)."""
    from ..models import models_dir

    folder = Path(folder) if folder is not None else practice_dir()
    print(init(folder), flush=True)
    command = lab_command(folder, jupyter_args)
    # the kernels find the course models whatever the notebook's folder
    env = {**os.environ, "LABKIT_MODELS": str(models_dir())}
    os.execve(command[0], command, env)


# -- command line --------------------------------------------------------------------------
def _main(args: argparse.Namespace) -> int:
    try:
        if args.action == "lab":
            lab(args.jupyter_args)
        elif args.action == "init":
            print(init())
        elif args.action == "reset":
            for target in args.targets:
                print(reset(target))
        else:
            print(reveal(args.exercise))
    except PracticeError as exc:
        print(f"labkit practice: {exc}")
        return 2
    return 0


def add_commands(subparsers: Any) -> None:
    """Register ``labkit practice init | reset | reveal`` on labkit's argparse subparsers."""
    parser = subparsers.add_parser(
        "practice", help="your own blank copies of the chapters: make them, reset, reveal",
        description="Your practice copies of the chapters, in practice/ beside course/ "
        f"(${PRACTICE_ENV} moves them); ./run.sh lab makes them and opens JupyterLab there. "
        f"Nothing you wrote is lost: a reset first saves the notebook to {BACKUP}/.")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("init", help="make the blank copy of every chapter that has none "
                       "(never overwrites one)")
    lab_parser = actions.add_parser(
        "lab", help="init, then JupyterLab on the practice copies, opening chapter 00 "
        "(./run.sh lab runs this)")
    lab_parser.add_argument("jupyter_args", nargs="*", metavar="-- JUPYTER_ARGS",
                            help="arguments for JupyterLab after --, e.g. -- --port=9000")
    reset_parser = actions.add_parser(
        "reset", help="put a chapter (05) or one exercise (5.2) back to blank, after a backup")
    reset_parser.add_argument("targets", nargs="+", metavar="CHAPTER_OR_EXERCISE",
                              help="a chapter (05, 5, 05_solver_parameters) or an exercise (5.2)")
    reveal_parser = actions.add_parser(
        "reveal", help="one exercise's reference solution under your answer, marked Revealed")
    reveal_parser.add_argument("exercise", metavar="EXERCISE", help="an exercise id, e.g. 5.2")
    parser.set_defaults(run=_main)
