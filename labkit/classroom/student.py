"""Student copies of chapter notebooks: solutions removed, nothing leaked.

``labkit student SRC... OUT`` writes, for every notebook in SRC (files or folders), a
copy in OUT in which

- every ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region of a code cell is replaced by
  one line, ``raise labkit.exercises.NotAnswered("Exercise N.M · <title>: ...")``
  (:data:`STUB`; a ``NotImplementedError`` that IPython shows as that one line, with no
  traceback), at the marker's indentation; the lines before and after the region stay.
  ``N.M`` comes from the next ``labkit.exercise("N.M")`` call (in the same cell after the
  region, or in a following code cell) and the title from labkit's checker of that
  exercise.  In a markdown cell the region becomes ``YOUR ANSWER HERE`` (nbgrader's
  convention);
- every ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` region is removed, markers
  included, and cells tagged ``hidden-tests`` are dropped (nbconvert's
  ``TagRemovePreprocessor``); a cell tagged ``solution`` is treated as one solution region;
- outputs and execution counts (``ClearOutputPreprocessor``), metadata
  (``ClearMetadataPreprocessor``: cells keep ``tags``, ``editable``, ``deletable``,
  ``slideshow`` and ``nbgrader``, the notebook ``kernelspec`` and ``language_info``) and
  attachments are cleared;
- answer and feedback cells carry nbgrader's cell metadata (:func:`nbgrader_metadata`):
  ``grade_id`` ``answer-N_M`` (``solution``) and ``feedback-N_M`` (``grade``, ``locked``,
  ``points``), ids that nbgrader's schema accepts (:func:`grade_id`), so that nbgrader's
  ``generate_assignment``, ``validate`` and ``autograde`` take the notebooks as they are and
  ``labkit grade`` finds an answer cell whose feedback cell was deleted
  (:func:`parse_grade_id`, which also reads the older ``answer-N.M``);
- feedback cells are tagged ``raises-exception`` (:data:`FEEDBACK_TAG`), the tag with which
  JupyterLab's Run All and nbclient go on past a cell that fails: a wrong answer shows its
  feedback and the notebook runs on.  The reference chapters carry no such tag, so there a
  wrong answer still fails the run (nbval, CI).  The grader and nbgrader do not depend on it:
  both run every cell whatever it raises.

Then every solution and hidden-test line (whitespace removed, at least
:data:`MIN_SECRET` characters) is searched for in every string of the copy; if one is
found the copy is refused (:class:`SolutionLeak`) and nothing is written.  A solution line
that the notebook also shows outside every region (``<freejoint/>`` in a hint, say) is not
secret: it is listed in :attr:`StudentCopy.public_lines` instead.

With a roster and the instructor's secret (``labkit student SRC... OUT --roster roster.csv
--secret FILE``, :func:`write_handouts`) it writes one folder per student, ``OUT/<login>/``,
whose copies carry that student's own numbers (:mod:`labkit.exercises.variants`) in one
cell right after the cell that imports labkit: every ``labkit.given("N.M")`` box, every
number computed from it and every feedback cell then use them.

The copy runs in a fresh kernel up to its first exercise and stops there with the
exercise's ``NotAnswered`` (answer cells are not tagged: a blank answer stops Run All; the
self-learner's practice copies of :mod:`.practice` tag them too).  OUT may not be, or lie
inside, a source folder, and existing files are only replaced with ``force``.  Only
notebooks are written; course models are found as before (``LABKIT_MODELS`` or the
repository's ``models/``).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import hashlib
import json
import os
import re
import shlex
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FEEDBACK_TAG",
    "MIN_SECRET",
    "STUB",
    "ExerciseCall",
    "SolutionLeak",
    "StudentCopy",
    "StudentCopyError",
    "add_commands",
    "check_student_copy",
    "code_line_key",
    "exercise_calls",
    "grade_id",
    "kernel_problem",
    "nbgrader_metadata",
    "parse_grade_id",
    "solution_fingerprints",
    "student_notebook",
    "tag_feedback_cells",
    "with_variant",
    "write_handouts",
    "write_student_copies",
]

MIN_SECRET = 8
"""Solution lines shorter than this (whitespace removed) are not searched for: ``x = 1``
or ``)`` occur everywhere."""

BEGIN_SOLUTION, END_SOLUTION = "BEGIN SOLUTION", "END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
_MARKER = re.compile(r"^[ \t]*#+[ \t]*(BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|END HIDDEN TESTS)"
                     r"[ \t]*$")
_MENTION = re.compile(r"(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
SOLUTION_TAGS = frozenset({"solution"})
HIDDEN_TAGS = frozenset({"hidden-tests", "hidden_tests"})
CELL_METADATA = ("tags", "editable", "deletable", "slideshow", "nbgrader")
NOTEBOOK_METADATA = ("kernelspec", "language_info")
MARKDOWN_STUB = "YOUR ANSWER HERE"
STUB = "raise labkit.exercises.NotAnswered("
"""How every answer stub of a code cell begins (then the JSON string of its message and ``)``)."""
FEEDBACK_TAG = "raises-exception"
"""The cell tag with which JupyterLab's Run All and nbclient (``NotebookClient``) continue
past a cell that raises; nbval accepts an error in such a cell too, so only student copies
carry it, on their feedback cells."""


class StudentCopyError(ValueError):
    """A student copy cannot be made (bad markers, OUT inside SRC, files in the way)."""


class SolutionLeak(StudentCopyError):
    """Solution text survived in a student copy; nothing was written."""


# -- exercise calls ---------------------------------------------------------------------
@dataclass(frozen=True)
class ExerciseCall:
    """One ``labkit.exercise("N.M")`` call found in a cell, with the title and points of
    labkit's checker for it (``""`` and None when labkit has no such exercise)."""

    id: str
    title: str
    points: float | None  # None when points is not a literal number


