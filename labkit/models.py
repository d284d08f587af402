"""Load course models by name, path or XML string, with errors a newcomer can act on."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from . import gl
from .errors import ModelError

if TYPE_CHECKING:
    import mujoco

__all__ = ["ModelError", "compile_error", "element_id", "load", "model_names", "model_path", "models_dir"]

_XMLREF = "https://mujoco.readthedocs.io/en/3.17.0/XMLreference.html"

# MuJoCo's message (a regular expression) -> what a newcomer should do about it.
_HINTS = (
    (r"unrecognized attribute", "check the attribute's spelling and that it belongs to this "
     f"element (the XML reference lists every element's attributes: {_XMLREF})"),
    (r"unrecognized element", "check the element's spelling and where it sits in the file "
     f"(the XML reference shows where each element may appear: {_XMLREF})"),
    (r"XML parse error|XML_ERROR", "the file is not well-formed XML: look for a tag that is "
     "not closed, closed twice, or closed with the wrong name near that line"),
    (r"mass and inertia of moving bodies", "a body with joints has no mass or inertia: give it "
     "an <inertial> element, or a geom with volume (geoms count only while <compiler "
     "inertiafromgeom> is not 'false')"),
    (r"must be positive", "a size is zero or missing: count how many numbers this geom type "
     "needs in size= (sphere 1, capsule/cylinder 2, box/ellipsoid 3)"),
    (r"repeated name|name .* already", "two elements of the same kind share a name; names "
     "must be unique per kind"),
)




def models_dir() -> Path:
    """The folder of course models: ``$LABKIT_MODELS`` or the repository's ``models/``."""
    env = os.environ.get("LABKIT_MODELS")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "models"


def model_names() -> list[str]:
    """Names of the course models (file names in :func:`models_dir` without ``.xml``).

    Example: ``"pendulum" in labkit.model_names()``.
    """
    return sorted(p.stem for p in models_dir().glob("*.xml"))


def model_path(name: str) -> Path:
    """The file of course model ``name``; unknown names raise :class:`ModelError`.

    Example: ``labkit.model_path("pendulum").read_text()``.
    """
    __tracebackhide__ = True
    path = models_dir() / f"{name.removesuffix('.xml')}.xml"
    if path.is_file():
        return path
    names = model_names()
    close = difflib.get_close_matches(name, names, n=3)
    guess = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise ModelError(
        f"There is no course model named {name!r}.{guess}\n"
        f"Available models ({models_dir()}): {', '.join(names) or 'none'}.\n"
        "Pass a model name, a path to an .xml file, or an MJCF string starting with '<'."
    )


def _mujoco_line(message: str) -> str:
    return " ".join(part.strip() for part in message.strip().splitlines() if part.strip())


def _missing_file_hint(message: str, folder: Path, string: bool) -> str | None:
    """What to do when MuJoCo could not open a file that a model names (an include, a mesh,
    a texture): which file, where MuJoCo looked for it, and what that folder holds.

    folder: where MuJoCo resolves relative names: the model file's folder, or the working
    directory for an MJCF string (``string``).
    """
    match = re.search(r"Error opening file '([^']*)'", message)
    if match is None:
        return None
    name = match.group(1)
    looked = Path(name) if Path(name).is_absolute() else folder / name
    if looked.is_file():
        return f"{looked} exists but MuJoCo could not open it: check that it is readable"
    if looked.parent.is_dir():
        stems = [p.stem for p in looked.parent.iterdir() if p.suffix == looked.suffix]
        close = difflib.get_close_matches(looked.stem, stems, n=3)
        there = (f"; that folder has {' and '.join(repr(c + looked.suffix) for c in close)}"
                 if close else "; that folder has no such file")
    else:
        there = f"; the folder {looked.parent} does not exist"
    start = "the working directory" if string else "the model file's folder"
    return (f"the file {name!r} is missing: MuJoCo looked for it at {looked}{there}. Relative "
            f"names start from {start} ({folder}); in an included file, from that file's "
            "folder; meshes and textures from meshdir and texturedir when set. Fix the name, "
            "or put the file there")


def _explain(message: str, text: str | None, origin: str, folder: Path | None = None) -> ModelError:
    """Turn MuJoCo's compiler message into: where, the offending line, and what to do.

    folder: where relative file names in the model start (the model file's folder; None:
    the working directory, as for an MJCF string).
    """
    match = re.search(r"(?:line |Line number=)(\d+)", message)
    where, number = "", None
    if match and text is not None:
        number = int(match.group(1))
        lines = text.splitlines()
        if 1 <= number <= len(lines):
            where = f"\n  line {number}: {lines[number - 1].strip()}"
    hint = _missing_file_hint(message, Path.cwd() if folder is None else folder, folder is None)
    hint = hint or next((h for pattern, h in _HINTS if re.search(pattern, message)), None)
    detail = _mujoco_line(message)
    text_out = f"MuJoCo could not compile {origin}.{where}\n  MuJoCo says: {detail}"
    if hint:
        text_out += f"\n  What to do: {hint}."
    return ModelError(text_out, message.strip(), number)


def compile_error(source: str | os.PathLike[str]) -> str | None:
    """MuJoCo's own compiler message for ``source`` (as :func:`load` takes it), or None if
    it compiles.  For lessons about what the compiler rejects.

    Example: ``labkit.compile_error("<mujoco><worldbody><geom/></worldbody></mujoco>")`` is None.
    """
    __tracebackhide__ = True
    try:
        load(source)
    except ModelError as exc:
        if not exc.mujoco:
            raise
        return exc.mujoco
    return None


