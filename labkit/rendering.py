"""Headless images and videos of a simulation, shown inline.

Every picture and video carries a text alternative that says what it shows: the model,
the simulation time, the camera and the title (``"render of model 'pendulum' at t = 0.5 s:
the swinging pendulum"``).  Images and image rows are ``text/html`` ``<img alt=...>`` with
the PNG inline (:func:`labkit.display.image_bundle`), videos a ``<video>`` with that text as
its accessible name, and each output's ``text/plain`` says the same, so nbval compares the
description but not the pixels, which differ between GPUs and Mesa versions (the test
suite's sanitizer masks the base64 payload).  Renderers are kept in a small cache (one per
model and frame size) and closed at exit, so a notebook that shows fifty frames creates one
GL context.
"""

from __future__ import annotations

import atexit
import html
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import gl, sim
from .display import fmt, image_bundle, image_html, pictures_kept
from .sim import Control

if TYPE_CHECKING:
    import mujoco

__all__ = ["UNNAMED", "close_renderers", "default_camera", "describe_render", "describe_video",
           "model_name", "moving_box", "show", "snapshot", "video", "view_box"]

_CACHE_SIZE = 4
_renderers: OrderedDict[tuple[int, int, int], tuple[Any, Any]] = OrderedDict()


def _close(renderer: Any) -> None:
    # mujoco.Renderer.close() frees its GL objects in whatever context is current; if that
    # is another renderer's, it deletes *that* renderer's buffers (their ids coincide) and
    # its next frames are noise.  Make the renderer's own context current first.
    context = getattr(renderer, "_gl_context", None)
    if context is not None:
        context.make_current()
    renderer.close()


def close_renderers() -> None:
    """Close every cached renderer and free its GL context."""
    while _renderers:
        _, (_, renderer) = _renderers.popitem()
        _close(renderer)




#: Most multisamples per pixel labkit's offscreen buffer gets (MuJoCo's default).
MAX_SAMPLES = 4


def _buffers(width: int, height: int, samples: int, shadowsize: int) -> tuple[int, int, int, int]:
    """(offwidth, offheight, offsamples, shadowsize) of the GL context for frames of
    width × height pixels, given the model's offsamples and shadowsize.

    Models written for big screens ask for buffers that a small frame cannot show: dm_control's
    fruitfly a 3840 × 2160 offscreen buffer with 24 samples and three 8192² shadow maps.
    MuJoCo allocates and clears them in full, and draws every shadow-casting light's map each
    frame, whatever the frame size: on a software GL (llvmpipe, two shared CPU cores) a
    320 × 240 frame of the fruitfly took 0.85–1.3 s, and 0.15–0.55 s with these sizes (three
    shadow maps of 1024², each still one full draw of the scene).  So: the offscreen buffer is the
    frame; at most :data:`MAX_SAMPLES` samples; a shadow map of at most twice the frame's
    larger side (rounded up to a power of two, at least 1024, the course models' size, so
    their pictures do not change).
    """
    cap = max(1024, 1 << max(0, 2 * max(width, height) - 1).bit_length())
    return width, height, min(int(samples), MAX_SAMPLES), min(int(shadowsize), cap)


def _renderer(model: mujoco.MjModel, width: int, height: int) -> mujoco.Renderer:
    gl.require()
    import mujoco

    key = (id(model), width, height)
    entry = _renderers.get(key)
    if entry is not None and entry[0]() is model:
        _renderers.move_to_end(key)
        return entry[1]
    if entry is not None:  # a new model reused the id of a collected one
        _close(_renderers.pop(key)[1])
    if not hasattr(mujoco, "Renderer"):
        raise gl.GLUnavailable(
            "mujoco.Renderer does not exist in this process: MUJOCO_GL and PYOPENGL_PLATFORM "
            "disagree, or mujoco was imported before labkit.setup(). Restart the kernel and "
            "run labkit.setup() first."
        )
    if not _renderers:
        # Registered after mujoco (and mujoco.egl) is imported, so it runs before their own
        # atexit handlers (last registered, first run): a renderer freed after EGL has
        # terminated raises noisy errors at interpreter exit.
        atexit.unregister(close_renderers)
        atexit.register(close_renderers)
    while len(_renderers) >= _CACHE_SIZE:
        _close(_renderers.popitem(last=False)[1][1])
    # GL buffers sized to the frame, set for the Renderer's construction only, so the
    # learner's model is left as it was (see _buffers).
    quality, window = model.vis.quality, model.vis.global_
    before = (window.offwidth, window.offheight, quality.offsamples, quality.shadowsize)
    (window.offwidth, window.offheight, quality.offsamples,
     quality.shadowsize) = _buffers(width, height, before[2], before[3])
    try:
        renderer = mujoco.Renderer(model, height=height, width=width)
    finally:
        window.offwidth, window.offheight, quality.offsamples, quality.shadowsize = before
    _renderers[key] = (weakref.ref(model), renderer)
    return renderer


