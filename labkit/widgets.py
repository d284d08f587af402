"""Interactive figures that are also pictures: :func:`interactive`.

``labkit.interactive(figure, kp=ipywidgets.FloatSlider(...), ...)`` is
``ipywidgets.interactive`` whose cell output carries, next to the live widget, a picture of
the figure at the sliders' start values (a ``text/html`` ``<img>`` with alt text, made by
:func:`labkit.display.image_bundle`) and a one-line text/plain summary of the sliders'
ranges.  JupyterLab with a running kernel draws the sliders (it ranks the widget view first);
a static page, GitHub or a reader without a kernel shows the picture.

The figure function is pure: it reads only its slider values, so the tests call it at every
slider's extremes (:attr:`Interactive.ranges`), and the widget keeps the pictures it drew
(moving a slider back shows the kept one at once).  A new picture costs the figure function
plus the artists that change: the figure's background (faces, axes, ticks, tick and axis
labels) is drawn once and reused while it stays the same (:class:`Painter`), and the picture
is pixel for pixel the one ``savefig`` would write.  ipywidgets is imported on first use:
``import labkit`` does not load it.

Saved and reopened, a widget view needs its widget's state: JupyterLab stores it when
``@jupyter-widgets/jupyterlab-manager``'s ``saveState`` is on (``binder/overrides.json``), and
:func:`pre_save_hook`, which this module registers as a Jupyter server extension
(``binder/jupyter_server_extension.json``), turns a view whose state is not stored back into
its picture.  ``./run.sh`` and Binder's ``postBuild`` install both files.
"""

from __future__ import annotations

import functools
import io
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .display import describe, fmt, image_bundle

if TYPE_CHECKING:
    from ipywidgets import ValueWidget
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure

__all__ = ["Interactive", "Painter", "Picture", "interactive", "pre_save_hook"]

KEPT = 256
"""How many pictures (about 30 kB each) one widget keeps."""

BACKGROUNDS = 8
"""How many figure backgrounds (a 640×320 figure's is 0.8 MB of pixels) one widget keeps."""

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@dataclass(frozen=True)
class Picture:
    """One picture of an interactive figure: ``png`` (the PNG file's bytes) and ``alt`` (what
    it shows, :func:`labkit.display.describe`).  Shown, it is
    :func:`labkit.display.image_bundle`."""

    png: bytes
    alt: str

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels, from the PNG's header."""
        width, height = struct.unpack(">II", self.png[16:24])
        return width, height

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # its size on the <img>: the page keeps its layout while the next picture decodes
        width, height = self.size
        return image_bundle(self.png, self.alt, width=width, height=height)


class Painter:
    """Draws matplotlib Figures to PNG, reusing what stays the same from one to the next.

    A figure's *background* is its face, its Axes' faces and their x and y axes (ticks, tick
    labels, axis labels, grid lines) when those come first in the Axes' drawing order; the
    rest (lines, legend, title, spines, ...) is its *foreground*.  The first figure with a new
    background is drawn whole (its layout engine, e.g. constrained layout, places the Axes)
    and its background kept as pixels; a later figure with the same background (same size,
    limits, ticks, labels: :meth:`background_key`) gets the kept layout and pixels, and only
    its foreground is drawn on them, in the same order as a whole draw: the picture is the
    same, pixel for pixel (its PNG file less compressed, to be quick: :func:`_encode`).  A
    figure holding more than Axes (a suptitle, a figure legend), twin or 3-D Axes are always
    drawn whole (:meth:`background_key` is None).
    """

    def __init__(self) -> None:
        # background key → (renderer, its pixels, the Axes' positions)
        self._kept: dict[tuple, tuple[Any, Any, list]] = {}

    @staticmethod
    def background_key(fig: Figure) -> tuple | None:
        """What the figure's background depends on (hashable), or None when it is drawn whole:
        the figure holds more than Axes, Axes overlap (twins) or are not plain 2-D ones, or an
        Axes' x and y axes do not come first in its drawing order."""
        try:
            return Painter._key(fig)
        except (AttributeError, TypeError, ValueError):   # a figure this does not know: whole
            return None

    @staticmethod
    def _key(fig: Figure) -> tuple | None:
        import matplotlib.axis

        if any(a is not fig.patch and a not in fig.axes for a in fig.get_children()):
            return None
        boxes = [ax.get_position(original=True) for ax in fig.axes]
        if any(ax.name != "rectilinear" for ax in fig.axes) or any(
                a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]):
            return None
        key: list = [tuple(fig.get_size_inches()), fig.dpi, fig.get_facecolor(),
                     type(fig.get_layout_engine()).__name__]
        for ax in fig.axes:
            axes = [a for a in _drawn(ax) if isinstance(a, matplotlib.axis.Axis)]
            if _drawn(ax)[:len(axes)] != axes:
                return None
            key += [tuple(ax.get_position(original=True).bounds), ax.get_facecolor(),
                    ax.axison, ax.get_frame_on(), ax.get_xlim(), ax.get_ylim(), ax.get_xscale(),
                    ax.get_yscale()]
            for axis in axes:
                locs = tuple(axis.get_majorticklocs())
                key += [axis.get_visible(), axis.zorder, axis.get_label_text(),
                        axis.get_label_position(), axis.get_ticks_position(),
                        axis.label.get_fontproperties(), axis.label.get_color(), locs,
                        tuple(axis.get_major_formatter().format_ticks(locs)),
                        axis.get_major_formatter().get_offset(), tuple(axis.get_minorticklocs()),
                        repr(sorted(axis._major_tick_kw.items())),   # tick_params, grid
                        repr(sorted(axis._minor_tick_kw.items()))]
        return tuple(key)

    def png(self, fig: Figure) -> bytes:
        """The figure as PNG bytes (as ``fig.savefig(format="png")`` writes it, at ``fig.dpi``).
        The figure is drawn on a canvas of its own and should not be drawn again."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        key = self.background_key(fig)
        canvas = FigureCanvasAgg(fig)
        if key is None:
            canvas.draw()
            return _encode(canvas.get_renderer(), fig.dpi)
        if key not in self._kept:
            canvas.draw()                                   # whole, placed by its layout engine
            png = _encode(canvas.get_renderer(), fig.dpi)
            fig.set_layout_engine("none")                   # keep the layout it found
            with _hidden(_foreground(fig)):
                canvas.draw()
            renderer = canvas.get_renderer()
            if len(self._kept) >= BACKGROUNDS:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = (renderer, renderer.copy_from_bbox(fig.bbox),
                               [ax.get_position() for ax in fig.axes])
            return png
        renderer, pixels, positions = self._kept[key]
        fig.set_layout_engine("none")
        for ax, position in zip(fig.axes, positions, strict=True):
            ax.set_position(position)
        renderer.restore_region(pixels)
        with _hidden(_background(fig)):
            fig.draw(renderer)
        return _encode(renderer, fig.dpi, fast=True)


def _drawn(ax: Any) -> list[Artist]:
    """An Axes' children other than its face, in the order ``Axes.draw`` draws them."""
    return sorted((a for a in ax.get_children() if a is not ax.patch), key=lambda a: a.zorder)