_KINDS = {  # element kind -> (mjtObj name, mjModel count field)
    "joint": ("mjOBJ_JOINT", "njnt"), "actuator": ("mjOBJ_ACTUATOR", "nactuator"),
    "sensor": ("mjOBJ_SENSOR", "nsensor"), "body": ("mjOBJ_BODY", "nbody"),
    "site": ("mjOBJ_SITE", "nsite"), "geom": ("mjOBJ_GEOM", "ngeom"),
    "camera": ("mjOBJ_CAMERA", "ncam"), "tendon": ("mjOBJ_TENDON", "ntendon"),
}


def element_id(model: mujoco.MjModel, kind: str, name: str) -> int:
    """The id of the ``kind`` element (``"joint"``, ``"actuator"``, ``"body"``, ``"site"``,
    ``"geom"``, ``"sensor"``, ``"camera"``, ``"tendon"``) called ``name``; an unknown name
    raises ``KeyError`` listing the model's names of that kind."""
    __tracebackhide__ = True
    import mujoco

    obj_name, count = _KINDS[kind]
    obj = getattr(mujoco.mjtObj, obj_name)
    index = mujoco.mj_name2id(model, obj, name)
    if index < 0:
        names = [n for i in range(getattr(model, count)) if (n := mujoco.mj_id2name(model, obj, i))]
        raise KeyError(f"the model has no {kind} named {name!r}; its {kind}s: {names or 'none'}")
    return index


def spec(source: str | os.PathLike[str]) -> mujoco.MjSpec:
    """An editable ``mujoco.MjSpec`` of a course model name, an MJCF file or an MJCF string
    (as :func:`load` takes them), for lessons that change a model before compiling it.

    Example: ``s = labkit.spec("pendulum"); s.geom("bob").size[0] = 0.1``, then
    ``model, data = labkit.load(s)``.
    Raises :class:`ModelError` naming the file, the offending line and a fix.
    """
    __tracebackhide__ = True
    gl.choose()
    import mujoco

    text, origin, path = _read(source)
    try:
        return mujoco.MjSpec.from_string(text) if path is None else mujoco.MjSpec.from_file(str(path))
    except ValueError as exc:
        raise _explain(str(exc), text, origin, None if path is None else path.parent) from None


def _read(source: str | os.PathLike[str]) -> tuple[str, str, Path | None]:
    """(MJCF text, where it came from, its file or None) of an MJCF string, a path or a
    course model name.  The file is returned absolute: MuJoCo 3.17 resolves an <include>
    inside an included file by prefixing the folder of a *relative* model path twice
    (``a/top.xml`` including ``sub/x.xml`` that includes ``y.xml`` opens
    ``a/sub/a/sub/y.xml``), and an absolute path avoids that."""
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source, "the MJCF string", None
    raw = str(source)
    is_path = os.sep in raw or "/" in raw or raw.endswith((".xml", ".urdf"))
    path = Path(raw).expanduser() if is_path else model_path(raw)
    if not path.is_file():
        raise ModelError(f"No model file at {path}. Check the path (relative paths start "
                         f"from the current folder, {Path.cwd()}: in a notebook, the notebook's).")
    return path.read_text(encoding="utf-8", errors="replace"), str(path), path.resolve()


def load(
    source: str | os.PathLike[str] | mujoco.MjSpec,
    *,
    keyframe: str | int | None = None,
    assets: dict[str, bytes] | None = None,
) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Compile a model and return ``(model, data)`` with ``mj_forward`` already run.

    source: a course model name (``"pendulum"``), a path to an MJCF/URDF file, an MJCF
        string (anything starting with ``<``), or an ``MjSpec`` (see :func:`spec`).
    keyframe: name or index of a ``<key>`` to reset the data to before ``mj_forward``.
    assets: extra files (name → bytes) for an XML string that references meshes etc.

    Raises :class:`ModelError` naming the file, the offending line and a fix.

    Example: ``model, data = labkit.load("pendulum", keyframe="tilted")``.
    """
    __tracebackhide__ = True
    gl.choose()  # MuJoCo must not be imported before the GL backend is chosen
    import mujoco

    text: str | None
    if isinstance(source, mujoco.MjSpec):
        text, origin, path = None, "the edited MjSpec", None
        folder = Path(source.modelfiledir) if source.modelfiledir else None
    else:
        text, origin, path = _read(source)
        folder = None if path is None else path.parent
    try:
        if isinstance(source, mujoco.MjSpec):
            model = source.compile()
        elif path is None:
            model = mujoco.MjModel.from_xml_string(text, assets or {})
        else:
            model = mujoco.MjModel.from_xml_path(str(path), assets or {})
    except ValueError as exc:
        raise _explain(str(exc), text, origin, folder) from None
    data = mujoco.MjData(model)
    if keyframe is not None:
        key = keyframe if isinstance(keyframe, int) else mujoco.mj_name2id(
            model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        if not 0 <= key < model.nkey:
            keys = [model.key(i).name for i in range(model.nkey)]
            raise ModelError(f"{origin} has no keyframe {keyframe!r}; it has: {keys or 'none'}")
        mujoco.mj_resetDataKeyframe(model, data, key)
    mujoco.mj_forward(model, data)
    return model, data
