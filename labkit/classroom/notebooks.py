"""Execute course notebooks in a fresh kernel (nbclient), without touching the files."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SOLUTION_TOGGLE", "Run", "course_dir", "course_notebooks", "execute",
           "solution_cells", "tag_solutions"]



def course_dir() -> Path:
    """The repository's ``course/`` folder (``$LABKIT_COURSE`` overrides it)."""
    env = os.environ.get("LABKIT_COURSE")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "course"


def course_notebooks() -> list[Path]:
    """The chapter notebooks, in chapter order."""
    return sorted(course_dir().glob("[0-9][0-9]_*.ipynb"))


@dataclass
class Run:
    """One notebook execution: the executed notebook, wall time (s), and the error if any."""

    path: Path
    notebook: object
    seconds: float
    error: str | None


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def execute(path: Path, *, env: dict[str, str] | None = None, timeout: int = 300,
            allow_errors: bool = False) -> Run:
    """Run every cell of the notebook at ``path`` in a new kernel of this Python.

    The file is read, never written.  ``env`` is added to the kernel's environment
    (``LABKIT_NOTEBOOK`` is set to the notebook's name).  The kernel runs in the
    notebook's folder, as in JupyterLab.  Errors stop the run and are reported in
    ``Run.error``, not raised; with ``allow_errors`` the run goes on after a failing cell
    and the error stays in that cell's outputs.
    """
    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    variables = {"LABKIT_NOTEBOOK": path.stem, **(env or {})}
    # IPC transport: a local kernel needs no TCP port (and ipykernel warns about
    # unencrypted TCP on every start).
    # The asynchronous manager lets nbclient's timeout interrupt a cell that never ends.
    manager = AsyncKernelManager(kernel_name="python3", transport="ipc",
                            ip=str(Path(tempfile.mkdtemp(prefix="labkit-kernel-")) / "k"))
    # No per-cell timestamps: a saved re-run then differs from the committed notebook only
    # where an output changed.
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    client = NotebookClient(notebook, timeout=timeout, km=manager, allow_errors=allow_errors,
                            record_timing=False, resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    error = None
    with _environment(variables):
        try:
            client.execute()
        except CellExecutionError as exc:
            error = f"{exc.ename}: {exc.evalue}"
        except TimeoutError:
            error = f"TimeoutError: a cell ran longer than {timeout} s"
        finally:
            if manager.has_kernel:
                run_sync(manager.shutdown_kernel)(now=True)
    return Run(path, notebook, time.perf_counter() - start, error)


SOLUTION_TOGGLE = "hide-cell"
"""The cell tag that collapses an exercise's reference solution on the course's site: myst-nb
hides a ``hide-cell`` cell behind a toggle, which site/conf.py labels "Show solution"."""


def solution_cells(notebook: Any) -> list[int]:
    """Indexes of the notebook's reference-solution code cells: those with a ``### BEGIN
    SOLUTION`` region or tagged ``solution``, as :mod:`labkit.classroom.student` finds them."""
    from .student import SOLUTION_TAGS, has_solution

    return [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code" and (
        has_solution(cell.source) or SOLUTION_TAGS & set(cell.metadata.get("tags", [])))]


def tag_solutions(notebook: Any) -> dict[str, list[int]]:
    """Tag every solution cell :data:`SOLUTION_TOGGLE`, and untag every other cell, in place.

    Returns the cell indexes changed: ``{"tagged": [...], "untagged": [...]}`` (both empty
    when the notebook was already right).  Only the tags change; sources, outputs and the
    other metadata stay as they are.
    """
    solutions = set(solution_cells(notebook))
    changed: dict[str, list[int]] = {"tagged": [], "untagged": []}
    for index, cell in enumerate(notebook.cells):
        tags = list(cell.metadata.get("tags", []))
        if index in solutions and SOLUTION_TOGGLE not in tags:
            cell.metadata["tags"] = [*tags, SOLUTION_TOGGLE]
            changed["tagged"].append(index)
        elif index not in solutions and SOLUTION_TOGGLE in tags:
            kept = [t for t in tags if t != SOLUTION_TOGGLE]
            if kept:
                cell.metadata["tags"] = kept
            else:
                cell.metadata.pop("tags")
            changed["untagged"].append(index)
    return changed