_CALL = re.compile(r"""\bexercise\(\s*(['"])(?P<id>[^'"]+)\1""")


def _python(source: str) -> str:
    """Cell source as plain Python (IPython magics and shell escapes transformed)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # a cell IPython cannot read is read as is
        return source


def _literal(node: ast.expr | None) -> Any:
    return node.value if isinstance(node, ast.Constant) else None


def exercise_calls(source: str) -> list[ExerciseCall]:
    """The ``exercise(...)`` calls in a cell's source, in source order.

    Recognises ``labkit.exercise(...)``, ``exercise(...)`` and ``<anything>.exercise(...)``
    whose first argument is a literal id.
    """
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return [_registered(m["id"]) for m in _CALL.finditer(source)]
    calls = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        number = _literal(node.args[0])
        if name != "exercise" or not isinstance(number, str):
            continue
        calls.append((node.lineno, node.col_offset, _registered(number)))
    return [call for *_, call in sorted(calls, key=lambda c: (c[0], c[1]))]


def _registered(number: str) -> ExerciseCall:
    from ..exercises import spec

    try:
        found = spec(number)
    except KeyError:
        return ExerciseCall(number, "", None)
    return ExerciseCall(number, found.title, found.points)


# -- regions ------------------------------------------------------------------------------
@dataclass
class _Stub:
    indent: str
    cell: int


@dataclass
class _Cell:
    """A cell's source split into kept lines and stub placeholders, and its secret lines."""

    parts: list[str | _Stub] = field(default_factory=list)
    secrets: list[tuple[str, str]] = field(default_factory=list)  # (kind, line)
    stubs: int = 0
    hidden: int = 0


def _marker(line: str, cell: int, number: int, code: bool) -> str | None:
    match = _MARKER.match(line.rstrip("\r\n"))
    if match:
        return match.group(1)
    if code and _MENTION.search(line):
        raise StudentCopyError(
            f"cell {cell + 1}, line {number}: {line.strip()!r} mentions a marker but is not a marker "
            "line; markers are whole comment lines such as '### BEGIN SOLUTION'")
    return None


def has_solution(source: str) -> bool:
    """Whether a cell's source contains a solution region."""
    return any((m := _MARKER.match(line)) and m.group(1) == BEGIN_SOLUTION for line in source.splitlines())


