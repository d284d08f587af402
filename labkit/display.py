"""What a notebook shows besides images: numbers as text, links to sources, plots.

Executed notebooks are compared by nbval, so the same value must print the same way on
every machine.  One rule decides when a number is round-off (:func:`clean`): its size is
below ``1e-9`` of the largest magnitude it is shown with, or below ``1e-12`` absolutely
when shown alone (:func:`fmt`); round-off differs in its last bits between CPUs, so it
prints as 0.  Plots are matplotlib figures detached from pyplot, so each shows once, as
the cell's value.

Every picture labkit shows carries alt text that says what it shows (:func:`image_bundle`):
its output is ``text/html``, an ``<img alt="...">`` with the PNG inline, which JupyterLab
and the course's site rank above ``image/png`` (whose renderers set no alt), and a
``text/plain`` saying the same as the alt, which nbval compares (the pixels, masked by the
test suite's sanitizer, are not).  The PNG is stored once.  After :func:`labkit.setup`, a
matplotlib Figure shown as a cell's value (or by pyplot) is shown that way too, its alt
made from its titles, axis labels and legend (:func:`describe`).

Where nothing shown is kept, nothing is drawn: the grader's runner sets
``LABKIT_PICTURES=off`` (:func:`pictures_kept`), and there a Figure shows as its text, a
render is not made and a video is filmed (its frames are returned) but not encoded.
"""

from __future__ import annotations

import base64
import html
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .recording import Recording
    from .sources import Source

__all__ = ["clean", "describe", "figure", "fmt", "image_bundle", "image_html", "links",
           "pictures_kept", "plot", "show_figures"]

ROUND_OFF = 1e-9
"""A value below ``ROUND_OFF`` times the magnitude it is shown with is round-off."""

_ZERO = 1e-12   # fmt: a value shown alone, below this, is round-off


def _float(x: float, digits: int) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) < _ZERO:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


def fmt(value: Any, digits: int = 4, unit: str = "") -> str:
    """Format ``value`` (number, bool, string, array, sequence or mapping) for display.

    Floats get ``digits`` significant digits; arrays keep their shape in brackets.
    ``unit`` is appended after a space (e.g. ``fmt(0.0123, unit="m")`` → ``"0.0123 m"``).

    Example: ``labkit.fmt(0.0123, unit="m")`` → ``"0.0123 m"``.
    """
    text = _fmt(value, digits)
    return f"{text} {unit}" if unit else text


