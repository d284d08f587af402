"""``labkit doctor``: check the environment and say how to fix what is wrong."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass

from . import gl
from .session import BASELINE_MUJOCO, KERNEL

__all__ = ["Finding", "diagnose"]

_RENDER_TEST = """
import labkit
labkit.setup(quiet=True)
model, data = labkit.load('<mujoco><worldbody><light pos="0 0 1"/>'
                          '<geom type="sphere" size=".1"/></worldbody></mujoco>')
image = labkit.snapshot(model, data, width=64, height=48)
assert image.max() > 0, "the rendered image is black"
from OpenGL import GL
print(GL.glGetString(GL.GL_RENDERER).decode())
"""


@dataclass(frozen=True)
class Finding:
    """One line of the report: what was checked, whether it is fine, and the fix."""

    topic: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _python() -> Finding:
    ok = sys.version_info >= (3, 11)
    return Finding("Python", ok, platform.python_version(),
                   "" if ok else "install Python 3.11 or newer and rerun ./run.sh")


def _mujoco() -> Finding:
    try:
        import mujoco
    except ImportError as exc:
        return Finding("MuJoCo", False, f"not importable ({exc})",
                       f"pip install mujoco=={BASELINE_MUJOCO}  (or rerun ./run.sh)")
    ok = mujoco.__version__ == BASELINE_MUJOCO
    return Finding("MuJoCo", ok, f"{mujoco.__version__} (course baseline {BASELINE_MUJOCO})",
                   "" if ok else f"pip install mujoco=={BASELINE_MUJOCO}  (or rerun ./run.sh)")


def _render(backend: str) -> Finding:
    env = {**os.environ, "MUJOCO_GL": backend}
    env.pop("PYOPENGL_PLATFORM", None)
    if platform.system() == "Linux" and backend in ("egl", "osmesa"):
        problem = gl.probe(backend)
        if problem:
            return Finding(f"GL {backend}", False, problem,
                           "sudo apt-get install -y " + " ".join(gl.APT_PACKAGES[backend]),
                           required=False)
    result = subprocess.run([sys.executable, "-c", _RENDER_TEST], env=env, capture_output=True,
                            text=True, timeout=120)
    if result.returncode == 0:
        return Finding(f"GL {backend}", True, f"renders ({result.stdout.strip()})", required=False)
    last = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
    return Finding(f"GL {backend}", False, f"fails to render: {last}", "", required=False)


def _gl() -> list[Finding]:
    system = platform.system()
    backends = ["egl", "osmesa"] if system == "Linux" else ["cgl"] if system == "Darwin" else ["glfw"]
    findings = [_render(b) for b in backends]
    if os.environ.get("MUJOCO_GL"):
        findings.append(_render(os.environ["MUJOCO_GL"].lower()))
    working = [f for f in findings if f.ok]
    summary = Finding(
        "rendering", bool(working),
        f"{len(working)} of {len(findings)} backends work" +
        (f"; labkit will use {working[0].topic.split()[-1]}" if working else ""),
        "" if working else gl.install_hint())
    return [*findings, summary]


def _ffmpeg() -> Finding:
    try:
        import imageio_ffmpeg
        import mediapy
        import numpy as np

        exe = imageio_ffmpeg.get_ffmpeg_exe()
        mediapy.set_ffmpeg(exe)
        data = mediapy.compress_video(np.zeros((4, 16, 16, 3), np.uint8), fps=10)
    except Exception as exc:  # any failure here means no inline videos
        return Finding("ffmpeg", False, f"cannot encode video ({exc})",
                       "pip install imageio-ffmpeg==0.7.0  (or rerun ./run.sh)")
    return Finding("ffmpeg", True, f"encodes video ({len(data)} bytes test clip; {exe})")


def _kernel() -> Finding:
    from jupyter_client.kernelspec import KernelSpecManager


    specs = KernelSpecManager().find_kernel_specs()
    ok = KERNEL in specs
    return Finding("Jupyter kernel", ok, specs.get(KERNEL, f"no kernel named {KERNEL!r}"),
                   "" if ok else f"{sys.executable} -m ipykernel install --sys-prefix --name {KERNEL}"
                   f" --display-name 'MuJoCo by Experiment'  (./run.sh does this)")


def _models() -> Finding:
    from .models import ModelError, load, model_names, models_dir

    names = model_names()
    if not names:
        return Finding("course models", False, f"none found in {models_dir()}",
                       "run labkit from a clone of the course, or set LABKIT_MODELS")
    broken = []
    for name in names:
        try:
            load(name)
        except ModelError as exc:
            broken.append(f"{name}: {str(exc).splitlines()[0]}")
    return Finding("course models", not broken,
                   f"{len(names) - len(broken)} of {len(names)} compile" +
                   (f" ({'; '.join(broken)})" if broken else ""),
                   "" if not broken else "fix the files named above")


def diagnose() -> list[Finding]:
    """Run every check; nothing is changed on the machine."""
    findings = [_python(), _mujoco()]
    if findings[-1].ok or "not importable" not in findings[-1].detail:
        findings += _gl()
        findings.append(_models())
    findings += [_ffmpeg(), _kernel()]
    return findings
