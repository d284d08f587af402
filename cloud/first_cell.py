"""The first code cell of every chapter: in a hosted runtime, install the course; then start labkit.

    python cloud/first_cell.py            print the cell
    python cloud/first_cell.py --write    put it into every chapter (cell ids kept), then run
                                          `labkit execute` on the chapters

The cell names the repository (``[project.urls] Repository`` in pyproject.toml) and the release
tag (``v`` + ``labkit.__version__``) literally, so a learner sees what is installed;
tests/test_cloud.py checks that every chapter's first cell is this text.  Locally the ``if`` is
false and the cell does what ``import labkit; labkit.setup()`` does.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLONE = "mujoco-by-experiment"   # the folder `git clone URL` makes

TEMPLATE = """\
import os
import runpy
import subprocess
import sys

if "google.colab" in sys.modules or os.environ.get("LABKIT_CLOUD"):  # Colab: install the course
    url = "{url}"
    if not os.path.isdir("{clone}"):
        subprocess.run(["git", "-c", "advice.detachedHead=false", "clone", "-q", "--depth=1",
                        "--branch={tag}", url], check=True)
    runpy.run_path("{clone}/cloud/install.py")
import labkit
labkit.setup()"""


def repository_url() -> str:
    """``[project.urls] Repository`` from pyproject.toml: the one place the URL is written."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["urls"]["Repository"]


def release_tag() -> str:
    """``v`` + labkit's ``__version__`` (read from the source, without importing labkit)."""
    source = (ROOT / "labkit" / "__init__.py").read_text(encoding="utf-8")
    return "v" + re.search(r'^__version__ = "([^"]+)"', source, re.M).group(1)


def cell() -> str:
    return TEMPLATE.format(clone=CLONE, tag=release_tag(), url=repository_url())


def write() -> None:
    import nbformat

    for path in sorted((ROOT / "course").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        first = next(c for c in nb.cells if c.cell_type == "code")
        if first.source != cell():
            first.source = cell()
            nbformat.write(nb, path)
            print(f"updated {path.relative_to(ROOT)}")


if __name__ == "__main__":
    write() if sys.argv[1:] == ["--write"] else print(cell())