def _split(source: str, index: int, code: bool, whole_solution: bool) -> _Cell:
    result = _Cell()
    if whole_solution:
        lines = source.splitlines(keepends=True)
        if any(_marker(line, index, n, code) for n, line in enumerate(lines, 1)):
            raise StudentCopyError(f"cell {index + 1} is tagged 'solution' and also has markers: "
                                   "use one or the other")
        indent = re.match(r"[ \t]*", source.lstrip("\n")).group(0)
        result.parts.append(_Stub(indent, index))
        result.secrets += [(BEGIN_SOLUTION, line) for line in lines]
        result.stubs = 1
        return result
    state: str | None = None
    opened = 0
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        marker = _marker(line, index, number, code)
        where = f"cell {index + 1}, line {number}"
        if state is None:
            if marker == BEGIN_SOLUTION:
                state, opened = BEGIN_SOLUTION, number
                result.parts.append(_Stub(re.match(r"[ \t]*", line).group(0), index))
                result.stubs += 1
            elif marker == BEGIN_HIDDEN:
                state, opened = BEGIN_HIDDEN, number
                result.hidden += 1
            elif marker is not None:
                raise StudentCopyError(f"{where}: '{marker}' without a matching BEGIN line")
            else:
                result.parts.append(line)
        elif marker is None:
            result.secrets.append((state, line))
        elif marker == ("END " + state.removeprefix("BEGIN ")):
            state = None
        else:
            raise StudentCopyError(f"{where}: '{marker}' inside the region opened at line {opened} "
                                   f"('{state}'); regions cannot nest")
    if state is not None:
        raise StudentCopyError(f"cell {index + 1}, line {opened}: '{state}' is never closed")
    return result


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _strings(node: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield f"{where}.{key}", str(key)
            yield from _strings(value, f"{where}.{key}")
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _strings(value, f"{where}[{i}]")


def find_leaks(notebook: Any, secrets: Iterable[str]) -> list[tuple[str, str]]:
    """(where, secret) for every secret (whitespace-free text) found in any string of
    ``notebook`` (sources, metadata, outputs, attachments, keys included)."""
    haystack = [(where, _norm(text)) for where, text in _strings(notebook, "notebook")]
    found = []
    for secret in dict.fromkeys(secrets):
        where = next((w for w, text in haystack if secret in text), None)
        if where is not None:
            found.append((where, secret))
    return found


# -- the student copy ------------------------------------------------------------------------
@dataclass
class StudentCopy:
    """A student copy and what was done to make it."""

    notebook: Any
    exercises: list[str]          # exercise ids of the stubs, in order (repeats when split)
    stubs: int                    # solution regions replaced
    hidden: int                   # hidden-test regions and cells removed
    outputs_cleared: int          # code cells that had outputs
    attachments_removed: int      # cells that had attachments
    public_lines: list[str]       # solution lines the notebook shows outside every region anyway
    source: Path | None = None


def _prompt(call: ExerciseCall | None, names: list[str]) -> str:
    """The stub's message: ``Exercise N.M · title: replace this line with your answer (set x)``."""
    head = "Exercise" if call is None else f"Exercise {call.id}" + (f" · {call.title}" if call.title else "")
    want = f" (set {', '.join(names)})" if names else ""
    return f"{head}: replace this line with your answer{want}"


def _assigned(lines: list[str]) -> list[str]:
    """Top-level names a solution region assigns or defines (in order)."""
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(_python("".join(lines))))
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name):
                    names.append(sub.id)
    return list(dict.fromkeys(names))


