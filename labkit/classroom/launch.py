"""Start the notebook runner and the scorer, each in its own sandbox, and read what they report.

:func:`run_notebook` runs a prepared submission with :mod:`.runner` in the sandbox and
returns the runner's report lines; :func:`score_answers` scores answer data with
:mod:`.scorer` in fresh processes that run no student code.  Both read only JSON lines from
the process's standard output, capped in total and per line: the student's code runs in the
runner's process and can write to that channel, so nothing read from it is trusted beyond
being data of bounded size.

A runner or scorer that cannot start, or stops before it reports anything, is the grader's
failure, not the student's: :class:`GraderError` says so, and the submission is reported
with the status "grader error" instead of a silent 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from ..exercises.answers import SEED_VARIABLE
from . import sandbox
from .runner import MAX_PAYLOAD

__all__ = ["GraderError", "kill_all", "run_notebook", "score_answers"]

GRACE = 30.0  # s the sandbox may overrun the notebook limit before it is killed
SCORE_TIMEOUT = 120.0  # s for scoring one exercise
REPORT_LIMIT = 8 << 20  # bytes of runner report read
LINE_LIMIT = MAX_PAYLOAD + (64 << 10)  # bytes of one report line: an answers payload and its envelope
STDERR_TAIL = 2000  # bytes of a failed process's stderr quoted in its report
RUNNER = "labkit.classroom.runner"  # the module the sandbox runs a notebook with
RUNNER_STATUSES = ("ok", "timed out")  # the only statuses the runner itself reports
# the scorer announces itself once labkit's checkers are imported, before it reads a request:
# a scorer that never says so never ran, whatever the answers were
_SCORER = (
    "import json, sys, labkit.exercises, labkit.classroom.scorer as scorer; "
    "sys.stdout.write(json.dumps({'ready': True}) + '\\n'); sys.stdout.flush(); sys.exit(scorer.main())"
)
_RERUN = "this is the grader's failure, not the submission's: grade this submission again"

_RUNNING: set[subprocess.Popen] = set()
_LOCK = threading.Lock()


class GraderError(RuntimeError):
    """The runner or the scorer could not start or stopped before reporting; says why."""


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _paths() -> tuple[Path, Path]:
    """labkit's package folder and the course models folder."""
    from ..models import models_dir

    return Path(__file__).resolve().parent.parent, models_dir().resolve()


def _corpus() -> Path | None:
    """The real-model corpus (labkit.corpus), if this machine has it: the sandbox sees it
    read-only (it has no network to fetch it; ``python -m labkit.corpus`` fills it once)."""
    from ..corpus import WHEELS, root

    folder = root().resolve()
    ready = [w for w in WHEELS if (folder / f"{w}-{WHEELS[w]}" / ".complete").is_file()]
    return folder if ready else None


def _environment(models: Path, notebook: str) -> dict[str, str]:
    """The sandbox's whole environment: the grader's own labkit first on the path."""
    package, _ = _paths()
    env = {
        "PYTHONPATH": str(package.parent),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(sandbox.INSIDE),
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        # Mesa finds no cache folder for the sandbox user: without one every GL context compiles
        # its shaders again (~0.25 s each, half of a chapter's rendering)
        "MESA_SHADER_CACHE_DIR": "/tmp/mesa_shader_cache",
        "MPLBACKEND": "agg",
        "IPYTHONDIR": "/tmp/ipython",
        "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
        "LABKIT_MODELS": str(models),
        "LABKIT_NOTEBOOK": notebook,
        # the runner keeps nothing the notebook shows: labkit draws no pictures for it
        "LABKIT_PICTURES": "off",
        # a corpus folder that does not exist tells labkit.corpus not to try to download
        "LABKIT_CORPUS": str(_corpus() or "/nonexistent/labkit-corpus"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for key in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "LABKIT_CHROMIUM"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _start(
    argv: list[str], box: sandbox.Sandbox, *, cwd: Path, env: dict[str, str], stdin: Any, stderr: IO[bytes]
) -> subprocess.Popen:
    """Start ``argv`` in ``box``; :class:`GraderError` if it cannot start at all."""
    try:
        process = subprocess.Popen(
            box.command(argv),
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=box.preexec,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GraderError(f"the sandbox could not start ({exc}); {_RERUN}") from exc
    with _LOCK:
        _RUNNING.add(process)
    return process


def _finish(process: subprocess.Popen) -> None:
    _kill(process)
    process.wait()
    with _LOCK:
        _RUNNING.discard(process)


def _tail(log: IO[bytes]) -> str:
    """The last line of what a process wrote to ``log`` (its stderr), bounded."""
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - STDERR_TAIL))
    lines = log.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:500] if lines else ""


