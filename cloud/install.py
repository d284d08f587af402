"""Install the course in a hosted notebook runtime (Google Colab), on the CPU: no GPU needed.

Every chapter's first code cell, in a hosted runtime only (``"google.colab"`` imported, or
``LABKIT_CLOUD=1``), clones the repository at the course's release tag into
``./mujoco-by-experiment`` and runs this file (``runpy.run_path``) in the notebook's own kernel,
which

1. installs the software OpenGL libraries with apt (Mesa's llvmpipe renders on the CPU),
2. installs the course's dependencies, pinned as in ``pyproject.toml``, with pip, except the
   kernel and the front end, which belong to the runtime, then the course package itself from
   the clone (editable: labkit finds the clone's ``models/``),
3. puts the clone first on ``sys.path``, so that ``import labkit`` works without a restart,
4. stops, saying what to do, when the runtime had already imported a package that pip has just
   replaced (Colab imports numpy as it starts): restart the session, run the cell again.

Running the cell again is quick: the pip step is skipped while ``.cloud-installed`` in the
clone matches ``pyproject.toml`` and the Python.  Outside a hosted runtime nothing runs this.
``python cloud/install.py`` does steps 1 and 2 from a terminal.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata as metadata
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent   # the clone
#: Mesa's EGL and OpenGL (the same as binder/apt.txt; ./run.sh installs the first three, which
#: pull in libegl-mesa0 on Debian; named here for Ubuntu images that skip recommended packages)
GL_PACKAGES = ["libegl1", "libegl-mesa0", "libopengl0", "libgl1-mesa-dri"]
#: the runtime's own kernel and front end: never replaced
HOSTED = {"ipykernel", "jupyterlab"}
RESTART = ("Restart the session (Colab: Runtime → Restart session), then run this cell again: "
           "it takes a few seconds the second time.")


def requirements(pyproject: bytes) -> list[str]:
    """The course's dependencies from pyproject.toml, less the runtime's own (:data:`HOSTED`)."""
    listed = tomllib.loads(pyproject.decode())["project"]["dependencies"]
    return [r.replace(" ", "") for r in listed
            if re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() not in HOSTED]


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def imported_distributions() -> dict[str, str]:
    """{distribution: installed version} of every distribution with a module imported now."""
    owners = metadata.packages_distributions()
    names = {name.partition(".")[0] for name in list(sys.modules)}
    return {dist: version(dist) for name in names for dist in owners.get(name, ())}


def stale_pins(pinned: list[str], modules: dict[str, object]) -> dict[str, tuple[str, str]]:
    """{name: (loaded, pinned)} for each ``name==version`` whose module is loaded at another version."""
    stale = {}
    for requirement in pinned:
        name, _, pin = requirement.partition("==")
        loaded = getattr(modules.get(name.replace("-", "_")), "__version__", pin)
        if pin and loaded != pin:
            stale[name] = (loaded, pin)
    return stale


def step(what: str, command: list[str], said: list[str], env: dict[str, str] | None = None) -> None:
    """Run one install command quietly, print its time; on failure print its output and raise."""
    if not said:
        print("Installing the course for this hosted runtime (on the CPU: no GPU needed)")
        said.append(what)
    print(f"  {what} ...", end=" ", flush=True)
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if done.returncode:
        print("failed\n" + (done.stdout + done.stderr)[-3000:])
        raise RuntimeError(f"the course could not be installed here: {' '.join(command)} failed")
    print(f"{time.monotonic() - start:.0f} s", flush=True)


def main() -> None:
    __tracebackhide__ = True   # IPython shows the message, not this frame
    said: list[str] = []
    if shutil.which("dpkg-query"):   # elsewhere labkit.setup() says whether rendering works
        missing = [p for p in GL_PACKAGES if "install ok installed" not in subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout]
        if missing:
            sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
            apt = {"DEBIAN_FRONTEND": "noninteractive"}
            step("apt-get update", [*sudo, "apt-get", "update", "-q"], said, apt)
            step(f"software OpenGL ({' '.join(missing)})",
                 [*sudo, "apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], said, apt)

    pyproject = (ROOT / "pyproject.toml").read_bytes()
    wanted = requirements(pyproject)
    stamp = ROOT / ".cloud-installed"
    done = f"{hashlib.sha256(pyproject).hexdigest()} {sys.version.split()[0]}"
    stale: dict[str, tuple[str, str]] = {}
    if not (stamp.exists() and stamp.read_text() == done):
        before = imported_distributions()
        pip = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
               "--no-warn-script-location", "--root-user-action=ignore"]
        mujoco = ", ".join(r for r in wanted if r.startswith("mujoco=="))
        step(f"{mujoco} and the course's pinned packages (pip)", [*pip, *wanted], said)
        step(f"the course package from {ROOT.name}/", [*pip, "--no-deps", "-e", str(ROOT)], said)
        importlib.invalidate_caches()
        stale = {d: (old, version(d)) for d, old in before.items() if version(d) != old}
        stamp.write_text(done)
    stale.update(stale_pins(wanted, sys.modules))   # a rerun without the restart
    if stale:
        which = ", ".join(f"{d} {old} (now {new})" for d, (old, new) in sorted(stale.items()))
        raise RuntimeError(f"This runtime had already imported {which} before the course installed "
                           f"its own versions. {RESTART}")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    importlib.invalidate_caches()


if __name__ in ("__main__", "<run_path>"):   # run by the first cell (runpy) or from a terminal
    main()