def student_notebook(notebook: Any) -> StudentCopy:
    """Make the student copy of a notebook (an ``nbformat`` node; it is not modified).

    Raises :class:`StudentCopyError` for malformed markers and :class:`SolutionLeak` if
    solution text would survive.
    """
    import nbformat

    nb = copy.deepcopy(notebook)
    nbgrader_metadata(nb)
    split: list[_Cell | None] = []          # None: cell dropped (hidden tests)
    for index, cell in enumerate(nb.cells):
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & HIDDEN_TAGS:
            split.append(None)
            continue
        code = cell.cell_type == "code"
        split.append(_split(cell.source, index, code, bool(tags & SOLUTION_TAGS)))

    # exercise calls after each cell's regions: same cell first, then the following code cells
    kept = ["".join(p for p in parts.parts if isinstance(p, str)) if parts else "" for parts in split]
    calls = [exercise_calls(text) if cell.cell_type == "code" else []
             for cell, text in zip(nb.cells, kept, strict=True)]
    secrets: list[str] = []
    public: list[str] = []
    exercises: list[str] = []
    hidden = outputs = attachments = stubs = 0
    cells = []
    for index, (cell, parts) in enumerate(zip(nb.cells, split, strict=True)):
        if parts is None:
            hidden += 1
            secrets += [_norm(line) for line in cell.source.splitlines()]
            cells.append(cell)          # TagRemovePreprocessor drops it below
            continue
        hidden += parts.hidden
        stubs += parts.stubs
        secrets += [_norm(line) for _, line in parts.secrets]
        if parts.stubs:
            after = next((i for i in range(index, len(calls)) if calls[i]), None)
            call = calls[after][0] if after is not None else _exercise_in_markdown(nb.cells, index)
            feedback = kept[after] if after is not None else ""
            regions = [line for kind, line in parts.secrets if kind == BEGIN_SOLUTION]
            from ..exercises import spec

            try:
                declared = list(spec(call.id).answers) if call else []
            except KeyError:
                declared = []
            names = [n for n in _assigned(regions)
                     if n in declared or re.search(rf"\b{re.escape(n)}\b", feedback)]
            exercises += [call.id if call else "?"] * parts.stubs
            if cell.cell_type == "code":
                # a JSON string is a valid Python literal, in the course's double quotes
                stub = f"{STUB}{json.dumps(_prompt(call, names), ensure_ascii=False)})\n"
            else:
                stub = MARKDOWN_STUB + "\n"
        if parts.stubs or parts.hidden:
            text, stub_lines = "", []
            for part in parts.parts:
                if isinstance(part, _Stub):
                    stub_lines.append(text.count("\n") + 1)
                    part = part.indent + stub
                text += part
            cell.source = text.rstrip("\n") if not cell.source.endswith("\n") else text
            if cell.cell_type == "code" and stub_lines:
                _check_stubs(cell.source, stub_lines, index)
        outputs += bool(cell.get("outputs"))
        if "attachments" in cell:
            attachments += 1
            del cell["attachments"]
        cells.append(cell)
    nb.cells = cells
    _clean(nb)
    tag_feedback_cells(nb)

    # what the source shows outside every region is public; everything else must be gone
    visible = [_norm(text) for text, parts in zip(kept, split, strict=True) if parts]
    secret = []
    for line in dict.fromkeys(s for s in secrets if len(s) >= MIN_SECRET):
        (public if any(line in text for text in visible) else secret).append(line)
    leaks = find_leaks(nb, secret)
    if leaks:
        shown = "; ".join(f"{s!r} in {w}" for w, s in leaks[:5])
        raise SolutionLeak(f"solution text would survive in the student copy: {shown}")
    nbformat.validate(nb)
    return StudentCopy(nb, exercises, stubs, hidden, outputs, attachments, public)


def _clean(nb: Any) -> None:
    """Outputs, execution counts, metadata and hidden-test cells removed, with nbconvert's
    preprocessors (in place)."""
    from nbconvert.preprocessors import (
        ClearMetadataPreprocessor,
        ClearOutputPreprocessor,
        TagRemovePreprocessor,
    )

    resources: dict[str, Any] = {}
    TagRemovePreprocessor(remove_cell_tags=set(HIDDEN_TAGS), enabled=True).preprocess(nb, resources)
    ClearOutputPreprocessor().preprocess(nb, resources)
    ClearMetadataPreprocessor(preserve_cell_metadata_mask=set(CELL_METADATA),
                              preserve_nb_metadata_mask=set(NOTEBOOK_METADATA)).preprocess(nb, resources)
    for cell in nb.cells:
        tags = [t for t in cell.get("metadata", {}).get("tags", []) if t not in SOLUTION_TAGS | HIDDEN_TAGS]
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.get("metadata", {}).pop("tags", None)


def tag_feedback_cells(nb: Any) -> int:
    """Tag every feedback cell of a student copy :data:`FEEDBACK_TAG` (in place) and return
    how many there are.

    A feedback cell is one that :func:`nbgrader_metadata` made a grade cell without a
    solution: it calls ``labkit.exercise("N.M")`` and holds no answer, so the tag lets Run
    All go past a wrong answer's feedback and never past an answer stub.
    """
    tagged = 0
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            tags = cell.metadata.setdefault("tags", [])
            if FEEDBACK_TAG not in tags:
                tags.append(FEEDBACK_TAG)
            tagged += 1
    return tagged