def _fmt(value: Any, digits: int) -> str:
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return _float(float(value), digits)
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _fmt(value.item(), digits)
        return "[" + ", ".join(_fmt(v, digits) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_fmt(v, digits)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(_fmt(v, digits) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, Sequence):
        return "[" + ", ".join(_fmt(v, digits) for v in value) + "]"
    return repr(value)


def clean(values: Any, scale: float = 1.0) -> np.ndarray:
    """``values`` with round-off set to 0: entries below ``ROUND_OFF`` times the largest of
    1, ``|scale|`` and the largest entry; shape unchanged.

    Example: ``clean([1.0, 3e-12])`` → ``array([1., 0.])``.
    """
    array = np.asarray(values, dtype=float)
    finite = array[np.isfinite(array)]
    limit = ROUND_OFF * max(1.0, abs(scale), float(np.max(np.abs(finite), initial=0.0)))
    return np.where(np.abs(array) < limit, 0.0, array)


def links(sources: Iterable[Source]) -> str:
    """HTML for a list of sources: each label a link to its permalink, joined by " · ".

    Example: ``links([labkit.sources.cite("mjmodel.h:nq")])``.
    """
    return " · ".join(
        f'<a href="{html.escape(s.url)}" target="_blank">{html.escape(s.label)}</a>' if s.url
        else html.escape(s.label) for s in sources)


def figure(size: tuple[float, float] = (6.4, 3.2), *, ncols: int = 1) -> tuple[Figure, object]:
    """A new matplotlib Figure and its Axes (an array of them when ``ncols > 1``), for plots
    :func:`plot` does not make.  Like :func:`plot`'s figures, it is detached from pyplot,
    so it shows once, as the cell's last value.  ``size`` is in inches.

    Example: ``fig, ax = labkit.figure(); ax.plot(rec.t, rec["angle"]); fig``.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=size, layout="constrained")
    plt.close(fig)
    return fig, axes


def plot(
    recording: Recording,
    *signals: str,
    title: str | None = None,
    ylabel: str | None = None,
    labels: Sequence[str] | None = None,
    size: tuple[float, float] = (6.4, 3.2),
) -> Figure:
    """Plot signals of a :class:`~labkit.recording.Recording` against time.

    Example: ``labkit.plot(rec, "angle", ylabel="angle [rad]")``.

    signals: names of recorded signals (default: all of them); vector signals draw one
    line per component.  ylabel: the y axis label, with its unit (default: the signal's
    name when there is one).  Returns the matplotlib Figure: it shows inline as a cell's
    last value, and can be refined first (``fig.axes[0].axhline(...)``).
    """
    __tracebackhide__ = True
    import matplotlib.pyplot as plt

    names = list(signals) or list(recording)
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    plt.close(fig)  # detach from pyplot: the figure shows once, as the cell's value
    for i, name in enumerate(names):
        values = np.asarray(recording[name])
        base = labels[i] if labels else name
        if values.ndim == 1:
            ax.plot(recording.t, values, label=base)
        else:
            for k in range(values.shape[1]):
                ax.plot(recording.t, values[:, k], label=f"{base}[{k}]")
    ax.set_xlabel("time [s]")
    ax.set_ylabel(ylabel or ((labels[0] if labels else names[0]) if len(names) == 1 else ""))
    if title:
        ax.set_title(title)
    if len(ax.lines) > 1:
        ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    return fig


# --- pictures with alt text ------------------------------------------------------------------

MOST_LABELS = 8
""":func:`describe` names at most this many legend entries of one Axes, then "and N more"."""


def _plain(text: str) -> str:
    """A label as read aloud: mathtext's ``$`` delimiters dropped, whitespace collapsed."""
    return " ".join(text.replace("$", "").split())


def _entries(ax: Any) -> list[str]:
    legend = ax.get_legend()
    if legend is not None:
        labels = [_plain(t.get_text()) for t in legend.get_texts()]
    else:
        labels = [_plain(label) for label in ax.get_legend_handles_labels()[1]]
    labels = [label for label in labels if label]
    if len(labels) > MOST_LABELS:
        labels = [*labels[:MOST_LABELS], f"and {len(labels) - MOST_LABELS} more"]
    return labels


def _axes_text(ax: Any) -> tuple[str, str]:
    """(title, what is plotted) of one Axes: ``"angle [rad] against time [s]: a, b"``."""
    title = " · ".join(_plain(ax.get_title(loc)) for loc in ("left", "center", "right")
                       if ax.get_title(loc).strip())
    y, x = _plain(ax.get_ylabel()), _plain(ax.get_xlabel())
    z = _plain(ax.get_zlabel()) if hasattr(ax, "get_zlabel") else ""
    what = " and ".join(v for v in (y, z) if v) or "values"
    text = f"{what} against {x}" if x else what
    if ax.images and not ax.lines:
        text += " (an image)"
    entries = _entries(ax)
    return title, text + (f": {', '.join(entries)}" if entries else "")


def describe(fig: Figure) -> str:
    """Alt text for a matplotlib Figure: its title and, per Axes, what is plotted against
    what, then the lines' labels, e.g. ``"plot 'hinge angle': angle [rad] against time [s]:
    measured, predicted"``; several Axes are listed as panels, each with its own title.
    Colour bars are left out.

    Example: ``labkit.display.describe(labkit.plot(rec, "angle"))``.
    """
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    suptitle = getattr(fig, "_suptitle", None)
    title = _plain(suptitle.get_text()) if suptitle is not None else ""
    if not axes:
        return "plot" + (f" '{title}'" if title else "") + " (empty)"
    if len(axes) == 1:
        own, text = _axes_text(axes[0])
        title = " · ".join(t for t in (title, own) if t)
        return "plot" + (f" '{title}'" if title else "") + f": {text}"
    panels = []
    for k, ax in enumerate(axes):
        own, text = _axes_text(ax)
        panels.append(f"panel {k + 1}" + (f" '{own}'" if own else "") + f": {text}")
    return ("plot" + (f" '{title}'" if title else "") + f" in {len(axes)} panels; "
            + "; ".join(panels))


def image_html(png: bytes, alt: str, *, width: int | None = None,
               height: int | None = None) -> str:
    """An ``<img>`` holding ``png`` (the PNG file's bytes) inline, with ``alt`` as its text
    alternative and tooltip; ``width``/``height`` (pixels) set its displayed size, and it never
    grows wider than its box."""
    size = "".join(f' {k}="{int(v)}"' for k, v in (("width", width), ("height", height)) if v)
    encoded = base64.b64encode(png).decode("ascii")
    text = html.escape(alt)
    return (f'<img alt="{text}" title="{text}"{size} style="max-width:100%;height:auto" '
            f'src="data:image/png;base64,{encoded}"/>')


def image_bundle(png: bytes, alt: str, **size: int | None) -> dict[str, str]:
    """A picture as a notebook output: ``{"text/html": <img alt=...>, "text/plain": alt}``
    (see the module's docstring); ``size`` as in :func:`image_html`.  Show it with
    ``IPython.display.display(bundle, raw=True)``."""
    return {"text/html": image_html(png, alt, **size), "text/plain": alt}


def pictures_kept() -> bool:
    """False where whatever a notebook displays is thrown away unseen, so that drawing it
    would only cost time: ``LABKIT_PICTURES=off`` in the environment, which the grader's
    sandboxed runner sets (it keeps nothing but answers; drawing was a fifth of the course's
    run there, 110 s of which 21 s went on pictures)."""
    return os.environ.get("LABKIT_PICTURES", "").lower() != "off"


def _show_figure(fig: Figure) -> None:
    """IPython's display hook for matplotlib Figures (registered by :func:`show_figures`):
    the PNG matplotlib's inline backend would show, as :func:`image_bundle` with the
    figure's :func:`describe` as alt text; only that text where pictures are not kept."""
    from IPython.core.pylabtools import print_figure
    from IPython.display import display

    if not pictures_kept():
        display({"text/plain": describe(fig)}, raw=True)
        return
    png = print_figure(fig, "png", bbox_inches="tight")   # None when nothing is drawn
    if not png:  # as IPython shows an empty figure: a line of text
        display({"text/plain": repr(fig)}, raw=True)
        return
    display(image_bundle(png, describe(fig)), raw=True)


def show_figures() -> bool:
    """Make IPython show matplotlib Figures with alt text (:func:`_show_figure`), through its
    hook for an object's own display (``ipython_display_formatter``), registered by the
    class's name: matplotlib is not imported.  :func:`labkit.setup` calls it.  False (and
    nothing changed) outside IPython."""
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return False
    shell.display_formatter.ipython_display_formatter.for_type_by_name(
        "matplotlib.figure", "Figure", _show_figure)
    return True