def _box(
    limits: sandbox.Limits, *, use_sandbox: bool, inputs: Path | None, env: dict[str, str]
) -> sandbox.Sandbox:
    """A sandbox for one process; :class:`GraderError` if its uid or cgroup cannot be had."""
    package, models = _paths()
    corpus = _corpus()
    try:
        return sandbox.Sandbox(
            limits, readonly=[package, models, *([corpus] if corpus else [])], inputs=inputs,
            env=env, contain=use_sandbox,
        )
    except (OSError, sandbox.SandboxUnavailable) as exc:
        raise GraderError(f"the sandbox could not be set up ({exc}); {_RERUN}") from exc


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
    seed: int | None = None,
) -> list[dict[str, Any]]:
    """Run a prepared notebook in the sandbox; the runner's report lines, and a last status
    line of the grader's own where the runner did not end with one.  ``seed``: the seed of
    code answers' unseen probe inputs (handed to the notebook's probes as
    ``LABKIT_PROBE_SEED``; give the scorer the same one).  Raises :class:`GraderError` when
    the runner could not start or stopped before the notebook's first cell."""
    import nbformat

    _, models = _paths()
    with tempfile.TemporaryDirectory(prefix="labkit-work-") as folder:
        inputs = Path(folder)
        nbformat.write(nb, inputs / f"{notebook}.ipynb")
        # the sandbox sees the inputs read-only at INPUT and works in a private INSIDE; without
        # a sandbox the inputs folder is the working folder too
        seen, cwd = (sandbox.INPUT, sandbox.INSIDE) if use_sandbox else (inputs, inputs)
        spec = {
            "notebook": str(seen / f"{notebook}.ipynb"),
            "cwd": str(cwd),
            "timeout": timeout,
            "cell_timeout": cell_timeout,
            "max_output": max_output,
            "collect": collect,
        }
        (inputs / "runner.json").write_text(json.dumps(spec))
        argv = [sys.executable, "-m", RUNNER, str(seen / "runner.json")]
        env = _environment(models, notebook)
        if seed is not None:
            env[SEED_VARIABLE] = str(seed)
        with (
            tempfile.TemporaryFile() as log,
            _box(limits, use_sandbox=use_sandbox, inputs=inputs if use_sandbox else None, env=env) as box,
        ):
            process = _start(
                argv, box, cwd=inputs, env={**env, "HOME": str(inputs)}, stdin=subprocess.DEVNULL, stderr=log
            )
            lines, timed_out = _watch(process, timeout + GRACE)
            return _verdict(lines, timed_out, process.returncode, _tail(log))


def _watch(process: subprocess.Popen, limit: float) -> tuple[list[dict[str, Any]], bool]:
    """Read the runner's report until it ends or ``limit`` s pass; (lines, whether it ran out)."""
    lines: list[dict[str, Any]] = []
    reader = threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _finish(process)
        reader.join(timeout=5)
    return lines, timed_out


def _verdict(
    lines: list[dict[str, Any]], timed_out: bool, code: int | None, tail: str
) -> list[dict[str, Any]]:
    """The runner's lines, with only the statuses the runner itself reports, and the grader's
    own status line where the runner did not end with one."""
    lines = [line for line in lines if line.get("status", "ok") in RUNNER_STATUSES]
    ran = any(set(line) == {"cell"} for line in lines)
    if timed_out:
        lines.append({"status": "timed out", "limit": "notebook", "killed": True})
    elif any(line.get("overflow") for line in lines):
        lines.append(
            {
                "status": "runner error",
                "message": "the notebook flooded the grader's report channel (more than "
                f"{REPORT_LIMIT >> 20} MB); it was stopped there",
            }
        )
    elif not any("status" in line for line in lines):
        if not ran:  # no student code ran: the runner itself failed
            raise GraderError(
                f"the notebook runner stopped before the notebook's first cell "
                f"(exit code {code}{': ' + tail if tail else ''}); {_RERUN}"
            )
        lines.append({"status": "kernel died", "exit_code": code})
    return lines