# -- the published solutions, as fingerprints ---------------------------------------------------
def code_line_key(line: str) -> str | None:
    """A code line as the published-solution check compares it: its comment and all
    whitespace dropped, then SHA-256 (hex); None for a line too short to tell anything
    (under :data:`MIN_SECRET` characters: ``x = 1`` is everyone's)."""
    text = _norm(re.sub(r"(^|\s)#.*$", "", line))
    if len(text) < MIN_SECRET:
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def solution_fingerprints(notebook: Any) -> dict[str, list[str]]:
    """Each exercise's reference-solution lines in a chapter notebook (an ``nbformat`` node),
    as :func:`code_line_key` keys: the lines of its ``BEGIN/END SOLUTION`` regions that the
    student copy does not show elsewhere.  A grader compares a submission's lines with them
    without holding the solutions themselves."""
    public = {_norm(line) for line in student_notebook(notebook).public_lines}
    cells = notebook.cells
    found: dict[str, list[str]] = {}
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or BEGIN_SOLUTION not in cell.source:
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        region = _split(cell.source, index, True, bool(tags & SOLUTION_TAGS))
        calls = next((exercise_calls(c.source) for c in cells[index:]
                      if c.cell_type == "code" and exercise_calls(c.source)), [])
        if not calls:
            continue
        keys = found.setdefault(calls[0].id, [])
        for kind, line in region.secrets:
            key = code_line_key(line) if kind == BEGIN_SOLUTION and _norm(line) not in public else None
            if key and key not in keys:
                keys.append(key)
    return found


# -- nbgrader ---------------------------------------------------------------------------------
GRADE_ID_KINDS = ("answer", "feedback")
_GRADE_ID = re.compile(r"^(?P<kind>answer|feedback)-(?P<chapter>\d+)[._](?P<number>\d+)(?:-(?P<part>\d+))?$")


def grade_id(kind: str, number: str, part: int = 1) -> str:
    """The nbgrader ``grade_id`` of exercise ``number``'s answer or feedback cell.

    ``grade_id("answer", "3.2")`` is ``"answer-3_2"``; the ``part``-th answer cell of one
    exercise (``part`` > 1) is ``"answer-3_2-2"`` and so on, because nbgrader refuses a
    notebook in which two cells share a grade id.  The dot of ``3.2`` becomes ``_``: nbgrader's
    schema allows only ``^[a-zA-Z0-9_\\-]*$`` (``nbgrader/nbgraderformat/v3.json``).
    :func:`parse_grade_id` reads it back.
    """
    if kind not in GRADE_ID_KINDS:
        raise ValueError(f"a grade id is for an answer or a feedback cell, not {kind!r}")
    chapter, sep, index = str(number).partition(".")
    if not (sep and chapter.isdigit() and index.isdigit()) or part < 1:
        raise ValueError(f"an exercise id looks like '3.2' and a part is 1 or more, not {number!r}, {part!r}")
    return f"{kind}-{chapter}_{index}" + (f"-{part}" if part > 1 else "")


def parse_grade_id(value: str) -> tuple[str, str] | None:
    """``(kind, exercise id)`` of a grade id made by :func:`grade_id` (``"answer-3_2-2"`` →
    ``("answer", "3.2")``), or of the dotted ids of earlier labkit versions (``"answer-3.2"``,
    still in notebooks handed out before); None for any other grade id."""
    match = _GRADE_ID.match(str(value))
    return (match["kind"], f"{match['chapter']}.{match['number']}") if match else None


def nbgrader_metadata(nb: Any) -> list[str]:
    """Give answer and feedback cells nbgrader's cell metadata (in place) and return the
    exercise ids found.

    An answer cell (one with a solution region) gets ``grade_id`` ``answer-N_M`` (a second
    answer cell of the same exercise ``answer-N_M-2``, see :func:`grade_id`) and
    ``solution: true``; a feedback cell (one calling ``labkit.exercise("N.M")``) gets
    ``feedback-N_M``, ``grade: true``, ``locked: true`` and the exercise's ``points``.
    Other cells' nbgrader metadata is removed.
    """
    ids = []
    pending: list[Any] = []
    parts: dict[tuple[str, str], int] = {}

    def unique(kind: str, number: str) -> str:
        parts[kind, number] = parts.get((kind, number), 0) + 1
        return grade_id(kind, number, parts[kind, number])

    for cell in nb.cells:
        meta = cell.setdefault("metadata", {})
        meta.pop("nbgrader", None)
        if cell.get("cell_type") != "code":
            continue
        calls = exercise_calls(cell.source)
        if has_solution(cell.source) or (SOLUTION_TAGS & set(meta.get("tags", []))):
            pending.append(cell)
        if calls:
            call = calls[0]
            for answer in pending:
                answer.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                               "grade_id": unique("answer", call.id), "schema_version": 3}
            pending = []
            if not has_solution(cell.source):
                meta["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                    "grade_id": unique("feedback", call.id), "points": call.points or 0,
                                    "schema_version": 3}
            ids.append(call.id)
    return ids


