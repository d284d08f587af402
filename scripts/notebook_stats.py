"""How much of each chapter's code is lesson, and how much is claim bookkeeping.

    .venv/bin/python scripts/notebook_stats.py [course/NN_*.ipynb ...]

Per notebook: non-blank code lines, the share of them inside ``labkit.check(...)`` calls,
the number of ``check`` calls, and helpers defined in the notebook that are longer than
10 lines.  Budgets (``tests/test_course.py`` enforces both): at most 20 % of the course's
code lines inside checks, and no such helper.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import nbformat

from labkit.classroom.notebooks import course_notebooks

MAX_CHECK_SHARE = 0.20     # of a course's non-blank code lines, inside check(...) calls
MAX_HELPER_LINES = 10      # a notebook helper longer than this belongs in labkit


def stats(path: Path) -> tuple[int, int, int, list[str]]:
    """(code lines, lines inside check calls, check calls, long helpers) of one notebook."""
    code = inside = calls = 0
    long: list[str] = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        code += sum(1 for line in lines if line.strip())
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        spans: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) == "check"
                                               or getattr(node.func, "id", None) == "check"):
                calls += 1
                spans.update(range(node.lineno, node.end_lineno + 1))
            if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 > MAX_HELPER_LINES:
                long.append(node.name)
        inside += sum(1 for i in spans if lines[i - 1].strip())
    return code, inside, calls, long


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or course_notebooks()
    total = [0, 0, 0]
    for path in paths:
        code, inside, calls, long = stats(path)
        total = [total[0] + code, total[1] + inside, total[2] + calls]
        extra = f"  long helpers: {', '.join(long)}" if long else ""
        share = 100 * inside / code
        print(f"{path.stem:<28} {code:5d} code lines, {share:5.1f} % in {calls:3d} checks{extra}")
    share = 100 * total[1] / total[0]
    print(f"{'course':<28} {total[0]:5d} code lines, {share:5.1f} % in {total[2]:3d} checks")


if __name__ == "__main__":
    main()