def _read_lines(
    stream: IO[bytes], into: list[dict[str, Any]], limit: int = REPORT_LIMIT, line_limit: int = LINE_LIMIT
) -> None:
    """Parse JSON-object lines from ``stream`` into ``into``: at most ``limit`` bytes in all
    and ``line_limit`` per line (a longer line is skipped without being held in memory); an
    ``{"overflow": True}`` line marks a report that passed ``limit``."""
    read = 0
    while raw := stream.readline(line_limit + 1):
        read += len(raw)
        if read > limit:
            into.append({"overflow": True})
            break
        if len(raw) > line_limit:  # too long: skip to its end, a bounded piece at a time
            while raw and not raw.endswith(b"\n") and read <= limit:
                raw = stream.readline(line_limit + 1)
                read += len(raw)
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            continue
        if isinstance(record, dict):
            into.append(record)
    with contextlib.suppress(Exception):
        while stream.read(1 << 16):  # drain, so the process never blocks on a full pipe
            pass


def _score_once(
    request: bytes, box: sandbox.Sandbox, env: dict[str, str]
) -> tuple[list[dict[str, Any]], str]:
    """One scorer run on ``request``: its lines and the tail of its stderr."""
    with tempfile.TemporaryDirectory(prefix="labkit-score-") as folder, tempfile.TemporaryFile() as log:
        process = _start(
            [sys.executable, "-s", "-c", _SCORER],
            box,
            cwd=Path(folder),
            env={**env, "HOME": folder},
            stdin=subprocess.PIPE,
            stderr=log,
        )
        got: list[dict[str, Any]] = []
        reader = threading.Thread(target=_read_lines, args=(process.stdout, got), daemon=True)
        reader.start()
        try:
            with contextlib.suppress(BrokenPipeError):
                process.stdin.write(request)
                process.stdin.close()
            started = time.monotonic()
            while process.poll() is None:
                scored = len([g for g in got if "exercise" in g])
                if time.monotonic() - started > SCORE_TIMEOUT * (scored + 1):
                    break
                time.sleep(0.02)
        finally:
            _finish(process)
            reader.join(timeout=5)
        return got, _tail(log)


def score_answers(
    answers: dict[str, Any],
    *,
    use_sandbox: bool = True,
    hidden: bool = True,
    limits: sandbox.Limits | None = None,
    seed: int | None = None,
    values: dict[str, dict[str, float]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Score answer data (``{exercise id: {name: data}}``) in fresh processes that run no
    student code (``seed``: the one the notebook's probes were given; ``values``: the
    student's own numbers per exercise, default the published ones); returns ``{exercise id:
    record}`` (see :meth:`Exercise.record`), with ``{"error": why}`` for an exercise whose
    checker crashed or ran past its time.

    Raises :class:`GraderError` when a scorer never started (twice in a row): then no answer
    was checked, and no score may be given."""
    _, models = _paths()
    limits = limits or sandbox.Limits()
    env = _environment(models, "scorer")
    pending = list(answers)
    results: dict[str, dict[str, Any]] = {}
    while pending:
        request = json.dumps({"answers": {n: answers[n] for n in pending}, "hidden": hidden,
                              "seed": seed, "values": values or {}}).encode()
        for attempt in (1, 2):  # a second try: a machine briefly out of processes or memory
            with _box(limits, use_sandbox=use_sandbox, inputs=None, env=env) as box:
                got, tail = _score_once(request, box, env)
            if any(g.get("ready") is True for g in got):
                break
            if attempt == 2:
                raise GraderError(
                    f"the scorer could not start{': ' + tail if tail else ''}; no answer was "
                    f"checked; {_RERUN}"
                )
        for record in got:
            number = str(record.get("exercise"))
            if number in pending and number not in results:
                results[number] = record
        pending = [n for n in pending if n not in results]
        if pending:  # the scorer ran, and the first unscored exercise crashed or hung its checker
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
