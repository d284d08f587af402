"""Start the notebook runner and the scorer, each in its own sandbox, and read what they report.

:func:`run_notebook` runs a prepared submission with :mod:`.runner` in the sandbox and
returns the runner's report lines; :func:`score_answers` scores answer data with
:mod:`.scorer` in fresh processes that run no student code.  Both read only JSON lines from
the process's standard output, size-capped.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from . import sandbox

__all__ = ["kill_all", "run_notebook", "score_answers"]

GRACE = 30.0  # s the sandbox may overrun the notebook limit before it is killed
SCORE_TIMEOUT = 120.0  # s for scoring one exercise
REPORT_LIMIT = 8 << 20  # bytes of runner report read

_RUNNING: set[subprocess.Popen] = set()
_LOCK = threading.Lock()


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _paths() -> tuple[Path, Path]:
    """labkit's package folder and the course models folder."""
    from ..models import models_dir

    return Path(__file__).resolve().parent.parent, models_dir().resolve()


def _environment(models: Path, notebook: str) -> dict[str, str]:
    """The sandbox's whole environment: the grader's own labkit first on the path."""
    package, _ = _paths()
    env = {
        "PYTHONPATH": str(package.parent),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(sandbox.INSIDE),
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        # Mesa finds no cache folder for nobody: without one every GL context compiles its
        # shaders again (~0.25 s each, half of a chapter's rendering)
        "MESA_SHADER_CACHE_DIR": "/tmp/mesa_shader_cache",
        "MPLBACKEND": "agg",
        "IPYTHONDIR": "/tmp/ipython",
        "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
        "LABKIT_MODELS": str(models),
        "LABKIT_NOTEBOOK": notebook,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for key in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "LABKIT_CHROMIUM"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _launch(
    argv: list[str],
    *,
    work: Path,
    use_sandbox: bool,
    env: dict[str, str],
    limits: sandbox.Limits,
    stdin: int | None = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
) -> tuple[subprocess.Popen, Path | None]:
    package, models = _paths()
    if use_sandbox:
        sandbox.prepare_work(work)
        argv, stage = sandbox.command(argv, work=work, readonly=[package, models], env=env)
    else:
        stage = None
        env = {**env, "HOME": str(work)}
    process = subprocess.Popen(
        argv,
        cwd=work,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=sandbox.preexec(limits),
    )
    with _LOCK:
        _RUNNING.add(process)
    return process, stage


def _finish(process: subprocess.Popen, stage: Path | None) -> None:
    _kill(process)
    process.wait()
    with _LOCK:
        _RUNNING.discard(process)
    if stage:
        shutil.rmtree(stage, ignore_errors=True)


def run_notebook(
    nb: Any,
    notebook: str,
    collect: list[int],
    *,
    timeout: float,
    cell_timeout: float | None,
    max_output: int,
    use_sandbox: bool,
    limits: sandbox.Limits,
) -> list[dict[str, Any]]:
    """Run a prepared notebook in the sandbox; the runner's report lines."""
    import nbformat

    _, models = _paths()
    work = Path(tempfile.mkdtemp(prefix="labkit-work-"))
    lines: list[dict[str, Any]] = []
    try:
        path = work / f"{notebook}.ipynb"
        nbformat.write(nb, path)
        inside = sandbox.INSIDE if use_sandbox else work
        spec = {
            "notebook": str(inside / path.name),
            "cwd": str(inside),
            "timeout": timeout,
            "cell_timeout": cell_timeout,
            "max_output": max_output,
            "collect": collect,
        }
        (work / ".runner.json").write_text(json.dumps(spec))
        argv = [sys.executable, "-m", "labkit.classroom.runner", str(inside / ".runner.json")]
        with tempfile.TemporaryFile() as log:
            process, stage = _launch(
                argv,
                work=work,
                use_sandbox=use_sandbox,
                limits=limits,
                env=_environment(models, notebook),
                stderr=log,
            )
            reader = threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True)
            reader.start()
            try:
                process.wait(timeout=timeout + GRACE)
            except subprocess.TimeoutExpired:
                lines.append({"status": "timed out", "limit": "notebook", "killed": True})
            finally:
                _finish(process, stage)
                reader.join(timeout=5)
            if not any("status" in line for line in lines):
                if any(set(line) == {"cell"} for line in lines):  # it died inside the notebook
                    lines.append({"status": "kernel died", "exit_code": process.returncode})
                else:
                    log.seek(0)
                    tail = log.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
                    lines.append(
                        {
                            "status": "runner error",
                            "message": f"the notebook runner stopped (exit code {process.returncode})"
                            + (f": {tail[-1]}" if tail else ""),
                        }
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return lines


def _read_lines(stream: Any, into: list[dict[str, Any]], limit: int = REPORT_LIMIT) -> None:
    read = 0
    for raw in stream:
        read += len(raw)
        if read > limit:
            into.append({"status": "runner error", "message": "the runner's report exceeded its size limit"})
            break
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            into.append(record)
    with contextlib.suppress(Exception):
        for _ in stream:  # drain, so the runner never blocks on a full pipe
            pass


def score_answers(
    answers: dict[str, Any],
    *,
    use_sandbox: bool = True,
    hidden: bool = True,
    limits: sandbox.Limits | None = None,
) -> dict[str, dict[str, Any]]:
    """Score answer data (``{exercise id: {name: data}}``) in fresh processes that run no
    student code; returns ``{exercise id: record}`` (see :meth:`Exercise.record`), with
    ``{"error": why}`` for an exercise whose checker crashed or ran past its time."""
    _, models = _paths()
    limits = limits or sandbox.Limits()
    pending = list(answers)
    results: dict[str, dict[str, Any]] = {}
    while pending:
        request = json.dumps({"answers": {n: answers[n] for n in pending}, "hidden": hidden})
        work = Path(tempfile.mkdtemp(prefix="labkit-score-"))
        got: list[dict[str, Any]] = []
        try:
            process, stage = _launch(
                [sys.executable, "-s", "-m", "labkit.classroom.scorer"],
                work=work,
                use_sandbox=use_sandbox,
                env=_environment(models, "scorer"),
                limits=limits,
                stdin=subprocess.PIPE,
            )
            reader = threading.Thread(target=_read_lines, args=(process.stdout, got), daemon=True)
            reader.start()
            try:
                process.stdin.write(request.encode())
                process.stdin.close()
            except BrokenPipeError:
                pass
            started = time.monotonic()
            try:
                while process.poll() is None:
                    scored = len([g for g in got if "exercise" in g])
                    if time.monotonic() - started > SCORE_TIMEOUT * (scored + 1):
                        break
                    time.sleep(0.02)
            finally:
                _finish(process, stage)
                reader.join(timeout=5)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for record in got:
            number = str(record.get("exercise"))
            if number in pending and number not in results:
                results[number] = record
        pending = [n for n in pending if n not in results]
        if pending:  # the first unscored exercise crashed or hung its checker: skip it, go on
            results[pending[0]] = {
                "error": f"checking this answer crashed or took longer than {SCORE_TIMEOUT:g} s; it scores 0"
            }
            pending = pending[1:]
    return results


def kill_all() -> None:
    """Stop every runner and scorer still running (Ctrl-C)."""
    with _LOCK:
        for process in _RUNNING:
            _kill(process)
