"""What a notebook shows besides images: numbers as text, links to sources, plots.

Executed notebooks are compared by nbval, so the same value must print the same way on
every machine.  One rule decides when a number is round-off (:func:`clean`): its size is
below ``1e-9`` of the largest magnitude it is shown with, or below ``1e-12`` absolutely
when shown alone (:func:`fmt`); round-off differs in its last bits between CPUs, so it
prints as 0.  Plots are matplotlib figures detached from pyplot, so each shows once, as
the cell's value.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .recording import Recording
    from .sources import Source

__all__ = ["clean", "figure", "fmt", "links", "plot"]

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
