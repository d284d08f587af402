"""Headless images and videos of a simulation, shown inline.

Images are emitted as ``image/png`` (with a ``text/plain`` caption), so nbval compares
the caption but not the pixels, which differ between GPUs and Mesa versions.  Videos
and image rows go through mediapy's HTML; the test suite's sanitizer masks their base64
payload.  Renderers are kept in a small cache (one per model and frame size) and
closed at exit, so a notebook that shows fifty frames creates one GL context.
"""

from __future__ import annotations

import atexit
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import gl, sim
from .sim import Control

if TYPE_CHECKING:
    import mujoco

__all__ = ["close_renderers", "show", "snapshot", "video"]

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
    # The offscreen buffer must hold the frame: widen it for the Renderer's construction
    # only, so the learner's model is left as it was.
    size = model.vis.global_.offwidth, model.vis.global_.offheight
    model.vis.global_.offwidth, model.vis.global_.offheight = max(size[0], width), max(size[1], height)
    try:
        renderer = mujoco.Renderer(model, height=height, width=width)
    finally:
        model.vis.global_.offwidth, model.vis.global_.offheight = size
    _renderers[key] = (weakref.ref(model), renderer)
    return renderer


def _camera(model: mujoco.MjModel, camera: Any, azimuth: float | None,
            elevation: float | None, distance: float | None,
            lookat: Sequence[float] | None) -> Any:
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
        mujoco.mjv_defaultFreeCamera(model, cam)  # frames the model's extent and centre
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
        camera that frames the whole model (then azimuth/elevation in degrees, distance
        in metres and lookat may adjust it).
    contacts, forces: draw contact points and contact forces; frames: True (body frames)
    or "geom", "site", "world", ...; transparent: make geoms see-through; flags: more of
    MuJoCo's visual flags by name, e.g. ``("convexhull", "inertia", "joint")``.
    Does not change ``data``.

    Example: ``image = labkit.snapshot(model, data, camera="side")`` → shape (360, 480, 3).
    """
    __tracebackhide__ = True
    renderer = _renderer(model, width, height)
    cam = _camera(model, camera, azimuth, elevation, distance, lookat)
    renderer.update_scene(data, camera=cam,
                          scene_option=_options(contacts, forces, frames, transparent, flags))
    return renderer.render().copy()


def _emit_png(image: np.ndarray, caption: str) -> None:
    import mediapy
    from IPython.display import display

    display({"image/png": mediapy.compress_image(image, fmt="png"), "text/plain": caption},
            raw=True)


def show(
    model_or_image: Any,
    data: Any = None,
    *,
    title: str | None = None,
    titles: Sequence[str] | None = None,
    **options: Any,
) -> None:
    """Show an image inline.

    ``show(model, data, **options)`` renders the current state (options as in
    :func:`snapshot`); ``show(image)`` shows an RGB array; ``show([img1, img2, ...],
    titles=[...])`` shows a row of images.  ``title`` becomes the text caption that
    nbval compares instead of the pixels.

    Example: ``labkit.show(model, data, title="the pendulum at rest")``.
    """
    __tracebackhide__ = True
    if isinstance(model_or_image, list | tuple):
        import mediapy

        mediapy.show_images(list(model_or_image), titles=titles)
        return
    if isinstance(model_or_image, np.ndarray):
        image = model_or_image
    else:
        if data is None:
            raise TypeError("show(model, data): pass the MjData to render as well")
        image = snapshot(model_or_image, data, **options)
    caption = f"<image {image.shape[1]}×{image.shape[0]}" + (f": {title}>" if title else ">")
    _emit_png(image, caption)


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
    :func:`labkit.record`; camera and flag options as in :func:`snapshot`.

    Returns the frames, shape (N, height, width, 3), uint8; shows them inline unless
    ``inline=False``.  ``data`` is left at the final state.

    Example: ``labkit.video(model, data, duration=2.0, title="two seconds of swing")``.
    """
    __tracebackhide__ = True
    every = max(1, round(1.0 / (fps * model.opt.timestep)))
    frames: list[np.ndarray] = []
    sim.run(model, data, duration=duration, nstep=nstep, ctrl=ctrl, every=every,
            sample=lambda _: frames.append(snapshot(model, data, width=width, height=height, **options)))
    clip = np.stack(frames)
    if inline:
        import mediapy

        _ffmpeg_ready()
        mediapy.show_video(clip, fps=1.0 / (every * model.opt.timestep), title=title)
    return clip
