"""Inside the sandbox: run a prepared submission and hand out its answers.

``python -m labkit.classroom.runner SPEC`` (started by :mod:`.grading` in the sandbox)
runs the notebook named in the JSON file SPEC cell by cell in an IPython shell *in this
process*, with errors allowed, a time limit per cell and per notebook, and an output cap.
(The shell is the same IPython a Jupyter kernel wraps; running it in-process instead of
behind a kernel and ZeroMQ saves about two seconds per submission, and the sandbox, not a
process boundary, is what isolates the student's code.)  It reports on its standard
output, one JSON object per line, as it goes:

- ``{"cell": i}`` before cell ``i`` runs;
- ``{"error": {"cell": i, "ename": ..., "evalue": ...}}`` for a cell that raised;
- ``{"answers": {...}, "cell": i}`` for each answers payload that a collection cell
  (inserted by the grader, see :func:`labkit.exercises.collect`) displayed;
- ``{"truncated": true, "cell": i}`` once the output passes its cap;
- ``{"status": "ok" | "timed out", ...}`` at the end.  A runner that ends without a status
  line died in the cell it last announced (``os._exit``, a crash, memory).

The notebook's own output is counted and dropped: nothing it prints reaches the report.
Its code runs in this process, though, and can find and write to the report's file
descriptor: the grader (:mod:`.launch`) therefore reads the report as untrusted data,
capped in total and per line, keeps only the statuses this runner reports, and takes from
it nothing but answer values (which the notebook could set anyway).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..exercises import ANSWERS_MIME

MAX_PAYLOAD = 1 << 20   # bytes of one answers payload


class _Report:
    """Report lines on a private copy of stdout; fds 1 and 2 themselves go to /dev/null."""

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        self._lock = threading.Lock()

    def __call__(self, **record: Any) -> None:
        with self._lock:
            self._out.write(json.dumps(record) + "\n")
            self._out.flush()


class _Sink:
    """sys.stdout / sys.stderr for the notebook: counts what it prints, keeps none of it."""

    def __init__(self, budget: dict[str, Any]):
        self.budget = budget

    def write(self, text: str) -> int:
        self.budget["used"](len(text))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def run(spec: dict[str, Any]) -> None:
    emit = _Report()
    os.chdir(spec["cwd"])
    deadline = time.monotonic() + float(spec["timeout"])
    cell_limit = spec.get("cell_timeout")
    collect_cells = set(spec.get("collect", []))
    cells = json.loads(Path(spec["notebook"]).read_text(encoding="utf-8"))["cells"]
    state: dict[str, Any] = {"cell": None, "left": int(spec["max_output"]), "truncated": False}

    def used(size: int) -> None:
        state["left"] -= size
        if state["left"] < 0 and not state["truncated"]:
            state["truncated"] = True
            emit(truncated=True, cell=state["cell"])

    budget = {"used": used}
    sys.stdout = sys.stderr = _Sink(budget)   # type: ignore[assignment]

    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            if state["cell"] in collect_cells and ANSWERS_MIME in data:
                payload = data[ANSWERS_MIME]
                if len(json.dumps(payload)) <= MAX_PAYLOAD:
                    emit(answers=payload, cell=state["cell"])
                else:
                    emit(error={"cell": state["cell"], "ename": "AnswerTooLarge",
                                "evalue": f"the answers are larger than {MAX_PAYLOAD} bytes"})
                return
            used(len(json.dumps(data, default=str)))

        def clear_output(self, wait=False):
            pass

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config, colors="nocolor")
    shell.display_pub = Publisher(shell=shell)

    def stop(index: int, kind: str) -> None:   # a watchdog: the cell ran out of time
        emit(status="timed out", cell=index, limit=kind)
        os._exit(0)

    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        state["cell"] = index
        emit(cell=index)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            emit(status="timed out", cell=index, limit="notebook")
            return
        kind = "cell" if cell_limit is not None and float(cell_limit) <= remaining else "notebook"
        watchdog = threading.Timer(min(remaining, float(cell_limit or remaining)), stop, (index, kind))
        watchdog.daemon = True
        watchdog.start()
        try:
            result = shell.run_cell(source, store_history=False, silent=False)
        finally:
            watchdog.cancel()
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            emit(error={"cell": index, "ename": type(error).__name__[:200], "evalue": str(error)[:1000]})
    emit(status="ok")


if __name__ == "__main__":
    run(json.loads(Path(sys.argv[1]).read_text()))
