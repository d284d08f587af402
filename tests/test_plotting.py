"""labkit.plot and labkit.figure make figures that show once, as a cell's value."""

from __future__ import annotations

import labkit


def test_plot_and_figure_return_detached_figures(pendulum):
    import matplotlib.pyplot as plt

    model, data = pendulum
    rec = labkit.record(model, data, 20, ["qpos:swing", "site:tip"])
    fig = labkit.plot(rec)
    assert len(fig.axes[0].lines) == 1 + 3 and fig.axes[0].get_xlabel() == "time [s]"
    _, axes = labkit.figure(ncols=2)
    assert len(axes) == 2 and not plt.get_fignums()  # neither is registered with pyplot
