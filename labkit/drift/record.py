"""Run chapters with claims in record mode: the half of ``labkit drift`` that runs inside
a side environment (``python -m labkit.drift.record LOG NOTEBOOK...``).

Each chapter runs to its end even where claims fail or cells raise.  Claims go to the
claims log as usual; a cell that raised adds a line ``{"notebook", "cell", "error"}`` to
the same log.  One JSON line per chapter on stdout reports progress to the caller.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..classroom.notebooks import execute

__all__ = ["cell_errors", "record_chapter"]


def cell_errors(notebook: object) -> list[tuple[int | None, str]]:
    """(execution count, "Name: message") of every code cell of an executed notebook
    whose outputs hold an error."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append((cell.get("execution_count"), f"{output['ename']}: {output['evalue']}"))
                break
    return found


def record_chapter(path: Path, log: Path) -> dict:
    """Run one chapter in record mode, appending its claims and cell errors to ``log``.

    Returns ``{"notebook", "seconds", "errors"}`` (errors: how many cells raised).
    """
    variables = {"LABKIT_CLAIMS": str(log), "LABKIT_CLAIMS_MODE": "record"}
    run = execute(path, env=variables, allow_errors=True)
    errors = cell_errors(run.notebook)
    if run.error:      # the run itself stopped (a timeout): an error of the whole chapter
        errors.append((None, run.error))
    with open(log, "a", encoding="utf-8") as handle:
        for cell, error in errors:
            handle.write(json.dumps({"notebook": path.stem, "cell": cell, "error": error}) + "\n")
    return {"notebook": path.stem, "seconds": round(run.seconds, 1), "errors": len(errors)}


def main(argv: list[str]) -> int:
    log, notebooks = Path(argv[0]).resolve(), [Path(p) for p in argv[1:]]
    for path in notebooks:
        print(json.dumps(record_chapter(path, log)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
