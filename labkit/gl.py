"""Choose a headless OpenGL backend for MuJoCo *before* ``mujoco`` is imported.

MuJoCo's Python package reads ``MUJOCO_GL`` once, when it is imported, and PyOpenGL
fixes its platform (``PYOPENGL_PLATFORM``) on its own first import.  A backend therefore
cannot be tried, found broken and swapped inside one process.  This module probes the
system libraries directly with :mod:`ctypes` (no PyOpenGL, no MuJoCo), so that the
choice is made once and made right.  No library on PyPI does this probing; the
probes mirror what ``mujoco.egl`` and ``mujoco.osmesa`` do when they create a context.

This module is the only place in labkit that keeps process state: the chosen backend.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import sys
from dataclasses import dataclass

from .errors import GLUnavailable

__all__ = ["Backend", "GLUnavailable", "choose", "failure_message", "install_hint", "probe", "renderer_name",
           "require"]

# The Debian/Ubuntu packages that provide each backend (no pip package does).
APT_PACKAGES = {
    "egl": ["libegl1", "libopengl0", "libgl1-mesa-dri"],
    "osmesa": ["libosmesa6"],
}




@dataclass(frozen=True)
class Backend:
    """The outcome of choosing a GL backend.

    name: the ``MUJOCO_GL`` value in force (``"egl"``, ``"osmesa"``, ``"cgl"``, ``"glfw"``,
        or ``"disabled"`` when nothing works).
    reason: how it was chosen, in words (shown by ``labkit doctor``).
    problems: what was wrong with each backend that was tried and rejected.
    fixes: environment settings labkit corrected (shown once as a warning).
    """

    name: str
    reason: str
    problems: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        return self.name != "disabled"


_CHOSEN: Backend | None = None


def install_hint() -> str:
    """The command that installs the software GL libraries on Debian/Ubuntu."""
    pkgs = " ".join(APT_PACKAGES["egl"] + APT_PACKAGES["osmesa"])
    return f"sudo apt-get install -y {pkgs}"


def _load(name: str) -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(name)
    except OSError:
        found = ctypes.util.find_library(name.removeprefix("lib").split(".so")[0])
        if found:
            try:
                return ctypes.CDLL(found)
            except OSError:
                return None
        return None


def _probe_egl() -> str | None:
    """Return None if an EGL device display initialises, else what is missing."""
    egl = _load("libEGL.so.1")
    if egl is None:
        return "libEGL.so.1 not found (Debian/Ubuntu package libegl1)"
    if _load("libOpenGL.so.0") is None:
        return "libOpenGL.so.0 not found (package libopengl0)"
    get_proc = egl.eglGetProcAddress
    get_proc.restype = ctypes.c_void_p
    get_proc.argtypes = [ctypes.c_char_p]
    query_ptr = get_proc(b"eglQueryDevicesEXT")
    display_ptr = get_proc(b"eglGetPlatformDisplayEXT")
    if not query_ptr or not display_ptr:
        return "EGL lacks device enumeration (EGL_EXT_device_enumeration)"
    query_devices = ctypes.CFUNCTYPE(
        ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int)
    )(query_ptr)
    get_display = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p)(
        display_ptr
    )
    devices = (ctypes.c_void_p * 16)()
    count = ctypes.c_int(0)
    if not query_devices(16, devices, ctypes.byref(count)) or count.value == 0:
        return "EGL found no rendering device (package libgl1-mesa-dri gives a software one)"
    egl.eglInitialize.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    egl.eglTerminate.argtypes = [ctypes.c_void_p]
    platform_device = 0x313F  # EGL_PLATFORM_DEVICE_EXT
    for i in range(count.value):
        display = get_display(platform_device, devices[i], None)
        if display and egl.eglInitialize(display, None, None):
            egl.eglTerminate(display)
            return None
    return "no EGL device could be initialised (package libgl1-mesa-dri gives a software one)"


def _probe_osmesa() -> str | None:
    """Return None if an OSMesa context can be created, else what is missing."""
    lib = _load("libOSMesa.so.8") or _load("libOSMesa.so")
    if lib is None:
        return "libOSMesa not found (Debian/Ubuntu package libosmesa6)"
    lib.OSMesaCreateContextExt.restype = ctypes.c_void_p
    lib.OSMesaCreateContextExt.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.c_int,
                                           ctypes.c_int, ctypes.c_void_p]
    lib.OSMesaDestroyContext.argtypes = [ctypes.c_void_p]
    osmesa_rgba = 0x1908  # GL_RGBA
    context = lib.OSMesaCreateContextExt(osmesa_rgba, 24, 8, 0, None)
    if not context:
        return "OSMesa could not create a context"
    lib.OSMesaDestroyContext(context)
    return None


_PROBES = {"egl": _probe_egl, "osmesa": _probe_osmesa}


def renderer_name(backend: Backend) -> str | None:
    """GL_RENDERER of the *current* GL context (e.g. ``"llvmpipe (LLVM 15.0.6, 256 bits)"``),
    or None when no context is current.

    On the Linux backends this calls ``glGetString`` through :mod:`ctypes`: importing
    PyOpenGL's ``OpenGL.GL`` for this one call would add about 60 ms to every notebook's
    first cell.  Elsewhere (``glfw``, ``cgl``) PyOpenGL does it.
    """
    lib = None
    if backend.name == "egl":
        lib = _load("libOpenGL.so.0")
    elif backend.name == "osmesa":
        lib = _load("libOSMesa.so.8") or _load("libOSMesa.so")
    if lib is None:
        from OpenGL import GL

        name = GL.glGetString(GL.GL_RENDERER)
    else:
        lib.glGetString.restype = ctypes.c_char_p
        lib.glGetString.argtypes = [ctypes.c_uint]
        name = lib.glGetString(0x1F01)          # GL_RENDERER
    if not name:
        return None
    return name.decode() if isinstance(name, bytes) else str(name)


def probe(name: str) -> str | None:
    """Test one Linux backend (``"egl"`` or ``"osmesa"``) without importing MuJoCo.

    Returns None when it works, otherwise a sentence naming what is missing.
    """
    if name not in _PROBES:
        raise ValueError(f"can only probe {sorted(_PROBES)}, not {name!r}")
    try:
        return _PROBES[name]()
    except (OSError, AttributeError) as exc:  # a broken or partial driver install
        return f"{name} probe failed: {exc}"


def _set(name: str) -> None:
    os.environ["MUJOCO_GL"] = name
    pyopengl = {"egl": "egl", "osmesa": "osmesa"}.get(name)
    if pyopengl:
        os.environ["PYOPENGL_PLATFORM"] = pyopengl


def _accepted_by_mujoco(system: str) -> tuple[str, ...]:
    """The MUJOCO_GL values MuJoCo's Python package accepts on ``system`` (as its
    rendering/classic/gl_context.py checks them at import)."""
    accepted = ("disable", "disabled", "off", "false", "0", "enable", "enabled", "on", "true", "1", "glfw")
    by_system = {"Linux": ("glx", "egl", "osmesa"), "Windows": ("wgl",), "Darwin": ("cgl",)}
    return accepted + by_system.get(system, ())


def choose() -> Backend:
    """Choose the GL backend once per process and export it in the environment.

    Order: a ``MUJOCO_GL`` the user set is kept (and ``PYOPENGL_PLATFORM`` made to agree
    with it); on macOS MuJoCo's own default (CGL) is kept; on Linux EGL is tried, then
    OSMesa.  If neither works, ``MUJOCO_GL`` is set to ``"disabled"`` so that MuJoCo still
    imports, and rendering raises :class:`GLUnavailable` with the fix.
    """
    global _CHOSEN
    if _CHOSEN is not None:
        return _CHOSEN
    if "mujoco" in sys.modules:
        _CHOSEN = _already_imported()
        return _CHOSEN
    user = os.environ.get("MUJOCO_GL", "").strip().lower()
    if user:
        accepted = _accepted_by_mujoco(platform.system())
        if user not in accepted:
            # MuJoCo itself would fail at import with a bare RuntimeError from deep inside it.
            raise GLUnavailable(
                f"MUJOCO_GL={os.environ['MUJOCO_GL']!r} is not a value MuJoCo accepts on "
                f"{platform.system()}.\n"
                f"  Accepted: {', '.join(accepted)}.\n"
                "  What to do: unset it (`unset MUJOCO_GL`) and labkit picks a backend that works, "
                "or set one of the values above."
            )
        fixes: list[str] = []
        plat = os.environ.get("PYOPENGL_PLATFORM", "").strip().lower()
        if user in ("egl", "osmesa") and plat and plat != user:
            fixes.append(
                f"PYOPENGL_PLATFORM={plat} disagreed with MUJOCO_GL={user}; "
                f"labkit set PYOPENGL_PLATFORM={user} (a mismatch makes mujoco.Renderer vanish)"
            )
        _set(user)
        _CHOSEN = Backend(user, "MUJOCO_GL was set by you", fixes=tuple(fixes))
        return _CHOSEN
    system = platform.system()
    if system != "Linux":
        name = "cgl" if system == "Darwin" else "glfw"
        _CHOSEN = Backend(name, f"MuJoCo's default on {system}")
        return _CHOSEN
    problems = []
    for name in ("egl", "osmesa"):
        problem = probe(name)
        if problem is None:
            _set(name)
            _CHOSEN = Backend(name, "first headless backend that works", tuple(problems))
            return _CHOSEN
        problems.append(f"{name}: {problem}")
    os.environ["MUJOCO_GL"] = "disabled"
    _CHOSEN = Backend("disabled", "no headless backend works", tuple(problems))
    return _CHOSEN


def _already_imported() -> Backend:
    """Describe the backend of a ``mujoco`` that was imported before labkit could choose."""
    name = os.environ.get("MUJOCO_GL", "").strip().lower() or "glfw"
    return Backend(name, "mujoco was imported before labkit.setup(); its choice stands")


def failure_message(backend: Backend) -> str:
    """Why ``backend`` cannot render and what to install, as a newcomer would need it."""
    lines = "\n  ".join(backend.problems)
    return (
        "MuJoCo cannot render here: no headless OpenGL backend works.\n  "
        f"{lines}\nFix (Debian/Ubuntu): {install_hint()}\n"
        "then restart the kernel. `labkit doctor` checks the result."
    )


def require() -> Backend:
    """Return the backend, or raise :class:`GLUnavailable` with the fix if none works."""
    backend = choose()
    if not backend.usable:
        raise GLUnavailable(failure_message(backend))
    return backend
