"""The cloud paths: every chapter's first cell (Colab) and binder/ (Binder).

What a hosted runtime does with them is tested end to end by scripts/cloud_e2e.sh (a bare
Debian root, minutes, needs root); these tests check what can be checked here: the cell's
text, its URL and tag against pyproject.toml and labkit, that it does nothing extra outside a
hosted runtime, that it runs the installer inside one, and that binder/ agrees with
pyproject.toml and with the installer.
"""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

import labkit
from labkit.classroom.notebooks import course_notebooks
from labkit.gl import APT_PACKAGES
from labkit.session import KERNEL

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
URL = PYPROJECT["project"]["urls"]["Repository"]
FIRST_CELL = runpy.run_path(str(ROOT / "cloud" / "first_cell.py"), run_name="first_cell")
INSTALL = runpy.run_path(str(ROOT / "cloud" / "install.py"), run_name="install")
NOTEBOOKS = course_notebooks()


def first_code_cell(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return next(c for c in nb.cells if c.cell_type == "code").source


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LABKIT_CLOUD", "LABKIT_NOTEBOOK")}
    return {**env, **extra}


# -- the first cell --------------------------------------------------------------------------------
def test_url_and_tag_are_pyprojects_and_labkits():
    cell = FIRST_CELL["cell"]()
    assert URL == "https://github.com/mujoco-by-experiment/mujoco-by-experiment"
    assert re.findall(r'"(https://[^"]+)"', cell) == [URL], "the one URL, from pyproject.toml"
    assert re.findall(r'"--branch=([^"]+)"', cell) == [f"v{labkit.__version__}"], "the release tag"
    assert f'"{FIRST_CELL["CLONE"]}/cloud/install.py"' in cell and URL.endswith("/" + FIRST_CELL["CLONE"])
    assert cell.endswith("\nimport labkit\nlabkit.setup()")
    assert max(map(len, cell.splitlines())) <= 100, "code lines of the course are at most 100 wide"
    assert len(cell.splitlines()) <= 13, "the learner reads this cell first: keep it short"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_chapter_starts_with_the_same_cell(path):
    assert first_code_cell(path) == FIRST_CELL["cell"](), \
        "run `python cloud/first_cell.py --write`, then `labkit execute` on the chapters"


def test_outside_a_hosted_runtime_the_cell_only_starts_labkit(tmp_path):
    """nbval compares outputs: locally (and in the grader's sandbox, which passes no environment)
    the cell prints the banner and nothing else, and clones nothing."""
    done = subprocess.run([sys.executable, "-c", FIRST_CELL["cell"]()], cwd=tmp_path, env=clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"labkit {labkit.__version__} · MuJoCo") and done.stdout.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_in_a_hosted_runtime_the_cell_runs_the_installer_from_the_clone(tmp_path):
    """LABKIT_CLOUD=1 (as "google.colab" in sys.modules does on Colab): an existing clone is not
    cloned again; its cloud/install.py runs in the cell's own process, then labkit starts."""
    installer = tmp_path / FIRST_CELL["CLONE"] / "cloud" / "install.py"
    installer.parent.mkdir(parents=True)
    installer.write_text("import sys\nsys.modules['installer_ran'] = sys\nprint('installer ran')\n")
    after = "\nprint('in the same process:', 'installer_ran' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", FIRST_CELL["cell"]() + after], cwd=tmp_path,
                          env=clean_env(LABKIT_CLOUD="1", PATH="/nonexistent"),   # no git to run
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "installer ran" and lines[1].startswith("labkit ")
    assert lines[2] == "in the same process: True"


# -- the installer -----------------------------------------------------------------------------------
def test_installer_installs_pyprojects_requirements_but_not_the_runtimes_kernel():
    wanted = INSTALL["requirements"]((ROOT / "pyproject.toml").read_bytes())
    listed = [r.replace(" ", "") for r in PYPROJECT["project"]["dependencies"]]
    assert wanted == [r for r in listed if Requirement(r).name not in INSTALL["HOSTED"]]
    assert INSTALL["HOSTED"] <= {Requirement(r).name for r in listed}
    assert f"mujoco=={labkit.BASELINE_MUJOCO}" in wanted and any(r.startswith("numpy==") for r in wanted)


