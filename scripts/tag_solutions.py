"""Collapse each exercise's reference solution behind a "Show solution" toggle on the site.

    .venv/bin/python scripts/tag_solutions.py [--check] [NOTEBOOK...]   (default: course/)

Tags every solution cell (a ``### BEGIN SOLUTION`` region, or tagged ``solution``) of the
chapter notebooks ``hide-cell`` and removes that tag from every other cell
(labkit.classroom.notebooks.tag_solutions); only the tags change, so the notebooks need no
re-execution.  With ``--check`` nothing is written: it lists the cells whose tag is missing
or wrong and exits 1 if there are any.  $LABKIT_COURSE names another course folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labkit.classroom.notebooks import SOLUTION_TOGGLE, course_notebooks, tag_solutions


def main(argv: list[str]) -> int:
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report, write nothing")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: the chapters")
    args = parser.parse_args(argv)
    wrong = 0
    for path in args.notebooks or course_notebooks():
        notebook = nbformat.read(path, as_version=4)
        changed = tag_solutions(notebook)
        count = len(changed["tagged"]) + len(changed["untagged"])
        if not count:
            continue
        wrong += count
        if args.check:
            print(f"✘ {path}: cells {changed['tagged']} (counted from 0) are solutions without "
                  f"the {SOLUTION_TOGGLE!r} tag; cells {changed['untagged']} carry it but are "
                  "not solutions")
        else:
            nbformat.write(notebook, path)
            print(f"✔ {path}: tagged cells {changed['tagged']}, untagged {changed['untagged']}")
    if args.check and wrong:
        print("run: .venv/bin/python scripts/tag_solutions.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
