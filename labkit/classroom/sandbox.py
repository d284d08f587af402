"""Run a command in a bubblewrap sandbox with limits of its own, so no sandbox can starve another.

:class:`Sandbox` wraps an argument list so that it runs under ``bwrap`` (Debian package
``bubblewrap``) with

- no network (only an unconfigured loopback), and new pid, ipc, uts, cgroup and user namespaces;
- read-only views of the system (``/usr``, ``/etc``), of this Python and its virtual
  environment, of the paths the caller names (labkit and the course models) and of a folder
  of inputs (at :data:`INPUT`), and nothing else of the machine: no home folder, no
  repository, no reference notebooks, no grader state, no other submission;
- private, size-limited tmpfs folders: the working folder (:data:`INSIDE`), ``/tmp`` and
  ``/dev/shm``; the rest of the sandbox's own tree (``/``, ``/dev``) is read-only, so those
  three are all it can write, and they vanish with it;
- limits of its own (:class:`Limits`), so that a neighbour that forks, allocates or writes up
  to its limits costs the next sandbox nothing:

  * *processes and memory*: a cgroup of its own where this machine has a writable cgroup
    hierarchy (v2 with the ``memory`` and ``pids`` controllers, or the v1 ``memory`` and
    ``pids`` hierarchies): ``pids.max`` and a memory limit for all its processes together,
    its tmpfs folders included (the kernel charges tmpfs pages to the cgroup that writes
    them).  Without one, ``RLIMIT_NPROC`` (counted in the sandbox's own user namespace, so
    per sandbox) and ``RLIMIT_AS`` per process are what is left: :func:`isolation` says
    which applies.
  * *a uid of its own* when the grader runs as root (``setpriv``): drawn from a private
    range and held with a lock file for the sandbox's life, so per-uid counters are per
    sandbox.  bwrap then cannot reach paths inside folders that only root may enter
    (``/root/.pyenv``, say), so those are first bind-mounted, read-only and privately, into
    a staging folder in a mount namespace of their own (``unshare``), where the tmpfs
    folders are mounted too.  Without root, bwrap's user namespace keeps the grader's uid.
  * the size of any file it writes, and no core dumps.

bwrap is used because it is the maintained, unprivileged sandbox that Flatpak builds on;
nothing in the Python ecosystem does this job.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import itertools
import os
import resource
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "INPUT",
    "INSIDE",
    "INSTALL",
    "Limits",
    "Sandbox",
    "SandboxUnavailable",
    "check",
    "isolation",
    "mechanism",
]

INSTALL = "sudo apt-get install -y bubblewrap"
INSIDE = Path("/home/student")  # the sandbox's working folder (a private tmpfs)
INPUT = Path("/grading")  # the caller's inputs, read-only
# private uids for sandboxes of a root grader: above systemd's container range (which ends at
# 0x6FFFFFFF), below its foreign-uid range (0x7FFE0000) and clear of any login
UID_FIRST, UID_COUNT = 0x7A000000, 1 << 16
_LOCKS = Path("/run/labkit-sandbox")  # one lock file per uid in use (root only)
_CLEANUP_TIMEOUT = 5.0  # s to wait for a killed sandbox's processes to leave its cgroup


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces here; the message says what to do."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox.

    memory_mb: memory of all its processes together (cgroup; its tmpfs folders count too),
    and the address space of each process (``RLIMIT_AS``); processes: processes and threads;
    file_mb: the largest file it may write; work_mb / tmp_mb / shm_mb: the size of its
    working folder, ``/tmp`` and ``/dev/shm``; inodes: files and folders in each of those.
    """

    memory_mb: int = 6144
    processes: int = 512
    file_mb: int = 256
    work_mb: int = 512
    tmp_mb: int = 512
    shm_mb: int = 64
    inodes: int = 65536


# -- cgroups ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Hierarchy:
    """Where this process may make child cgroups with memory and pids limits."""

    version: int
    folders: tuple[Path, ...]  # v2: the one folder; v1: the memory folder, then the pids folder


