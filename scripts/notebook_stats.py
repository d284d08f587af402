"""How much of each chapter's code is lesson, and how much is claim bookkeeping.

    .venv/bin/python scripts/notebook_stats.py [course/NN_*.ipynb ...]

Per notebook: non-blank code lines, the share of the code inside ``labkit.check(...)`` calls,
the number of ``check`` calls, and helpers defined in the notebook that hold more than 10
statements.  The share is of the code's tokens (names, numbers, strings, operators; comments
and line breaks not counted), so that wrapping a long line does not change it.  Budgets
(``tests/test_course.py`` enforces both): at most 17 % of the course's code inside checks,
and no such helper.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

import nbformat

from labkit.classroom.notebooks import course_notebooks

MAX_CHECK_SHARE = 0.17     # of the code tokens inside check(...) calls (15.2 % when first counted)
MAX_HELPER_LINES = 10      # a notebook helper of more statements than this belongs in labkit


_LAYOUT = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT,
           tokenize.ENDMARKER}


def _tokens(source: str) -> list[int]:
    """The line number of each token of ``source`` that is code, not layout or a comment."""
    readline = io.StringIO(source).readline
    return [t.start[0] for t in tokenize.generate_tokens(readline) if t.type not in _LAYOUT]


def _statements(function: ast.FunctionDef) -> int:
    """How many statements ``function`` holds, its ``def`` and docstring included: its length
    in lines, however its long lines are wrapped."""
    return sum(isinstance(node, ast.stmt) for node in ast.walk(function))


def stats(path: Path) -> tuple[int, int, int, int, list[str]]:
    """(code lines, code tokens, tokens inside check calls, check calls, long helpers) of one
    notebook."""
    lines_total = code = inside = calls = 0
    long: list[str] = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        lines_total += sum(1 for line in lines if line.strip())
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        tokens = _tokens(cell.source)
        code += len(tokens)
        spans: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) == "check"
                                               or getattr(node.func, "id", None) == "check"):
                calls += 1
                spans.update(range(node.lineno, node.end_lineno + 1))
            if isinstance(node, ast.FunctionDef) and _statements(node) > MAX_HELPER_LINES:
                long.append(node.name)
        inside += sum(1 for line in tokens if line in spans)
    return lines_total, code, inside, calls, long


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or course_notebooks()
    total = [0, 0, 0, 0]
    for path in paths:
        lines, code, inside, calls, long = stats(path)
        total = [total[0] + lines, total[1] + code, total[2] + inside, total[3] + calls]
        extra = f"  long helpers: {', '.join(long)}" if long else ""
        share = 100 * inside / code
        print(f"{path.stem:<28} {lines:5d} code lines, {share:5.1f} % in {calls:3d} checks{extra}")
    share = 100 * total[2] / total[1]
    print(f"{'course':<28} {total[0]:5d} code lines, {share:5.1f} % in {total[3]:3d} checks")


if __name__ == "__main__":
    main()
