"""Interactive figures that are also pictures: :func:`interactive`.

``labkit.interactive(figure, kp=ipywidgets.FloatSlider(...), ...)`` is
``ipywidgets.interactive`` whose cell output carries, next to the live widget, an
``image/png`` of the figure at the sliders' start values and a one-line text/plain summary
of the sliders' ranges.  JupyterLab with a running kernel draws the sliders (it ranks the
widget view first); a static page, GitHub or a reader without a kernel shows the picture.

The figure function is pure: it reads only its slider values, so the tests call it at every
slider's extremes (:attr:`Interactive.ranges`), and the widget keeps the pictures it drew
(moving a slider back shows the kept one at once).  ipywidgets is imported on first use:
``import labkit`` does not load it.
"""

from __future__ import annotations

import base64
import functools
import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .display import fmt

if TYPE_CHECKING:
    from ipywidgets import ValueWidget
    from matplotlib.figure import Figure

__all__ = ["Interactive", "interactive"]

KEPT = 256
"""How many pictures (about 30 kB each) one widget keeps."""


class Interactive:
    """An ``ipywidgets.interactive`` of a figure function that also shows as a picture.

    figure: the figure function; sliders: name → its ipywidgets slider; widget: the
    ``ipywidgets.interactive`` (its ``.result`` is the picture shown now).
    """

    def __init__(self, figure: Callable[..., Figure], sliders: dict[str, ValueWidget]) -> None:
        import ipywidgets
        from IPython.display import Image

        for name, slider in sliders.items():
            if not all(hasattr(slider, a) for a in ("min", "max", "value")):
                raise TypeError(f"{name}= should be an ipywidgets slider (FloatSlider, FloatLogSlider, "
                                f"IntSlider), not {type(slider).__name__}")
        self.figure = figure
        self.sliders = dict(sliders)
        self._start = {name: slider.value for name, slider in self.sliders.items()}
        self._kept: dict[tuple, bytes] = {}

        @functools.wraps(figure)   # ipywidgets reads the figure function's signature
        def picture(**values: Any) -> Image:
            return Image(self.png(**values), format="png")

        self.widget = ipywidgets.interactive(picture, **self.sliders)   # draws the start picture
        # The start picture goes into the widget's output area as widget state, not as a display
        # message (which a notebook runner without widget support, nbval, would store as a
        # second cell output); later ones are displayed there on every slider move (auto_display:
        # ipywidgets.interactive alone only keeps what the function returns, and shows nothing).
        data = {"image/png": base64.b64encode(self.png()).decode("ascii"), "text/plain": repr(self)}
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

    def png(self, **values: Any) -> bytes:
        """The figure as PNG bytes, at the sliders' start values changed by ``values``.  One
        draw per setting: the figure function is pure, so a picture once drawn is kept."""
        values = {**self._start, **values}
        key = tuple(sorted(values.items()))
        if key not in self._kept:
            if len(self._kept) >= KEPT:
                self._kept.pop(next(iter(self._kept)))
            buffer = io.BytesIO()
            # constrained layout needs no bbox_inches="tight" (which costs another layout pass)
            self.figure(**values).savefig(buffer, format="png")
            self._kept[key] = buffer.getvalue()
        return self._kept[key]

    def __repr__(self) -> str:
        ranges = " · ".join(f"{name} {fmt(low)} … {fmt(high)} (at {fmt(start)})"
                            for name, (low, start, high) in self.ranges.items())
        return f"interactive {getattr(self.figure, '__name__', 'figure')} · {ranges}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
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
      its stored output also holds an ``image/png`` of the figure at the start values.

    Example::

        labkit.interactive(labkit.actuation.step_figure,
                           kv=ipywidgets.FloatSlider(value=5, min=0, max=15, step=0.5))
    """
    return Interactive(figure, sliders)