def _mounts() -> list[tuple[str, str, str, list[str]]]:
    """The cgroup file systems mounted here: (root inside the hierarchy, mount point, type, options)."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        kind, _, options = line.split(" - ", 1)[1].split(" ")[:3]
        if kind in ("cgroup", "cgroup2"):
            found.append((fields[3], fields[4], kind, options.split(",")))
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per controller ("" for the v2 hierarchy)."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name.removeprefix("name=")] = path
    return own


def _folder(mount_root: str, point: str, own: str) -> Path:
    """The folder of cgroup ``own`` under a hierarchy mounted at ``point`` from ``mount_root``."""
    inside = own if mount_root == "/" else own.removeprefix(mount_root)
    return Path(point) / inside.lstrip("/")


def _can_make_children(folder: Path) -> bool:
    """Whether a child cgroup can be made (and removed) in ``folder``: a real try."""
    probe = folder / f"labkit-probe-{os.getpid()}-{threading.get_ident()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


def _v2(mounts: list[tuple[str, str, str, list[str]]], own: dict[str, str]) -> _Hierarchy | None:
    for root, point, kind, _ in mounts:
        if kind != "cgroup2" or "" not in own:
            continue
        folder = _folder(root, point, own[""])
        control = folder / "cgroup.subtree_control"
        try:
            enabled = set(control.read_text().split())
            if not {"memory", "pids"} <= enabled:
                # fails (EBUSY) where this cgroup holds processes itself, as a container's root does
                control.write_text("+memory +pids")
        except OSError:
            continue
        if _can_make_children(folder):
            return _Hierarchy(2, (folder,))
    return None


def _v1(mounts: list[tuple[str, str, str, list[str]]], own: dict[str, str]) -> _Hierarchy | None:
    folders = []
    for controller in ("memory", "pids"):
        mount = next(((r, p) for r, p, kind, opts in mounts if kind == "cgroup" and controller in opts), None)
        if mount is None or controller not in own:
            return None
        folders.append(_folder(*mount, own[controller]))
    return _Hierarchy(1, tuple(folders)) if all(map(_can_make_children, folders)) else None


def _sweep(where: _Hierarchy) -> None:
    """Remove the empty cgroups that graders which are gone left behind (killed, say)."""
    for folder in where.folders:
        for child in folder.glob("labkit-*"):
            pid = child.name.split("-")[1] if child.name.count("-") >= 2 else ""
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    child.rmdir()


@functools.cache
def _hierarchy() -> _Hierarchy | None:
    """The writable cgroup hierarchy that can hold sandboxes here, or None (then rlimits only)."""
    try:
        mounts, own = _mounts(), _own_cgroups()
    except (OSError, ValueError):
        return None
    where = _v2(mounts, own) or _v1(mounts, own)
    if where:
        _sweep(where)
    return where


def _write(path: Path, value: int, *, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except FileNotFoundError:
        if not optional:
            raise


class _Cgroup:
    """One sandbox's cgroup (a folder in each hierarchy), made before it starts."""

    _numbers = itertools.count()

    def __init__(self, where: _Hierarchy, limits: Limits) -> None:
        name = f"labkit-{os.getpid()}-{next(self._numbers)}"
        self.folders = [folder / name for folder in where.folders]
        for folder in self.folders:
            folder.mkdir()
        try:
            memory = limits.memory_mb << 20
            if where.version == 2:
                (folder,) = self.folders
                _write(folder / "memory.max", memory)
                _write(folder / "memory.swap.max", 0, optional=True)
                _write(folder / "pids.max", limits.processes)
            else:
                memory_folder, pids_folder = self.folders
                _write(memory_folder / "memory.limit_in_bytes", memory)
                _write(memory_folder / "memory.memsw.limit_in_bytes", memory, optional=True)
                _write(pids_folder / "pids.max", limits.processes)
        except OSError:
            self.close()
            raise
        self._procs = [str(folder / "cgroup.procs") for folder in self.folders]

    def join(self) -> None:
        """Move this process into the cgroup (called in the child, before it execs: plain
        system calls only, as between fork and exec nothing else is safe)."""
        pid = str(os.getpid()).encode()
        for path in self._procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def members(self) -> set[int]:
        pids: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                pids |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return pids

    def close(self) -> None:
        """Kill whatever is left in it and remove it (retrying while the killed processes exit)."""
        deadline = time.monotonic() + _CLEANUP_TIMEOUT
        while self.folders:
            for pid in self.members():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for folder in list(self.folders):
                try:
                    folder.rmdir()
                    self.folders.remove(folder)
                except FileNotFoundError:
                    self.folders.remove(folder)
                except OSError:
                    pass
            if self.folders and time.monotonic() > deadline:
                return  # left for _sweep: a process that cannot die (in D state) holds it
            if self.folders:
                time.sleep(0.02)


