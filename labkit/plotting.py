"""Plot recorded signals against time: ``labkit.plot``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .recording import Recording

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["figure", "plot"]


def figure(size: tuple[float, float] = (6.4, 3.2), *, ncols: int = 1) -> tuple[Figure, object]:
    """A new matplotlib Figure and its Axes (an array of them when ``ncols > 1``), for plots
    :func:`plot` does not make.  Like :func:`plot`'s figures, it is detached from pyplot,
    so it shows once, as the cell's last value.  ``size`` is in inches."""
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

    signals: names of recorded signals (default: all of them); vector signals draw one
    line per component.  Returns the matplotlib Figure: it shows inline as a cell's
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
    units = {recording.units.get(n, "") for n in names} - {""}
    ax.set_xlabel("time [s]")
    unit = f" [{units.pop()}]" if len(units) == 1 else ""
    default = (labels[0] if labels else names[0]) + unit if len(names) == 1 else unit.strip()
    ax.set_ylabel(ylabel or default)
    if title:
        ax.set_title(title)
    if len(ax.lines) > 1:
        ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    return fig