def kernel_problem(notebooks: Iterable[Any]) -> str | None:
    """Why nbgrader, run from this environment, could not start the notebooks' kernel (None
    when it can).

    ``nbgrader validate`` and ``autograde`` run a notebook in the kernel its ``kernelspec``
    names (autograde: the source notebook's), found the way every Jupyter tool finds one
    (``jupyter kernelspec list``).  The course's, ``mujoco-by-experiment``, is registered in
    the course environment by ``./run.sh``; an nbgrader installed elsewhere does not see it.
    """
    import sys

    named: dict[str, str] = {}
    for nb in notebooks:
        spec = nb.get("metadata", {}).get("kernelspec", {})
        if spec.get("name"):
            named[str(spec["name"])] = str(spec.get("display_name") or spec["name"])
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:  # pragma: no cover - jupyter_client comes with ipykernel
        return None
    missing = sorted(set(named) - set(KernelSpecManager().find_kernel_specs())) if named else []
    if not missing:
        return None
    return (f"the kernel {', '.join(missing)} that the copies name is not registered in this environment, "
            "so nbgrader validate/autograde run from it would stop with 'No such kernel'; register it "
            f"with: {sys.executable} -m ipykernel install --sys-prefix --name {missing[0]} "
            f"--display-name {shlex.quote(named[missing[0]])}")


def _exercise_in_markdown(cells: Sequence[Any], index: int) -> ExerciseCall | None:
    """Fallback id: 'Exercise N.M' in this cell or the nearest markdown cell above it."""
    for cell in [cells[index], *reversed(cells[:index])]:
        match = re.search(r"Exercise\s+(\d+(?:\.\d+)+)", cell.source)
        if match:
            return ExerciseCall(match.group(1), "", None)
        if cell.cell_type == "markdown" and cell is not cells[index]:
            break
    return None


def _check_stubs(source: str, lines: list[int], index: int) -> None:
    """Each stub must be a statement of valid Python, not text inside a string literal."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError as exc:
        raise StudentCopyError(
            f"cell {index + 1}: with its stub the cell is not valid Python ({exc.msg}, line {exc.lineno}); "
            "check the indentation of its BEGIN SOLUTION line") from None
    raises = {node.lineno for node in ast.walk(tree) if isinstance(node, ast.Raise)}
    for line in lines:
        if line not in raises:
            raise StudentCopyError(
                f"cell {index + 1}, line {line}: the solution region sits inside a string or an "
                "expression, so its stub would not run; put the markers around whole statements "
                "(e.g. around the entire `xml = \"\"\"...\"\"\"` assignment)")


# -- files ------------------------------------------------------------------------------------
def _sources(paths: Iterable[Path]) -> list[Path]:
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.glob("*.ipynb") if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise StudentCopyError(f"no such notebook or folder: {path}")
    if not found:
        raise StudentCopyError("no notebooks found in " + ", ".join(map(str, paths)))
    return found


def _write(notebook: Any, destination: Path) -> Path:
    """Write ``notebook`` to ``destination`` whole or not at all (a temporary file beside it,
    then renamed over it)."""
    import nbformat

    handle, temporary = tempfile.mkstemp(dir=destination.parent, prefix=".student-", suffix=".ipynb")
    os.close(handle)
    try:
        nbformat.write(notebook, temporary)
        os.replace(temporary, destination)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return destination


def write_student_copies(sources: Iterable[Path | str], out: Path | str, *, force: bool = False
                         ) -> list[tuple[Path, StudentCopy]]:
    """Write the student copy of every notebook in ``sources`` (files or folders) to ``out``.

    Returns ``(written path, copy)`` pairs.  Everything is checked before anything is
    written: OUT may not be or lie inside a source notebook's folder, two sources may not
    share a name, and existing files are replaced only with ``force``.  The sources are
    read, never written.
    """
    import nbformat

    out = Path(out)
    paths = _sources(Path(s) for s in sources)
    _refuse_inside(out, paths, "student copies")
    names = [p.name for p in paths]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise StudentCopyError(f"two sources share the name {', '.join(twice)}")
    existing = [out / n for n in names if (out / n).exists()]
    if existing and not force:
        raise StudentCopyError(f"refusing to overwrite {', '.join(map(str, existing))} (use --force)")
    made = []
    for path in paths:
        try:
            notebook = nbformat.read(path, as_version=4)
        except Exception as exc:  # whatever makes it unreadable, the refusal says what
            raise StudentCopyError(f"{path} is not a readable notebook: {exc}") from None
        try:
            made.append(student_notebook(notebook))
        except StudentCopyError as exc:
            raise type(exc)(f"{path}: {exc}") from None
        made[-1].source = path
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path, made_copy in zip(paths, made, strict=True):
        written.append((_write(made_copy.notebook, out / path.name), made_copy))
    return written


VARIANT_TAG = "labkit-variant"
"""The tag of a handout's cell that gives the notebook its student's numbers."""


def with_variant(notebook: Any, login: str, secret: bytes) -> Any:
    """A copy of a student copy (``notebook``, an nbformat node, not modified) that carries
    ``login``'s numbers for the exercises it poses, in a locked code cell right after the
    first cell that imports labkit (or first, when none does)."""
    import nbformat

    from ..exercises import spec
    from ..exercises.variants import derive, variant_cell

    nb = copy.deepcopy(notebook)
    numbers = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for call in exercise_calls(cell.source):
            with contextlib.suppress(KeyError):
                found = spec(call.id)
                if found.params:
                    numbers[found.id] = derive(secret, login, found.id, found.params, found.valid)
    if not numbers:
        return nb
    imports = next((i for i, c in enumerate(nb.cells)
                    if c.cell_type == "code" and re.search(r"^\s*import labkit\b", c.source, re.M)), -1)
    cell = nbformat.v4.new_code_cell(variant_cell(login, numbers, secret))
    cell.metadata.update(tags=[VARIANT_TAG], editable=False, deletable=False)
    nb.cells.insert(imports + 1, cell)
    return nb


def _refuse_inside(target: Path, paths: Iterable[Path], what: str) -> None:
    """Refuse to write into ``target`` when it is, or lies inside, a source notebook's folder."""
    target = target.resolve()
    for path in paths:
        folder = path.resolve().parent
        if target == folder or target.is_relative_to(folder):
            raise StudentCopyError(
                f"refusing to write {what} into {target}: it is (inside) the folder of the source "
                f"{path}; choose a folder outside it, e.g. {folder.parent / (folder.name + '-student')}")