# -- uids -----------------------------------------------------------------------------------------------
def _uid_range() -> range:
    """The private uids: UID_FIRST.. where this user namespace maps them, else the top of the
    largest mapped extent (a container that maps only 65536 uids, say), below nobody."""
    wanted = range(UID_FIRST, UID_FIRST + UID_COUNT)
    extents = []
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/uid_map").read_text().splitlines():
            first, _, count = map(int, line.split())
            extents.append(range(first, first + count))
    if not extents or any(wanted.start in e and wanted[-1] in e for e in extents):
        return wanted
    largest = max(extents, key=len)
    top = min(largest.stop, 65534) if 65534 in largest else largest.stop
    return range(max(largest.start + 1000, top - 4096), top)


def _lock_folder() -> Path:
    """The root-only folder of uid lock files (refused if anyone else could write to it)."""
    folder = _LOCKS if _LOCKS.parent.is_dir() else Path(tempfile.gettempdir()) / "labkit-sandbox-root"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise SandboxUnavailable(
            f"{folder} is not a folder that only root can write to; the grader keeps its uid locks "
            f"there.\n  Remove it (sudo rm -rf {folder}) and grade again."
        )
    return folder


def _live_processes() -> list[tuple[int, int]]:
    """(pid, uid) of the live processes here (zombies are dead already: their parent reaps them)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            uid = entry.stat(follow_symlinks=False).st_uid
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in "ZX":
            found.append((int(entry.name), uid))
    return found


class _Uid:
    """A uid of one sandbox's own, held (an exclusive lock on its file) until :meth:`release`.

    Locks, not a counter in this process: two graders on one machine share the range."""

    _lock = threading.Lock()

    def __init__(self) -> None:
        folder = _lock_folder()
        with self._lock:
            running = {uid for _, uid in _live_processes()}
            for uid in _uid_range():
                if uid in running:
                    continue
                fd = os.open(
                    folder / f"{uid}.lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600
                )
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self.uid, self._fd = uid, fd
                return
        raise SandboxUnavailable(
            f"every private sandbox uid ({len(_uid_range())}) is in use: grade with "
            "fewer --jobs, or wait for the other graders on this machine"
        )

    def release(self) -> None:
        """Kill any process still running as this uid (none, normally: the sandbox's pid
        namespace ends with it), then free the uid."""
        for _ in range(50):
            left = [pid for pid, uid in _live_processes() if uid == self.uid]
            if not left:
                break
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        os.close(self._fd)  # the lock file stays: unlinking it would race with the next taker


# -- the command line -----------------------------------------------------------------------------------
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


@functools.cache
def _bwrap_sizes() -> bool:
    """Whether this bwrap has ``--size`` (0.8 and later; Ubuntu 22.04 ships 0.6)."""
    try:
        done = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in done.stdout + done.stderr


def _private_folders(limits: Limits) -> list[tuple[str, int, int, str]]:
    """(where, bytes, inodes, mode) of the sandbox's writable tmpfs folders."""
    return [
        ("/tmp", limits.tmp_mb << 20, limits.inodes, "1777"),
        ("/dev/shm", limits.shm_mb << 20, 1024, "1777"),
        (str(INSIDE), limits.work_mb << 20, limits.inodes, "0700"),
    ]


def _give(folder: Path, uid: int) -> None:
    """Hand ``folder`` and what is in it (not following links) to ``uid``."""
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, uid, follow_symlinks=False)


