"""Run a command in a bubblewrap sandbox: no network, a read-only system, a private folder.

:func:`command` wraps an argument list so that it runs under ``bwrap`` (Debian package
``bubblewrap``) with

- no network (only an unconfigured loopback), and new pid, ipc, uts and user namespaces;
- read-only views of the system (``/usr``, ``/etc``), of this Python and its virtual
  environment, and of the paths the caller names (labkit and the course models), and
  nothing else of the machine: no home folder, no repository, no reference notebooks, no
  grader state, no other submission;
- one private writable folder (``/home/student``, the working directory) and a private ``/tmp``;
- as an unprivileged user: when the grader runs as root, the sandbox runs as ``nobody``
  (``setpriv``).  bwrap then cannot reach paths inside folders that only root may enter
  (``/root/.pyenv``, say), so those are first bind-mounted, read-only and privately, into
  a staging folder in a mount namespace of their own (``unshare``);
- resource limits (:class:`Limits`): address space, processes, file size, no core dumps.

bwrap is used because it is the maintained, unprivileged sandbox that Flatpak builds on;
nothing in the Python ecosystem does this job.
"""

from __future__ import annotations

import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["INSTALL", "Limits", "SandboxUnavailable", "check", "command", "preexec"]

INSTALL = "sudo apt-get install -y bubblewrap"
NOBODY = 65534
INSIDE = Path("/home/student")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces here; the message says what to do."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox: address space (MiB), processes and threads of the
    sandbox user, largest file written (MiB)."""

    memory_mb: int = 6144
    processes: int = 256
    file_mb: int = 256


def preexec(limits: Limits) -> Callable[[], None]:
    """A ``preexec_fn`` that applies ``limits`` in the child before it execs (they are
    inherited by everything it starts)."""
    def apply() -> None:
        for kind, value in ((resource.RLIMIT_AS, limits.memory_mb << 20),
                            (resource.RLIMIT_NPROC, limits.processes),
                            (resource.RLIMIT_FSIZE, limits.file_mb << 20),
                            (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(kind, (value, value))
    return apply


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _python_paths() -> list[Path]:
    """This Python's installation and virtual environment (resolved)."""
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    executable = Path(sys.executable).resolve()
    if not any(executable.is_relative_to(p) for p in paths):
        paths.add(executable.parent)
    return sorted(paths)


def _minimal(paths: Iterable[Path]) -> list[Path]:
    """The paths that are not inside another of them."""
    paths = sorted({Path(p).resolve() for p in paths})
    return [p for p in paths if not any(p != q and p.is_relative_to(q) for q in paths)]


def command(argv: list[str], *, work: Path, readonly: Iterable[Path] = (),
            env: Mapping[str, str] | None = None) -> tuple[list[str], Path | None]:
    """The command line that runs ``argv`` in a sandbox whose working folder is ``work``.

    readonly: extra paths visible, read-only, at their own location (labkit, models);
    env: the sandbox's whole environment (nothing else is inherited).
    Returns the command and a staging folder to delete afterwards (None if none).
    ``work`` must be writable by the sandbox user (see :func:`prepare_work`).
    """
    binds = _minimal([*_python_paths(), *readonly])
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox",
            *_system_binds(), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            # the CPU topology: Mesa's llvmpipe and BLAS size their thread pools from it
            "--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu",
            "--bind", str(work), str(INSIDE), "--chdir", str(INSIDE), "--clearenv"]
    for key, value in (env or {}).items():
        args += ["--setenv", key, value]
    if os.geteuid() != 0:
        for path in binds:
            args += ["--ro-bind", str(path), str(path)]
        return [*args, "--", *argv], None
    # root: drop to nobody; stage the paths where nobody can reach them (the work folder too)
    stage = Path(tempfile.mkdtemp(prefix="labkit-stage-", dir="/tmp"))
    stage.chmod(0o755)
    (stage / "work").mkdir()
    mounts = [f"mount --bind {shlex.quote(str(work))} {stage / 'work'}"]
    at = args.index("--bind") + 1
    args[at] = str(stage / "work")
    for index, path in enumerate(binds):
        (stage / str(index)).mkdir()
        mounts.append(f"mount --bind {shlex.quote(str(path))} {stage / str(index)}")
        args += ["--ro-bind", str(stage / str(index)), str(path)]
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
    script = " && ".join([*mounts, "exec " + shlex.join([*drop, *args, "--", *argv])])
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script], stage


def prepare_work(folder: Path) -> None:
    """Make ``folder`` (and what is in it) writable by the sandbox user."""
    if os.geteuid() == 0:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)


def check() -> None:
    """Raise :class:`SandboxUnavailable` unless a sandbox can start here."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed; labkit grade runs every submission in its sandbox.\n"
            f"  Install it:  {INSTALL}\n"
            "  (Only for submissions you trust: --no-sandbox grades without one.)")
    work = Path(tempfile.mkdtemp(prefix="labkit-probe-"))
    stage = None
    try:
        prepare_work(work)
        argv, stage = command([sys.executable, "-c", "import os; os.listdir('.')"], work=work,
                              env={"PATH": "/usr/bin:/bin"})
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if stage:
            shutil.rmtree(stage, ignore_errors=True)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no message"]
        raise SandboxUnavailable(
            f"bubblewrap is installed but cannot start a sandbox here: {why[0]}\n"
            "  It needs user namespaces (sysctl kernel.unprivileged_userns_clone=1; in Docker, run the "
            "container with --security-opt seccomp=unconfined or use a VM).\n"
            "  (Only for submissions you trust: --no-sandbox grades without one.)")