def _shown_geoms(model: mujoco.MjModel, option: Any) -> np.ndarray:
    """Which geoms a picture with ``option`` shows, shape (ngeom,), bool: their group is on,
    they are not fully transparent, and they are not planes or height fields (which have no
    useful size to frame)."""
    import mujoco

    group = np.clip(np.asarray(model.geom_group, dtype=int), 0, len(option.geomgroup) - 1)
    material = np.asarray(model.geom_matid, dtype=int)
    alpha = np.asarray(model.geom_rgba[:, 3], dtype=float)
    if model.nmat:
        alpha = np.where(material >= 0, model.mat_rgba[np.maximum(material, 0), 3], alpha)
    kind = np.asarray(model.geom_type, dtype=int)
    solid = (kind != int(mujoco.mjtGeom.mjGEOM_PLANE)) & (kind != int(mujoco.mjtGeom.mjGEOM_HFIELD))
    return solid & np.asarray(option.geomgroup, dtype=bool)[group] & (alpha > 0)


def _geom_boxes(model: mujoco.MjModel, data: mujoco.MjData,
                ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World-frame bounding boxes of geoms ``ids`` (from ``geom_aabb`` and their poses in
    ``data``): (lo, hi), each shape (k, 3), in m."""
    rotation = np.asarray(data.geom_xmat[ids], dtype=float).reshape(-1, 3, 3)
    centre = np.asarray(data.geom_xpos[ids], dtype=float) + np.einsum(
        "kij,kj->ki", rotation, np.asarray(model.geom_aabb[ids, :3], dtype=float))
    half = np.einsum("kij,kj->ki", np.abs(rotation),
                     np.asarray(model.geom_aabb[ids, 3:], dtype=float))
    return centre - half, centre + half


def moving_box(model: mujoco.MjModel, data: mujoco.MjData,
               option: Any = None) -> tuple[np.ndarray, np.ndarray] | None:
    """World-frame bounding box (lo, hi), each shape (3,), in m, of what a picture shows of
    the model's **moving** bodies, as they are in ``data`` (its geom poses: after
    mj_kinematics or mj_forward).  None if nothing moving is shown.

    Moving bodies are those not welded to the world (``body_weldid != 0``: a joint on the
    body or above it, or a mocap body).  Their geoms count if ``option`` (an ``MjvOption``;
    default MuJoCo's, groups 0–2) shows their group and they are not fully transparent,
    planes and height fields excepted; each counts with its bounding box (``geom_aabb``) in
    the world.  A shown skin counts through the geoms of its bones' bodies, whatever their
    group.  The floor, walls and anything else welded to the world never count.

    Example: ``lo, hi = labkit.rendering.moving_box(model, data)``: the robot, not its floor.
    """
    import mujoco

    option = mujoco.MjvOption() if option is None else option
    moving = np.asarray(model.body_weldid, dtype=int) != 0
    moving[0] = False
    body = np.asarray(model.geom_bodyid, dtype=int)
    solid = _shown_geoms(model, option)
    shown = moving[body] & solid
    if model.nskin and option.flags[mujoco.mjtVisFlag.mjVIS_SKIN]:
        bones = np.zeros(model.nbody, dtype=bool)
        skin_group = np.clip(np.asarray(model.skin_group, dtype=int), 0, len(option.skingroup) - 1)
        for k in np.flatnonzero(np.asarray(option.skingroup, dtype=bool)[skin_group]):
            start, count = int(model.skin_boneadr[k]), int(model.skin_bonenum[k])
            bones[model.skin_bonebodyid[start:start + count]] = True
        kind = np.asarray(model.geom_type, dtype=int)
        flat = np.isin(kind, [int(mujoco.mjtGeom.mjGEOM_PLANE), int(mujoco.mjtGeom.mjGEOM_HFIELD)])
        shown |= moving[body] & bones[body] & ~flat
    ids = np.flatnonzero(shown)
    if ids.size == 0:
        return None
    lo, hi = _geom_boxes(model, data, ids)
    return lo.min(axis=0), hi.max(axis=0)


def view_box(model: mujoco.MjModel, data: mujoco.MjData,
             option: Any = None) -> tuple[np.ndarray, np.ndarray] | None:
    """What the default free camera frames: :func:`moving_box`, widened to the shown static
    geoms that are no larger than it and lie within its size of it (a post that marks a
    pendulum's pivot, a table's legs), so that floors, walls, rooms and far-away props are
    left out.  (lo, hi), each shape (3,), in m; None if nothing moving is shown.

    Example: ``labkit.rendering.view_box(*labkit.load("pendulum"))`` → the rod, bob and post.
    """
    import mujoco

    option = mujoco.MjvOption() if option is None else option
    box = moving_box(model, data, option)
    if box is None:
        return None
    lo, hi = box
    extent = float(np.max(hi - lo))
    static = np.asarray(model.body_weldid, dtype=int)[model.geom_bodyid] == 0
    ids = np.flatnonzero(static & _shown_geoms(model, option))
    if ids.size:
        glo, ghi = _geom_boxes(model, data, ids)
        small = np.max(ghi - glo, axis=1) <= extent
        gap = np.max(np.maximum(glo - hi, lo - ghi), axis=1)   # > 0: apart along some axis
        near = small & (gap <= extent)
        if near.any():
            lo, hi = np.minimum(lo, glo[near].min(axis=0)), np.maximum(hi, ghi[near].max(axis=0))
    return lo, hi


def _frame(model: mujoco.MjModel, cam: Any, box: tuple[np.ndarray, np.ndarray] | None) -> None:
    """Point free camera ``cam`` at ``box`` (lo, hi in m) the way mjv_defaultFreeCamera points
    it at the model's statistics: lookat = the box's centre, distance = 1.5 × its largest side
    (MuJoCo's 1.5 × ``stat.extent``).  Without a box (nothing moving is shown, or it has no
    size) the camera keeps MuJoCo's default, which frames every geom and body."""
    if box is None:
        return
    lo, hi = box
    extent = float(np.max(hi - lo))
    if not extent > 1e-6 * max(1.0, float(model.stat.extent)):
        return
    cam.lookat[:] = 0.5 * (lo + hi)
    cam.distance = 1.5 * extent


def default_camera(model: mujoco.MjModel, data: mujoco.MjData, option: Any = None) -> Any:
    """The free camera :func:`snapshot` uses when given no camera: an ``mujoco.MjvCamera``
    from MuJoCo's default direction, aimed at :func:`view_box` (lookat = its centre, distance
    = 1.5 × its largest side, m), or MuJoCo's own default when nothing moving is shown.

    Example: ``cam = labkit.rendering.default_camera(model, data)``; ``cam.distance`` → 3.0 (m).
    """
    import mujoco

    option = mujoco.MjvOption() if option is None else option
    return _camera(model, None, None, None, None, None, view_box(model, data, option))


def _camera(model: mujoco.MjModel, camera: Any, azimuth: float | None,
            elevation: float | None, distance: float | None,
            lookat: Sequence[float] | None,
            box: tuple[np.ndarray, np.ndarray] | None = None) -> Any:
    import mujoco

    if camera is not None and not isinstance(camera, mujoco.MjvCamera):
        index = camera if isinstance(camera, int) else mujoco.mj_name2id(
            model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        if not 0 <= index < model.ncam:
            names = [model.camera(i).name for i in range(model.ncam)]
            raise KeyError(f"the model has no camera {camera!r}; its cameras: {names or 'none'}")
        if any(v is not None for v in (azimuth, elevation, distance, lookat)):
            raise ValueError("azimuth/elevation/distance/lookat apply to the free camera only")
        return index
    cam = camera or mujoco.MjvCamera()
    if camera is None:
        mujoco.mjv_defaultFreeCamera(model, cam)  # MuJoCo's view direction and framing...
        _frame(model, cam, box)                   # ...moved onto the moving bodies
    if azimuth is not None:
        cam.azimuth = azimuth
    if elevation is not None:
        cam.elevation = elevation
    if distance is not None:
        cam.distance = distance
    if lookat is not None:
        cam.lookat[:] = lookat
    return cam


def _options(contacts: bool, forces: bool, frames: bool | str, transparent: bool,
             flags: Sequence[str]) -> Any:
    import mujoco

    option = mujoco.MjvOption()
    vis = mujoco.mjtVisFlag
    option.flags[vis.mjVIS_CONTACTPOINT] = contacts
    option.flags[vis.mjVIS_CONTACTFORCE] = forces
    option.flags[vis.mjVIS_TRANSPARENT] = transparent
    for flag in flags:
        name = f"mjVIS_{flag.upper()}"
        if not hasattr(vis, name):
            known = [n.removeprefix("mjVIS_").lower() for n in vis.__members__ if n != "mjNVISFLAG"]
            raise ValueError(f"unknown visual flag {flag!r}; MuJoCo's flags: {', '.join(known)}")
        option.flags[getattr(vis, name)] = True
    if frames:
        kind = "body" if frames is True else str(frames)
        name = f"mjFRAME_{kind.upper()}"
        if not hasattr(mujoco.mjtFrame, name):
            raise ValueError(f"frames must be True or one of body, geom, site, camera, light, "
                             f"contact, world; got {frames!r}")
        option.frame = getattr(mujoco.mjtFrame, name)
    return option


def snapshot(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    *,
    camera: str | int | Any = None,
    width: int = 480,
    height: int = 360,
    contacts: bool = False,
    forces: bool = False,
    frames: bool | str = False,
    transparent: bool = False,
    flags: Sequence[str] = (),
    azimuth: float | None = None,
    elevation: float | None = None,
    distance: float | None = None,
    lookat: Sequence[float] | None = None,
) -> np.ndarray:
    """Render the current state; returns an RGB image, shape (height, width, 3), uint8.

    camera: a model camera (name or id), an ``mujoco.MjvCamera``, or None for a free
        camera that frames the model's moving bodies as they are now (:func:`view_box`:
        with the small static geoms next to them, not floors, walls or rooms; a model with
        nothing moving is framed whole, as MuJoCo's default free camera does), from MuJoCo's default
        direction (``visual/global`` azimuth and elevation); azimuth/elevation in degrees,
        distance in metres and lookat may adjust it.
    The frame is drawn through GL buffers sized to it (:func:`_buffers`), whatever larger
    offscreen buffer, multisampling or shadow maps the model asks for.
    contacts, forces: draw contact points and contact forces; frames: True (body frames)
    or "geom", "site", "world", ...; transparent: make geoms see-through; flags: more of
    MuJoCo's visual flags by name, e.g. ``("convexhull", "inertia", "joint")``.
    Does not change ``data``.

    Example: ``image = labkit.snapshot(model, data, camera="side")`` → shape (360, 480, 3).
    """
    __tracebackhide__ = True
    renderer = _renderer(model, width, height)
    option, cam = _view(model, data, camera, contacts, forces, frames, transparent, flags,
                        azimuth, elevation, distance, lookat)
    renderer.update_scene(data, camera=cam, scene_option=option)
    return _remember(renderer.render().copy(), describe_render(model, data, camera=camera))


def _view(model: mujoco.MjModel, data: mujoco.MjData, camera: Any, contacts: bool, forces: bool,
          frames: bool | str, transparent: bool, flags: Sequence[str], azimuth: float | None,
          elevation: float | None, distance: float | None,
          lookat: Sequence[float] | None) -> tuple[Any, Any]:
    """What :func:`snapshot` draws with, its options checked: (MjvOption, camera)."""
    option = _options(contacts, forces, frames, transparent, flags)
    box = view_box(model, data, option) if camera is None and (
        distance is None or lookat is None) else None
    return option, _camera(model, camera, azimuth, elevation, distance, lookat, box)


def _checked_unseen(model: mujoco.MjModel, data: mujoco.MjData, options: dict[str, Any]) -> None:
    """Where pictures are not kept: everything :func:`snapshot` does with ``options`` but draw
    (the same errors for a wrong option or camera, the same change to a passed MjvCamera)."""
    import inspect

    call = inspect.signature(snapshot).bind(model, data, **options)   # TypeError as a call's
    call.apply_defaults()
    a = call.arguments
    gl.require()
    _view(model, data, a["camera"], a["contacts"], a["forces"], a["frames"], a["transparent"],
          a["flags"], a["azimuth"], a["elevation"], a["distance"], a["lookat"])


UNNAMED = "MuJoCo Model"
"""The name MuJoCo gives a model whose ``<mujoco>`` element has no ``model`` attribute."""


def model_name(model: mujoco.MjModel) -> str:
    """The model's name (``<mujoco model="...">``; MuJoCo's default is :data:`UNNAMED`)."""
    return bytes(model.names[: model.names.index(b"\0")]).decode("utf-8", "replace")


def _model_words(model: mujoco.MjModel) -> str:
    name = model_name(model)
    return f" of model '{name}'" if name and name != UNNAMED else ""


def _camera_words(camera: Any) -> str:
    if isinstance(camera, str):
        return f", camera '{camera}'"
    if isinstance(camera, int | np.integer):
        return f", camera #{int(camera)}"
    return ""


def describe_render(model: mujoco.MjModel, data: mujoco.MjData, *, camera: Any = None,
                    title: str | None = None) -> str:
    """What a picture of ``data``'s state shows, as its alt text: ``"render of model
    'pendulum', camera 'side' at t = 0.5 s: <title>"``.  Left out: the model's name when it
    has none, the camera unless it is one of the model's, and the time (``data.time``, s) when
    it is 0, as it also is for a state set by hand (``qpos`` written, then ``mj_forward``).

    Example: ``describe_render(*labkit.load("pendulum"))`` → ``"render of model 'pendulum'"``.
    """
    text = f"render{_model_words(model)}{_camera_words(camera)}"
    if data.time != 0:
        text += f" at t = {fmt(float(data.time))} s"
    return f"{text}: {title}" if title else text


# What each frame snapshot() returned shows (id of the array → (weak reference, text)), so a
# row of snapshots says which model and time each picture is; a copy or a slice is not known.
_rendered: dict[int, tuple[Any, str]] = {}


def _remember(image: np.ndarray, text: str) -> np.ndarray:
    key = id(image)
    _rendered[key] = (weakref.ref(image, lambda _: _rendered.pop(key, None)), text)
    return image


def _what(image: Any) -> str | None:
    entry = _rendered.get(id(image))
    return entry[1] if entry is not None and entry[0]() is image else None


def _png(image: np.ndarray) -> bytes:
    """PNG bytes of an image: uint8 as it is, floats in [0, 1] scaled (mediapy.to_uint8); RGB,
    RGBA or grey (height, width)."""
    import mediapy

    return mediapy.compress_image(mediapy.to_uint8(np.asarray(image)), fmt="png")


def _display(bundle: dict[str, str]) -> None:
    from IPython.display import display

    display(bundle, raw=True)


def _picture_alt(image: np.ndarray, title: str | None) -> str:
    known = _what(image)
    if known is not None:
        return f"{known}: {title}" if title else known
    size = f"{image.shape[1]}×{image.shape[0]} pixels"
    return f"picture: {title}" if title else f"picture ({size})"


def _row(images: Sequence[Any], titles: Sequence[str] | None) -> dict[str, str]:
    """A row of pictures, each a <figure> with its title as caption and its alt text (one
    title per image: :func:`show` checks)."""
    n = len(images)
    alts, cells = [], []
    for k, image in enumerate(images):
        image = np.asarray(image) if not isinstance(image, np.ndarray) else image
        title = titles[k] if titles is not None else None
        alt = f"picture {k + 1} of {n}, {_picture_alt(image, title)}"
        alts.append(alt)
        caption = (f'<figcaption style="text-align:center">{html.escape(title)}</figcaption>'
                   if title else "")
        cells.append(f'<figure style="margin:0">{caption}'
                     f"{image_html(_png(image), alt, width=image.shape[1], height=image.shape[0])}"
                     "</figure>")
    body = "".join(cells)
    return {"text/html": ('<div class="labkit-pictures" style="display:flex;flex-wrap:wrap;'
                          f'gap:4px;align-items:flex-end">{body}</div>'),
            "text/plain": "\n".join(alts)}


def show(
    model_or_image: Any,
    data: Any = None,
    *,
    title: str | None = None,
    titles: Sequence[str] | None = None,
    **options: Any,
) -> None:
    """Show an image inline, with alt text saying what it shows.

    ``show(model, data, **options)`` renders the current state (options as in
    :func:`snapshot`); ``show(image)`` shows an RGB array, shape (height, width, 3);
    ``show([img1, img2, ...], titles=[...])`` shows a row of images, each titled.  ``title``
    (and ``titles``) become part of the alt text, which is also the text nbval compares
    instead of the pixels: say what the picture shows.  The model, the camera and the time
    are added for a render (:func:`describe_render`), and for arrays that :func:`snapshot`
    returned.  Where pictures are not kept (:func:`labkit.display.pictures_kept`), only
    that text is shown and nothing is rendered; the options are checked all the same.

    Example: ``labkit.show(model, data, title="the pendulum at rest")``.
    """
    __tracebackhide__ = True
    kept = pictures_kept()   # not in the grader's runner, which throws every picture away
    if isinstance(model_or_image, list | tuple):
        if titles is not None and len(titles) != len(model_or_image):
            raise ValueError(f"show() got {len(model_or_image)} images but {len(titles)} titles; "
                             "pass one title per image")
        _display(_row(list(model_or_image), titles) if kept else
                 {"text/plain": f"a row of {len(model_or_image)} pictures"})
        return
    if isinstance(model_or_image, np.ndarray):
        image = model_or_image
        alt = _picture_alt(image, title)
    else:
        if data is None:
            raise TypeError("show(model, data): pass the MjData to render as well")
        alt = describe_render(model_or_image, data, camera=options.get("camera"), title=title)
        if not kept:   # checked as snapshot() checks it, not drawn
            _checked_unseen(model_or_image, data, options)
        image = snapshot(model_or_image, data, **options) if kept else None
    _display(image_bundle(_png(image), alt) if kept else {"text/plain": alt})


_VIEW_OPTIONS = ("camera", "contacts", "forces", "frames", "transparent", "flags", "azimuth",
                 "elevation", "distance", "lookat")


def _ffmpeg_ready() -> None:
    import imageio_ffmpeg
    import mediapy

    mediapy.set_ffmpeg(imageio_ffmpeg.get_ffmpeg_exe())


def video(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    *,
    duration: float | None = None,
    nstep: int | None = None,
    ctrl: Control = None,
    fps: float = 30.0,
    width: int = 320,
    height: int = 240,
    title: str | None = None,
    inline: bool = True,
    **options: Any,
) -> np.ndarray:
    """Simulate for ``duration`` seconds or ``nstep`` steps, filming as it goes.

    A frame is taken before the first step and then every ``round(1 / (fps · timestep))``
    steps, and the video plays at the rate that makes it real time.  ``ctrl`` as in
    :func:`labkit.record`; camera and flag options as in :func:`snapshot`.  The default
    camera is fixed for the whole clip and frames the moving bodies over all of it: the
    simulation runs first, keeping each frame's state (``mj_getState``), and the frames are
    drawn afterwards from those states, in a scratch ``MjData`` (positions from
    ``mj_fwdPosition``, and the rest of the forward pipeline, without ``mjcb_control``, when
    ``forces=True``).

    Cost: each frame draws the scene once, once more per shadow-casting light and once more
    for a reflective floor, into GL buffers sized to the frame (:func:`_buffers`: a model's
    own 4K buffer, 24 samples and 8192² shadow maps are not honoured here, so its pictures
    can look slightly softer than at full size).  On a software GL a large mesh scene stays
    slow: dm_control's fruitfly (270,000 mesh triangles, three shadow-casting lights, 10,000
    steps of 0.1 ms a second) took 6.6–8.5 s for this default 1 s clip on two shared CPU
    cores, 2 s of it physics (a bare ``mujoco.Renderer`` loop with the model's own buffers:
    19–24 s); pass a lower ``fps`` for such scenes.

    Returns the frames, shape (N, height, width, 3), uint8; shows them inline unless
    ``inline=False`` (only the text alternative where pictures are not kept:
    :func:`labkit.display.pictures_kept`).  ``data`` is left at the final state.

    Example: ``labkit.video(model, data, duration=2.0, title="two seconds of swing")``.
    """
    __tracebackhide__ = True
    import mujoco

    unknown = set(options) - set(_VIEW_OPTIONS)
    if unknown:
        raise TypeError(f"video() got unexpected options {sorted(unknown)}; it takes snapshot()'s: "
                        f"{', '.join(_VIEW_OPTIONS)}")
    every = max(1, round(1.0 / (fps * model.opt.timestep)))
    kind = mujoco.mjtState.mjSTATE_INTEGRATION
    size = mujoco.mj_stateSize(model, kind)
    option = _options(options.get("contacts", False), options.get("forces", False),
                      options.get("frames", False), options.get("transparent", False),
                      options.get("flags", ()))
    framing = options.get("camera") is None and (
        options.get("distance") is None or options.get("lookat") is None)
    states: list[np.ndarray] = []
    boxes: list[tuple[np.ndarray, np.ndarray]] = []

    def keep(_: int) -> None:
        state = np.empty(size)
        mujoco.mj_getState(model, data, state, kind)
        states.append(state)
        box = view_box(model, data, option) if framing else None  # poses of the last step
        if box is not None:
            boxes.append(box)

    start = float(data.time)
    sim.run(model, data, duration=duration, nstep=nstep, ctrl=ctrl, every=every, sample=keep)
    clip = _film(model, states, kind, width, height, option, options,
                 (np.min([b[0] for b in boxes], axis=0), np.max([b[1] for b in boxes], axis=0))
                 if boxes else None)
    if inline:
        rate = 1.0 / (every * model.opt.timestep)
        alt = describe_video(model, start, float(data.time), len(clip), rate,
                             camera=options.get("camera"), title=title)
        _display(_video_bundle(clip, rate, alt, title) if pictures_kept() else {"text/plain": alt})
    return clip


def describe_video(model: mujoco.MjModel, start: float, end: float, frames: int, fps: float,
                   *, camera: Any = None, title: str | None = None) -> str:
    """What a clip shows, as its text alternative: ``"video of model 'pendulum', t = 0 to 2 s,
    61 frames at 30 fps (real time): <title>"``; times in s.

    Example: ``describe_video(model, 0.0, 2.0, 61, 30.0)``.
    """
    text = (f"video{_model_words(model)}{_camera_words(camera)}, t = {fmt(start)} to "
            f"{fmt(end)} s, {frames} frames at {fmt(fps, digits=3)} fps (real time)")
    return f"{text}: {title}" if title else text


def _video_bundle(clip: np.ndarray, fps: float, alt: str, title: str | None) -> dict[str, str]:
    """A clip as a notebook output: an H.264 ``<video>`` (mediapy's encoding, as
    ``mediapy.show_video`` makes it) named by ``alt`` (``aria-label`` and tooltip), the same
    text as its fallback content and as the output's ``text/plain``, under its title."""
    import base64

    import mediapy

    _ffmpeg_ready()
    encoded = base64.b64encode(mediapy.compress_video(clip, fps=fps)).decode("ascii")
    text = html.escape(alt)
    height, width = clip.shape[1:3]
    caption = (f'<figcaption style="text-align:center">{html.escape(title)}</figcaption>'
               if title else "")
    return {"text/html": (
        f'<figure class="labkit-video" style="margin:0;display:inline-block">{caption}'
        f'<video controls loop autoplay muted playsinline width="{width}" height="{height}" '
        f'style="max-width:100%;height:auto" aria-label="{text}" title="{text}">'
        f'<source src="data:video/mp4;base64,{encoded}" type="video/mp4"/>{text}</video>'
        "</figure>"), "text/plain": alt}


def _film(model: mujoco.MjModel, states: list[np.ndarray], kind: Any, width: int, height: int,
          option: Any, options: dict[str, Any],
          box: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Draw one frame per saved state, shape (N, height, width, 3), uint8, with one camera."""
    import mujoco

    renderer = _renderer(model, width, height)
    cam = _camera(model, options.get("camera"), options.get("azimuth"), options.get("elevation"),
                  options.get("distance"), options.get("lookat"), box)
    scratch = mujoco.MjData(model)
    forces = bool(options.get("forces", False))
    frames = np.empty((len(states), height, width, 3), dtype=np.uint8)
    for k, state in enumerate(states):
        mujoco.mj_setState(model, scratch, state, kind)
        mujoco.mj_fwdPosition(model, scratch)
        if forces:  # contact forces need the constraint solver: mj_forward without mjcb_control
            mujoco.mj_fwdVelocity(model, scratch)
            mujoco.mj_fwdActuation(model, scratch)
            mujoco.mj_fwdAcceleration(model, scratch)
            mujoco.mj_fwdConstraint(model, scratch)
        renderer.update_scene(scratch, camera=cam, scene_option=option)
        frames[k] = renderer.render()
    return frames