def write_handouts(sources: Iterable[Path | str], out: Path | str, *, roster: Sequence[str], secret: bytes,
                   force: bool = False) -> list[tuple[Path, StudentCopy]]:
    """Write every student of ``roster`` their own copy of every notebook in ``sources``:
    ``out/<login>/<notebook>``, the student copy with the student's numbers
    (:func:`with_variant`).  Everything is checked before anything is written, as by
    :func:`write_student_copies`, for ``out`` and for every student's folder in it (a login
    may not name a source's folder); returns ``(written path, copy)`` pairs."""
    import nbformat

    out = Path(out)
    paths = _sources(Path(s) for s in sources)
    names = [p.name for p in paths]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise StudentCopyError(f"two sources share the name {', '.join(twice)}")
    for folder in [out, *(out / login for login in roster)]:
        _refuse_inside(folder, paths, "handouts")
    existing = [out / login / n for login in roster for n in names if (out / login / n).exists()]
    if existing and not force:
        raise StudentCopyError(f"refusing to overwrite {', '.join(map(str, existing[:5]))}"
                               f"{' …' if len(existing) > 5 else ''} (use --force)")
    made = []
    for path in paths:
        try:
            made.append(student_notebook(nbformat.read(path, as_version=4)))
        except StudentCopyError as exc:
            raise type(exc)(f"{path}: {exc}") from None
        except Exception as exc:  # whatever makes it unreadable, the refusal says what
            raise StudentCopyError(f"{path} is not a readable notebook: {exc}") from None
        made[-1].source = path
    written = []
    for login in roster:
        folder = out / login
        folder.mkdir(parents=True, exist_ok=True)
        for path, made_copy in zip(paths, made, strict=True):
            mine = copy.copy(made_copy)
            mine.notebook = with_variant(made_copy.notebook, login, secret)
            written.append((_write(mine.notebook, folder / path.name), mine))
    return written