def _background(fig: Figure) -> list[Artist]:
    import matplotlib.axis

    out = [fig.patch]
    for ax in fig.axes:
        out += [ax.patch] + [a for a in _drawn(ax) if isinstance(a, matplotlib.axis.Axis)]
    return out


def _foreground(fig: Figure) -> list[Artist]:
    import matplotlib.axis

    return [a for ax in fig.axes for a in _drawn(ax) if not isinstance(a, matplotlib.axis.Axis)]


class _hidden:
    """Within the block, the artists that were visible are not (then visible again)."""

    def __init__(self, artists: list[Artist]) -> None:
        self.artists = [a for a in artists if a.get_visible()]

    def __enter__(self) -> None:
        for a in self.artists:
            a.set_visible(False)

    def __exit__(self, *exc: object) -> None:
        for a in self.artists:
            a.set_visible(True)


def _encode(renderer: Any, dpi: float, *, fast: bool = False) -> bytes:
    """The renderer's pixels as PNG bytes, written as matplotlib's ``print_png`` writes them;
    ``fast``: at zlib level 1 (half the time, a file 3–15 % larger: for pictures drawn while
    a slider moves; a figure drawn whole, such as the stored start picture, stays smallest)."""
    import matplotlib.image
    import numpy as np

    buffer = io.BytesIO()
    matplotlib.image.imsave(buffer, np.asarray(renderer.buffer_rgba()), format="png", dpi=dpi,
                            pil_kwargs={"compress_level": 1} if fast else None)
    return buffer.getvalue()


