"""labkit.display: plots that show once, as a cell's value; numbers and links printed stably."""

from __future__ import annotations

import numpy as np

import labkit


def test_plot_and_figure_return_detached_figures(pendulum):
    import matplotlib.pyplot as plt

    model, data = pendulum
    signals = {"angle": data.joint("swing").qpos, "tip": data.site("tip").xpos}
    rec = labkit.record(model, data, signals, nstep=20)
    fig = labkit.plot(rec)
    assert len(fig.axes[0].lines) == 1 + 3 and fig.axes[0].get_xlabel() == "time [s]"
    _, axes = labkit.figure(ncols=2)
    assert len(axes) == 2 and not plt.get_fignums()  # neither is registered with pyplot


def test_one_rule_for_round_off():
    from labkit.display import clean, fmt, links
    from labkit.sources import cite

    np.testing.assert_array_equal(clean([1.0, 3e-12, -2e-10]), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(clean([5e-7, 3e-12], scale=1e3), [0.0, 0.0])     # next to 1000
    assert fmt(3e-13) == "0" and fmt(2e-12) == "2e-12" and fmt(0.0123, unit="m") == "0.0123 m"
    html = links([cite("mjmodel.h:nq"), cite("#1741")])
    assert html.count("<a href=") == 2 and "mujoco#1741" in html