def check_student_copy(path: Path | str, *, timeout: int = 300) -> tuple[bool, str]:
    """Run a student copy in a fresh kernel (cwd: its folder) and confirm that it stops at
    its first exercise with that exercise's ``NotAnswered``; or, when that answer cell is
    tagged :data:`FEEDBACK_TAG` (a practice copy), that the run goes on to the end and the
    cell shows that ``NotAnswered``.  Nothing the run shows is kept, so it draws no pictures
    (``LABKIT_PICTURES=off``).  Returns (ok, what)."""
    import nbformat

    from .notebooks import execute

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and STUB in c.source),
                 None)
    run = execute(path, timeout=timeout, env={"LABKIT_PICTURES": "off"})
    if first is None:
        return run.error is None, run.error or "runs to the end (it has no exercise stub)"
    match = re.search(re.escape(STUB) + r"\"(Exercise [^ :\"]*)", nb.cells[first].source)
    want = f"NotAnswered: {match.group(1) if match else 'Exercise'}"
    if FEEDBACK_TAG in nb.cells[first].get("metadata", {}).get("tags", []):
        shown = [f"{o.ename}: {o.evalue}" for o in run.notebook.cells[first].outputs
                 if o.output_type == "error"]
        if run.error is None and shown and shown[0].startswith(want):
            return True, f"runs to the end; its first exercise shows {shown[0].split(' · ')[0]}"
        return False, (f"expected it to run to the end with {want}… in cell {first + 1}, but got "
                       f"{run.error or (shown[0] if shown else 'no error there')}")
    if run.error and run.error.startswith(want):
        return True, f"runs up to its first exercise and stops there with {run.error.split(' · ')[0]}"
    return False, f"expected it to stop with {want}…, but got {run.error or 'no error'}"


# -- command line ---------------------------------------------------------------------------
def _main(args: argparse.Namespace) -> int:
    from ..exercises.variants import RosterError, SecretError, instructor_files

    try:
        secret, roster = instructor_files(args.secret, args.roster, together=True)
        if secret is not None and roster is not None:
            written = write_handouts(args.sources, args.out, roster=roster, secret=secret, force=args.force)
        else:
            written = write_student_copies(args.sources, args.out, force=args.force)
    except (StudentCopyError, RosterError, SecretError) as exc:
        print(f"labkit student: {exc}")
        return 2
    status = 0
    for path, made in written:
        ids = ", ".join(dict.fromkeys(made.exercises)) or "none"
        print(f"✔ {path} ← {made.source}: {made.stubs} solution regions replaced by stubs "
              f"(exercises {ids}), {made.hidden} hidden-test parts removed, outputs of "
              f"{made.outputs_cleared} cells and {made.attachments_removed} attachments cleared; "
              "no solution text left")
        if made.public_lines:
            sample = ", ".join(f"`{line}`" for line in made.public_lines[:3])
            print(f"  note: {len(made.public_lines)} solution lines also appear outside the solution "
                  f"regions and stay visible (e.g. {sample})")
        if args.check:
            ok, what = check_student_copy(path)
            print(f"  {'✔' if ok else '✘'} {what}")
            status |= not ok
    problem = kernel_problem(made.notebook for _, made in written)
    if problem:
        print(f"  note: {problem}")
    if roster is not None:
        print(f"{len(written)} handout notebooks written to {args.out}, one folder per student of the "
              f"roster ({len(roster)}), each with that student's own numbers")
    else:
        print(f"{len(written)} student notebooks written to {args.out}")
    return status


def add_commands(subparsers: Any) -> None:
    """Register ``labkit student`` on labkit's argparse subparsers."""
    parser = subparsers.add_parser(
        "student", help="write student copies of notebooks: solutions replaced by stubs, "
        "outputs cleared, nothing leaked",
        description="Write student copies of notebooks to OUT: every BEGIN/END SOLUTION region "
        "becomes a stub that raises NotAnswered (a NotImplementedError) naming the exercise, hidden "
        "tests are removed, outputs/execution counts/attachments/metadata are cleared, and the copy is "
        "refused if any solution text survives.")
    parser.add_argument("sources", nargs="+", metavar="SRC", help="notebooks or folders of notebooks")
    parser.add_argument("out", metavar="OUT", help="folder for the copies (not inside a source's folder)")
    parser.add_argument("--force", action="store_true", help="replace existing files in OUT")
    parser.add_argument("--check", action="store_true",
                        help="run each copy and confirm it stops at its first exercise")
    parser.add_argument("--roster", metavar="CSV",
                        help="a roster with a `login` column: write OUT/<login>/ for each student, with "
                        "their own numbers (needs --secret)")
    parser.add_argument("--secret", metavar="FILE",
                        help="the instructor's secret (labkit variants secret FILE makes one; keep it out "
                        "of the course): the students' numbers are derived from it")
    parser.set_defaults(run=_main)