class Interactive:
    """An ``ipywidgets.interactive`` of a figure function that also shows as a picture.

    figure: the figure function; sliders: name → its ipywidgets slider; widget: the
    ``ipywidgets.interactive`` (its ``.result`` is the :class:`Picture` shown now).
    """

    def __init__(self, figure: Callable[..., Figure], sliders: dict[str, ValueWidget]) -> None:
        import ipywidgets

        for name, slider in sliders.items():
            if not all(hasattr(slider, a) for a in ("min", "max", "value")):
                raise TypeError(f"{name}= should be an ipywidgets slider (FloatSlider, "
                                f"FloatLogSlider, IntSlider), not {type(slider).__name__}")
        self.figure = figure
        self.sliders = dict(sliders)
        self._start = {name: slider.value for name, slider in self.sliders.items()}
        self._kept: dict[tuple, Picture] = {}
        self._painter = Painter()

        @functools.wraps(figure)   # ipywidgets reads the figure function's signature
        def picture(**values: Any) -> Picture:
            return self.picture(**values)

        self.widget = ipywidgets.interactive(picture, **self.sliders)   # draws the start picture
        # The start picture goes into the widget's output area as widget state, not as a display
        # message (which a notebook runner without widget support, nbval, would store as a
        # second cell output); later ones are displayed there on every slider move (auto_display:
        # ipywidgets.interactive alone only keeps what the function returns, and shows nothing).
        data = self.picture()._repr_mimebundle_()
        self.widget.out.outputs = ({"output_type": "display_data", "metadata": {}, "data": data},)
        self.widget.auto_display = True

    @property
    def ranges(self) -> dict[str, tuple[float, float, float]]:
        """name → (lowest, start, highest) value the figure function receives from that slider
        (a log slider's ``min``/``max`` are exponents; these are the values)."""
        out = {}
        for name, s in self.sliders.items():
            base = getattr(s, "base", None)
            low, high = (base**s.min, base**s.max) if base else (s.min, s.max)
            out[name] = (low, self._start[name], high)
        return out

    def picture(self, **values: Any) -> Picture:
        """The figure at the sliders' start values changed by ``values``, as a :class:`Picture`.
        One draw per setting: the figure function is pure, so a picture once drawn is kept."""
        values = {**self._start, **values}
        key = tuple(sorted(values.items()))
        if key not in self._kept:
            if len(self._kept) >= KEPT:
                self._kept.pop(next(iter(self._kept)))
            fig = self.figure(**values)
            self._kept[key] = Picture(self._painter.png(fig), describe(fig))
        return self._kept[key]

    def png(self, **values: Any) -> bytes:
        """The PNG bytes of :meth:`picture`."""
        return self.picture(**values).png

    def __repr__(self) -> str:
        ranges = " · ".join(f"{name} {fmt(low)} … {fmt(high)} (at {fmt(start)})"
                            for name, (low, start, high) in self.ranges.items())
        return f"interactive {getattr(self.figure, '__name__', 'figure')} · {ranges}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle.update(self.picture()._repr_mimebundle_())
        bundle["text/plain"] = repr(self)
        return bundle


def interactive(figure: Callable[..., Figure], /, **sliders: ValueWidget) -> Interactive:
    """Sliders that redraw ``figure`` live, and a picture of it for readers without a kernel.

    Args:
      figure: a function of the slider values (keyword arguments named as the sliders)
        returning a matplotlib Figure; it must read nothing else that can change.
      sliders: name → an ipywidgets slider (``FloatSlider``, ``FloatLogSlider``,
        ``IntSlider``) whose ``value`` is where the figure starts.

    Returns:
      An :class:`Interactive`: as a cell's value it shows the live widget in JupyterLab, and
      its stored output also holds a picture of the figure at the start values, with alt text.

    Example::

        labkit.interactive(labkit.actuation.step_figure,
                           kv=ipywidgets.FloatSlider(value=5, min=0, max=15, step=0.5))
    """
    return Interactive(figure, sliders)


# --- saving: a widget view whose state is not stored falls back to its picture ----------------

def _outputs(notebook: dict) -> Iterator[dict]:
    for cell in notebook.get("cells") or []:
        if isinstance(cell, dict):
            yield from (o for o in cell.get("outputs") or [] if isinstance(o, dict))


def pre_save_hook(model: dict, path: str = "", contents_manager: Any = None, **_: Any) -> None:
    """Jupyter server's pre-save hook (``ContentsManager.pre_save_hook``): in a notebook being
    saved, an output that shows a widget whose state the notebook does not store, and that
    also holds a picture, keeps only the picture.

    Reopened, such a view would read "Error displaying widget: model not found": JupyterLab
    stores only the widgets live in the kernel (``saveState``), so a save after a kernel
    restart, or after a reopen whose widgets came from the stored state, drops them
    (jupyter-widgets/ipywidgets#3888); with ``saveState`` off it stores none.  A view whose
    state is stored is kept.  Nothing else in the notebook changes.

    Args:
      model: the contents model being saved (``model["content"]`` is the notebook as a dict,
        changed in place); path, contents_manager: as the server passes them (unused).

    This module, a Jupyter server extension, registers it
    (:func:`_load_jupyter_server_extension`).
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    notebook = model["content"]
    widgets = (notebook.get("metadata") or {}).get("widgets")
    stored = widgets.get(WIDGET_STATE) if isinstance(widgets, dict) else None
    state = stored.get("state") if isinstance(stored, dict) else None
    state = state if isinstance(state, dict) else {}
    for output in _outputs(notebook):
        data = output.get("data")
        if not isinstance(data, dict) or not isinstance(data.get(WIDGET_VIEW), dict):
            continue
        picture = {"text/html", "image/png"} & set(data)
        if picture and data[WIDGET_VIEW].get("model_id") not in state:
            del data[WIDGET_VIEW]



def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """This module is a Jupyter server extension (binder/jupyter_server_extension.json)."""
    return [{"module": "labkit.widgets"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register :func:`pre_save_hook` with the server's contents manager, next to any other."""
    serverapp.contents_manager.register_pre_save_hook(pre_save_hook)