class Sandbox:
    """One sandbox: its uid, cgroup and staging folder, held from creation until :meth:`close`.

    ``command(argv)`` is the command line that runs ``argv`` in it; pass :meth:`preexec` as
    ``preexec_fn`` to :class:`subprocess.Popen` (it moves the child into the cgroup and sets
    the rlimits); call :meth:`close` once the process is gone (it kills what is left).

    readonly: extra paths visible, read-only, at their own location (labkit, models);
    inputs: a folder shown read-only at :data:`INPUT`; env: the sandbox's whole environment
    (nothing else is inherited); contain: False runs ``argv`` as it is, with the cgroup and
    rlimits only (``--no-sandbox``, for trusted work).
    """

    def __init__(
        self,
        limits: Limits,
        *,
        readonly: Iterable[Path] = (),
        inputs: Path | None = None,
        env: Mapping[str, str] | None = None,
        contain: bool = True,
    ) -> None:
        self.limits, self.contain = limits, contain
        self._readonly = _minimal([*_python_paths(), *readonly]) if contain else []
        self._inputs, self._env = inputs, dict(env or {})
        self._cgroup: _Cgroup | None = None
        self._uid: _Uid | None = None
        self._stage: Path | None = None
        try:
            where = _hierarchy()
            self._cgroup = _Cgroup(where, limits) if where else None
            if contain and os.geteuid() == 0:
                self._uid = _Uid()
                if inputs is not None:
                    _give(inputs, self._uid.uid)
        except BaseException:
            self.close()
            raise

    @property
    def uid(self) -> int | None:
        """The sandbox's own uid (None when the grader is not root: bwrap keeps the caller's)."""
        return self._uid.uid if self._uid else None

    def command(self, argv: list[str]) -> list[str]:
        """The command line that runs ``argv`` in this sandbox."""
        if not self.contain:
            return list(argv)
        # RLIMIT_NPROC is set inside, so that it counts in the sandbox's own user namespace:
        # set outside, every sandbox of one uid would share one count
        inner = ["prlimit", f"--nproc={self.limits.processes}", "--", *argv]
        if self._uid is None:
            return self._bwrap(self._folders_unprivileged(), [(p, p) for p in self._readonly], inner)
        return self._as_root(inner)

    def preexec(self) -> None:
        """In the child, before it execs: join the cgroup, set the rlimits (inherited by
        everything it starts)."""
        if self._cgroup:
            self._cgroup.join()
        memory = self.limits.memory_mb << 20
        for kind, value in (
            (resource.RLIMIT_AS, memory),
            (resource.RLIMIT_FSIZE, self.limits.file_mb << 20),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(kind, (value, value))

    def close(self) -> None:
        """Kill anything left in the sandbox and free its cgroup, uid and staging folder."""
        if self._cgroup:
            self._cgroup.close()
            self._cgroup = None
        if self._uid:
            self._uid.release()
            self._uid = None
        if self._stage:
            shutil.rmtree(self._stage, ignore_errors=True)
            self._stage = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _folders_unprivileged(self) -> list[str]:
        args = []
        for where, size, _, _ in _private_folders(self.limits):
            args += (["--size", str(size)] if _bwrap_sizes() else []) + ["--tmpfs", where]
        return args

    def _bwrap(
        self,
        folders: list[str],
        readonly: list[tuple[Path, Path]],
        inner: list[str],
        extra: Iterable[str] = (),
    ) -> list[str]:
        """bwrap's arguments: the system, the private folders, the read-only paths, then the
        sandbox's own tree made read-only (last: bwrap makes the mount points in it first)."""
        args = [
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "sandbox",
            *_system_binds(),
            *extra,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--ro-bind-try",
            "/sys/devices/system/cpu",
            "/sys/devices/system/cpu",
            *folders,
            "--remount-ro",
            "/dev",
        ]
        for source, target in readonly:
            args += ["--ro-bind", str(source), str(target)]
        if self._inputs is not None:
            source = self._stage / "input" if self._stage else self._inputs
            args += ["--ro-bind", str(source), str(INPUT)]
        args += ["--remount-ro", "/", "--chdir", str(INSIDE), "--clearenv"]
        for key, value in self._env.items():
            args += ["--setenv", key, value]
        return [*args, "--", *inner]

    def _as_root(self, inner: list[str]) -> list[str]:
        """As root: mount the private folders and stage the read-only paths in a mount namespace
        of their own, then drop to the sandbox's uid and start bwrap."""
        uid = self.uid
        stage = self._stage = Path(tempfile.mkdtemp(prefix="labkit-stage-"))
        stage.chmod(0o755)
        mounts, readonly, folders = [], [], []
        for index, path in enumerate(self._readonly):
            (stage / str(index)).mkdir()
            mounts.append(f"mount --bind {shlex.quote(str(path))} {stage / str(index)}")
            readonly.append((stage / str(index), path))
        if self._inputs is not None:
            (stage / "input").mkdir()
            mounts.append(f"mount --bind {shlex.quote(str(self._inputs))} {stage / 'input'}")
        for index, (where, size, inodes, mode) in enumerate(_private_folders(self.limits)):
            folder = stage / f"tmpfs{index}"
            folder.mkdir()
            options = f"size={size},nr_inodes={inodes},mode={mode},uid={uid},gid={uid},nosuid,nodev"
            mounts.append(f"mount -t tmpfs -o {options} labkit {folder}")
            folders += ["--bind", str(folder), where]
        # a name for the uid: without one, getpass and friends fail in the sandbox
        (stage / "passwd").write_text(
            f"root:x:0:0::/root:/usr/sbin/nologin\nstudent:x:{uid}:{uid}:student:{INSIDE}:/usr/sbin/nologin\n"
        )
        (stage / "group").write_text(f"root:x:0:\nstudent:x:{uid}:\n")
        names = [
            "--ro-bind",
            str(stage / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(stage / "group"),
            "/etc/group",
        ]
        drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
        script = " && ".join(
            [*mounts, "exec " + shlex.join([*drop, *self._bwrap(folders, readonly, inner, names)])]
        )
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]


# -- what applies here ------------------------------------------------------------------------------------
def mechanism() -> str:
    """What bounds a sandbox's processes and memory here: "cgroup v2", "cgroup v1" or "rlimits"."""
    where = _hierarchy()
    return f"cgroup v{where.version}" if where else "rlimits"


def isolation(limits: Limits | None = None, *, contain: bool = True) -> str:
    """What limits each sandbox on this machine, in words (for the reports)."""
    limits = limits or Limits()
    kind = mechanism()
    if kind == "rlimits":
        whole = (
            f"no writable cgroup hierarchy here: {limits.processes} processes and threads "
            f"(RLIMIT_NPROC) and {limits.memory_mb} MiB of address space per process (RLIMIT_AS), "
            "not per sandbox"
        )
    else:
        whole = (
            f"a {kind} of its own: {limits.memory_mb} MiB of memory for all its processes and "
            f"its tmpfs folders together, {limits.processes} processes and threads"
        )
    if not contain:
        return f"no sandbox (--no-sandbox); {whole}"
    who = "a uid of its own" if os.geteuid() == 0 else "the grader's uid in a user namespace of its own"
    sized = os.geteuid() == 0 or _bwrap_sizes()
    folders = (
        f"/tmp {limits.tmp_mb} MiB, /dev/shm {limits.shm_mb} MiB, working folder {limits.work_mb} MiB"
        if sized
        else "/tmp, /dev/shm and the working folder in memory, unsized (this bwrap has "
        "no --size: install bubblewrap 0.8 or grade as root)"
    )
    return f"each sandbox: {who}; {whole}; {folders}; files up to {limits.file_mb} MiB"


def check() -> None:
    """Raise :class:`SandboxUnavailable` unless a sandbox can start here."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed; labkit grade runs every submission in its sandbox.\n"
            f"  Install it:  {INSTALL}\n"
            "  (Only for submissions you trust: --no-sandbox grades without one.)"
        )
    try:
        with Sandbox(Limits(), env={"PATH": "/usr/bin:/bin"}) as box:
            done = subprocess.run(
                box.command([sys.executable, "-c", "import os; os.listdir('.')"]),
                capture_output=True,
                text=True,
                timeout=60,
                preexec_fn=box.preexec,
            )
    except OSError as exc:
        why = [f"{exc.strerror or exc} ({errno.errorcode.get(exc.errno or 0, '?')})"]
    else:
        why = (
            []
            if done.returncode == 0
            else (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no message"]
        )
    if why:
        raise SandboxUnavailable(
            f"bubblewrap is installed but cannot start a sandbox here: {why[0]}\n"
            "  It needs user namespaces (sysctl kernel.unprivileged_userns_clone=1; in Docker, run the "
            "container with --security-opt seccomp=unconfined or use a VM).\n"
            "  (Only for submissions you trust: --no-sandbox grades without one.)"
        )
