"""GL backend choice: the user's choice wins, a mismatch is fixed, absence is explained."""

from __future__ import annotations

import sys

import pytest

from labkit import gl


@pytest.fixture
def fresh(monkeypatch):
    """Pretend labkit has chosen nothing and mujoco is not imported yet."""
    monkeypatch.setattr(gl, "_CHOSEN", None)
    monkeypatch.delitem(sys.modules, "mujoco", raising=False)
    for var in ("MUJOCO_GL", "PYOPENGL_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(gl.platform, "system", lambda: "Linux")
    return monkeypatch


def test_user_choice_is_kept(fresh):
    fresh.setenv("MUJOCO_GL", "osmesa")
    backend = gl.choose()
    assert backend.name == "osmesa"
    assert gl.os.environ["PYOPENGL_PLATFORM"] == "osmesa"


def test_a_value_mujoco_would_refuse_is_explained_before_mujoco_loads(fresh):
    fresh.setenv("MUJOCO_GL", "nonexistent")
    refused = r"(?s)'nonexistent' is not a value MuJoCo accepts.*egl.*unset MUJOCO_GL"
    with pytest.raises(gl.GLUnavailable, match=refused):
        gl.choose()


def test_mismatched_pyopengl_platform_is_corrected(fresh):
    fresh.setenv("MUJOCO_GL", "egl")
    fresh.setenv("PYOPENGL_PLATFORM", "osmesa")
    backend = gl.choose()
    assert gl.os.environ["PYOPENGL_PLATFORM"] == "egl"
    assert any("PYOPENGL_PLATFORM=osmesa" in fix for fix in backend.fixes)


def test_egl_preferred_then_osmesa(fresh):
    fresh.setattr(gl, "_PROBES", {"egl": lambda: "libEGL.so.1 not found", "osmesa": lambda: None})
    backend = gl.choose()
    assert backend.name == "osmesa"
    assert backend.problems == ("egl: libEGL.so.1 not found",)
    assert gl.os.environ["MUJOCO_GL"] == "osmesa"


def test_no_backend_is_explained_with_the_fix(fresh):
    fresh.setattr(gl, "_PROBES", {"egl": lambda: "libEGL.so.1 not found (libegl1)",
                                  "osmesa": lambda: "libOSMesa not found (libosmesa6)"})
    backend = gl.choose()
    assert not backend.usable
    assert gl.os.environ["MUJOCO_GL"] == "disabled"  # mujoco still imports
    with pytest.raises(gl.GLUnavailable) as info:
        gl.require()
    message = str(info.value)
    assert "libEGL.so.1 not found" in message and "libOSMesa not found" in message
    assert "apt-get install" in message and "libosmesa6" in message and "libegl1" in message


def test_macos_keeps_mujocos_default(fresh):
    fresh.setattr(gl.platform, "system", lambda: "Darwin")
    assert gl.choose().name == "cgl"
    assert "MUJOCO_GL" not in gl.os.environ


def test_this_machine_has_a_working_backend():
    # conftest ran labkit.setup(); the suite renders, so a backend must work here.
    assert gl.choose().usable
