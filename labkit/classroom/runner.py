"""Inside the sandbox: run a prepared submission in a kernel and hand out its answers.

``python -m labkit.classroom.runner SPEC`` (started by :mod:`.grading` in the sandbox)
executes the notebook named in the JSON file SPEC cell by cell, with errors allowed, a
time limit per cell and per notebook, and an output cap.  It reports on its standard
output, one JSON object per line, as it goes:

- ``{"cell": i}`` before cell ``i`` runs;
- ``{"error": {"cell": i, "ename": ..., "evalue": ...}}`` for a cell that raised;
- ``{"answers": {...}, "cell": i}`` for each answers payload that a collection cell
  (inserted by the grader, see :func:`labkit.exercises.collect`) displayed;
- ``{"status": "ok" | "timed out" | "kernel died" | "runner error", ...}`` at the end.

Nothing else the kernel writes is read.  The kernel's own standard output and error go
to /dev/null and the runner's log, so a notebook cannot write report lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..exercises import ANSWERS_MIME

MAX_PAYLOAD = 1 << 20   # bytes of one answers payload


def _emitter() -> Any:
    """A private copy of stdout for report lines; fd 1 itself goes to stderr, so that the
    kernel (which inherits fds 1 and 2) cannot write into the report."""
    private = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")   # os.dup: not inherited
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def emit(**record: Any) -> None:
        private.write(json.dumps(record) + "\n")
    return emit


def run(spec: dict[str, Any]) -> None:
    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    emit = _emitter()
    deadline = time.monotonic() + float(spec["timeout"])
    cell_limit = spec.get("cell_timeout")
    collect_cells = set(spec.get("collect", []))
    nb = nbformat.read(spec["notebook"], as_version=4)
    budget = {"left": int(spec["max_output"]), "truncated": False}
    used: dict[str, Any] = {}

    class Client(NotebookClient):
        def output(self, outs, msg, display_id, cell_index):  # type: ignore[override]
            content = msg.get("content", {})
            data = content.get("data", {})
            if cell_index in collect_cells and ANSWERS_MIME in data:
                payload = json.dumps(data[ANSWERS_MIME])
                if len(payload) <= MAX_PAYLOAD:
                    emit(answers=data[ANSWERS_MIME], cell=cell_index)
                else:
                    emit(error={"cell": cell_index, "ename": "AnswerTooLarge",
                                "evalue": f"the answers are {len(payload)} bytes; at most {MAX_PAYLOAD}"})
                return None
            size = len(json.dumps(content))
            if size > budget["left"]:
                budget["left"] = 0
                if not budget["truncated"]:
                    budget["truncated"] = True
                    emit(truncated=True, cell=cell_index)
                return None
            budget["left"] -= size
            return super().output(outs, msg, display_id, cell_index)

    def timeout_for(cell: Any) -> int:
        remaining = deadline - time.monotonic()
        limit = remaining if cell_limit is None else min(float(cell_limit), remaining)
        used["kind"] = "cell" if cell_limit is not None and float(cell_limit) <= remaining else "notebook"
        return max(1, int(limit + 0.999))

    def executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        content = (execute_reply or {}).get("content", {})
        if content.get("status") == "error":
            emit(error={"cell": cell_index, "ename": str(content.get("ename", ""))[:200],
                        "evalue": str(content.get("evalue", ""))[:1000]})

    sockets = Path(tempfile.mkdtemp(prefix="lk-"))   # short: IPC socket paths are limited to ~100 bytes
    manager = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(sockets / "k"))
    client = Client(nb, km=manager, timeout_func=timeout_for, allow_errors=True, record_timing=False,
                    shutdown_kernel="immediate", interrupt_on_timeout=False, kernel_name="python3",
                    on_cell_executed=executed, resources={"metadata": {"path": spec["cwd"]}})
    status: dict[str, Any] = {"status": "ok"}
    try:
        with client.setup_kernel(cwd=spec["cwd"]):
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                emit(cell=index)
                if deadline - time.monotonic() <= 0:
                    status = {"status": "timed out", "cell": index, "limit": "notebook"}
                    break
                try:
                    client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                except CellTimeoutError:
                    status = {"status": "timed out", "cell": index, "limit": used.get("kind", "cell")}
                    break
                except DeadKernelError:
                    process = getattr(manager.provisioner, "process", None)
                    status = {"status": "kernel died", "cell": index,
                              "exit_code": process.poll() if process is not None else None}
                    break
    except DeadKernelError:     # died while starting or shutting down
        if status["status"] == "ok":
            status = {"status": "kernel died", "cell": None}
    except Exception as exc:
        status = {"status": "runner error", "message": f"{type(exc).__name__}: {exc}"[:500]}
    finally:
        with contextlib.suppress(Exception):
            pid = getattr(manager.provisioner, "pid", None)
            if pid:
                os.killpg(pid, 9)
    emit(**status)


if __name__ == "__main__":
    run(json.loads(Path(sys.argv[1]).read_text()))
