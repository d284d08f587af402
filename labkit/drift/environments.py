"""Side environments: the course's pinned dependencies with another MuJoCo.

One virtual environment per MuJoCo version, cached under ``~/.cache/labkit/drift``
(``$LABKIT_DRIFT_CACHE`` overrides it) and reused while ``pyproject.toml``'s
dependencies and the Python version stay the same.  The course package itself is not
installed there: the side environment imports this checkout's ``labkit`` through
``PYTHONPATH``, so the code that runs on the other MuJoCo is the code under review.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from ..errors import DriftError

__all__ = ["cache_dir", "requirements", "side_environment"]

ROOT = Path(__file__).resolve().parents[2]


def cache_dir() -> Path:
    """Where side environments live: ``$LABKIT_DRIFT_CACHE`` or ``~/.cache/labkit/drift``."""
    env = os.environ.get("LABKIT_DRIFT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "labkit" / "drift"


def requirements(version: str, pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The course's runtime dependencies with ``mujoco`` pinned to ``version`` instead.

    Example: ``requirements("4.0.0")`` → ``["mujoco==4.0.0", "numpy==2.4.6", ...]``.
    """
    if not re.fullmatch(r"\d+\.\d+\.\d+(\.\w+)?", version):
        raise DriftError(f"a MuJoCo version looks like 3.15.0, got {version!r}")
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    name = re.compile(r"^\s*mujoco\s*(?:[=<>!~;\[]|$)")
    if not any(name.match(d) for d in deps):
        raise DriftError(f"{pyproject} does not depend on mujoco; nothing to swap")
    return [f"mujoco=={version}" if name.match(d) else d for d in deps]


def side_environment(version: str, *, log=print) -> Path:
    """The Python interpreter of the cached side environment for MuJoCo ``version``,
    created (a few minutes, once) if needed.

    Raises :class:`DriftError` with pip's own reason when the version cannot be
    installed (no wheel for this Python or platform, no such release).
    """
    reqs = requirements(version)
    stamp_value = hashlib.sha256(json.dumps([reqs, sys.version]).encode()).hexdigest()
    home = cache_dir() / f"mujoco-{version}"
    python = home / "bin" / "python"
    stamp = home / ".labkit-drift"
    if python.is_file() and stamp.is_file() and stamp.read_text() == stamp_value:
        return python
    log(f"  creating the side environment {home} (MuJoCo {version}; once, then cached)")
    stamp.unlink(missing_ok=True)
    _run([sys.executable, "-m", "venv", "--clear", str(home)], f"could not create {home}")
    try:
        _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *reqs],
             f"pip cannot install MuJoCo {version} with the course's pinned dependencies")
    except DriftError:
        shutil.rmtree(home, ignore_errors=True)      # leave no half-made environment behind
        raise
    stamp.write_text(stamp_value)
    return python


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        reason = next((line for line in reversed(lines) if "ERROR" in line), lines[-1] if lines else "")
        raise DriftError(f"{what}: {reason.strip()}")