def test_installer_finds_modules_imported_at_another_version():
    pins = ["numpy==2.4.6", "imageio-ffmpeg==0.7.0", "ipywidgets>=8.1,<9"]
    old = type("Module", (), {"__version__": "2.0.2"})
    assert INSTALL["stale_pins"](pins, {"numpy": old}) == {"numpy": ("2.0.2", "2.4.6")}
    assert INSTALL["stale_pins"](pins, {"imageio_ffmpeg": type("M", (), {"__version__": "0.7.0"})}) == {}
    assert INSTALL["stale_pins"](pins, {"ipywidgets": old}) == {}, "only exact pins are compared"
    assert "Restart the session" in INSTALL["RESTART"]


def test_installer_gl_packages_are_binders_and_labkits():
    assert set(APT_PACKAGES["egl"]) <= set(INSTALL["GL_PACKAGES"])
    assert apt_txt() == INSTALL["GL_PACKAGES"]


# -- Binder ------------------------------------------------------------------------------------------
def apt_txt() -> list[str]:
    lines = (ROOT / "binder" / "apt.txt").read_text(encoding="utf-8").splitlines()
    return [p for line in lines for p in [line.partition("#")[0].strip()] if p]


def test_binder_requirements_pin_pyprojects_exactly():
    lines = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    pins = {r.name: r for line in lines if line.strip() and not line.startswith("#")
            for r in [Requirement(line)]}
    wanted = {r.name: r for r in map(Requirement, PYPROJECT["project"]["dependencies"])}
    assert set(pins) == set(wanted) - {"jupyterlab"}, "every dependency but Binder's own front end"
    for name, pin in pins.items():
        (spec,) = pin.specifier
        assert spec.operator == "==", f"{name}: an exact pin"
        assert wanted[name].specifier.contains(spec.version), f"{name}=={spec.version} against {wanted[name]}"


def test_binder_python_and_postbuild():
    runtime = (ROOT / "binder" / "runtime.txt").read_text(encoding="utf-8").strip()
    assert re.fullmatch(r"python-3\.\d+", runtime)
    minimum = PYPROJECT["project"]["requires-python"].removeprefix(">=")
    assert tuple(map(int, runtime.removeprefix("python-").split("."))) >= tuple(map(int, minimum.split(".")))
    post = ROOT / "binder" / "postBuild"
    assert os.access(post, os.X_OK), "repo2docker runs it as ./binder/postBuild"
    text = post.read_text(encoding="utf-8")
    assert f"--name {KERNEL} " in text and "--sys-prefix" in text, "the kernel the chapters name"
    assert "-e ." in text, "editable: labkit finds models/ in the checkout"
    assert {nbformat.read(p, as_version=4).metadata.kernelspec.name for p in NOTEBOOKS} == {KERNEL}


def test_readme_links_open_this_release():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    owner_repo = URL.removeprefix("https://github.com/")
    tag = f"v{labkit.__version__}"
    links = re.findall(r"\((https://(?:colab\.research\.google\.com|mybinder\.org)/[^)\s]+)\)", readme)
    assert links == [
        f"https://colab.research.google.com/github/{owner_repo}/blob/{tag}/course/00_start_here.ipynb",
        f"https://mybinder.org/v2/gh/{owner_repo}/{tag}?urlpath=lab/tree/course/00_start_here.ipynb",
    ]
    assert f"release {tag}" in readme


def test_the_landing_page_links_the_repository_of_pyproject():
    """course/index.md is read in JupyterLab too, so it names the repository literally."""
    landing = (ROOT / "course" / "index.md").read_text(encoding="utf-8")
    repositories = set(re.findall(r"\((https://github\.com/[^)\s]+)\)", landing))
    assert repositories == {URL}
