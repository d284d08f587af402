"""labkit.setup(): banner, seeding, and a visible warning for the wrong MuJoCo."""

from __future__ import annotations

import random
import subprocess
import sys

import mujoco
import numpy as np
import pytest

import labkit


def test_banner_names_versions_and_backend(capsys):
    session = labkit.setup(seed=3)
    line = capsys.readouterr().out.strip()
    assert line == session.banner
    assert f"MuJoCo {mujoco.__version__} (baseline)" in line
    assert f"GL {session.backend.name}: {session.renderer}" in line
    assert session.renderer and "unavailable" not in session.renderer


def test_seeds_make_runs_repeatable():
    labkit.setup(seed=7, quiet=True)
    first = (np.random.rand(), random.random())
    session = labkit.setup(seed=7, quiet=True)
    assert (np.random.rand(), random.random()) == first
    assert session.rng.random() == np.random.default_rng(7).random()


def test_wrong_mujoco_version_warns_not_crashes(monkeypatch):
    monkeypatch.setattr(mujoco, "__version__", "3.15.0")
    with pytest.warns(labkit.BaselineVersionWarning, match=r"checked against MuJoCo 3\.17\.0"):
        session = labkit.setup(quiet=True)
    assert "NOT the course baseline 3.17.0" in session.banner


def test_import_labkit_does_not_import_mujoco():
    code = "import sys, labkit; assert 'mujoco' not in sys.modules; labkit.setup(quiet=True)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_mujoco_imported_first_is_called_out():
    code = "import mujoco, labkit, warnings; labkit.setup(quiet=True)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin"})
    assert "imported before labkit.setup()" in result.stderr
