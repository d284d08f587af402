"""Build the course's static site from the committed, executed notebooks (no kernel runs).

    .venv/bin/python scripts/build_site.py [OUT]      (./run.sh site calls it with build/site)

Sphinx (configuration in site/conf.py) reads course/ as its source folder and writes the pages
to OUT/html; OUT/.doctrees keeps what a later build can reuse.  The build is strict (a warning,
e.g. a link to a page that does not exist, fails it) and offline.  The last line printed is the
path of OUT/html/index.html.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the course folder; $LABKIT_COURSE overrides it, as it does for labkit.classroom.notebooks.course_dir
SOURCE = Path(os.environ.get("LABKIT_COURSE") or ROOT / "course").resolve()
CONFIG = ROOT / "site"
DEFAULT_OUT = ROOT / "build" / "site"


def sphinx_args(out: Path) -> list[str]:
    """sphinx-build's arguments: HTML from course/ with site/conf.py into out/html.  One process:
    with two cores, parallel reading (-j) measured slower (pickling the large doctrees)."""
    return ["-b", "html", "-c", str(CONFIG), "-d", str(out / ".doctrees"), "--quiet",
            "--fail-on-warning", "--keep-going", str(SOURCE), str(out / "html")]


def build(out: Path = DEFAULT_OUT) -> Path:
    """Build the site into ``out``; returns the path of its index.html (raises on failure)."""
    from sphinx.cmd.build import build_main

    status = build_main(sphinx_args(out))
    if status:
        raise SystemExit(f"the site did not build (sphinx-build exited with {status}; see above)")
    return out / "html" / "index.html"


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    index = build(Path(argv[0]).resolve() if argv else DEFAULT_OUT)
    print(index)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
