"""labkit.display: plots that show once, as a cell's value; numbers and links printed stably."""

from __future__ import annotations

import numpy as np
import pytest

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


# --- alt text -------------------------------------------------------------------------------

def test_a_figures_alt_text_names_its_title_axes_and_lines():
    from labkit.display import describe

    fig, ax = labkit.figure()
    ax.plot([0, 1], [0, 1], label="measured")
    ax.plot([0, 1], [0, 2], label="$\\omega$ predicted")
    ax.set(title="hinge angle", xlabel="time [s]", ylabel="angle [rad]")
    # what the figure was given, in the order a reader meets it; mathtext's $ dropped
    assert describe(fig) == ("plot 'hinge angle': angle [rad] against time [s]: measured, "
                             "\\omega predicted")
    fig.suptitle("a pendulum")
    assert describe(fig).startswith("plot 'a pendulum · hinge angle': ")


def test_panels_are_described_one_by_one_and_long_legends_are_cut():
    from labkit.display import MOST_LABELS, describe

    fig, (left, right) = labkit.figure(ncols=2)
    left.set(title="speed", ylabel="v [m/s]", xlabel="time [s]")
    for k in range(MOST_LABELS + 3):
        right.plot([0, 1], [k, k], label=f"case {k}")
    text = describe(fig)
    assert text.startswith("plot in 2 panels; panel 1 'speed': v [m/s] against time [s]; panel 2: ")
    assert f"case {MOST_LABELS - 1}, and 3 more" in text and f"case {MOST_LABELS}," not in text


def test_a_picture_is_one_img_with_alt_text_and_the_png_stored_once():
    import base64
    import re

    from labkit.display import image_bundle

    png = b"\x89PNG\r\n\x1a\n not really a picture"
    bundle = image_bundle(png, 'render of "arm" <at rest>', width=40, height=30)
    assert set(bundle) == {"text/html", "text/plain"}, "no image/png: the PNG is stored once"
    assert bundle["text/plain"] == 'render of "arm" <at rest>'
    html = bundle["text/html"]
    assert 'alt="render of &quot;arm&quot; &lt;at rest&gt;"' in html
    assert 'width="40"' in html and 'height="30"' in html
    payloads = re.findall(r"base64,([A-Za-z0-9+/=]+)", html)
    assert [base64.b64decode(p) for p in payloads] == [png]


@pytest.fixture
def shell():
    """An IPython shell for this test only (labkit elsewhere sees no IPython)."""
    from IPython.core.interactiveshell import InteractiveShell

    instance = InteractiveShell.instance()
    yield instance
    InteractiveShell.clear_instance()


def test_after_setup_a_figure_shows_as_an_img_with_its_description(shell):
    from IPython.utils.capture import capture_output

    from labkit.display import describe, show_figures

    assert show_figures()
    fig, ax = labkit.figure()
    ax.plot([0, 1], [1, 0], label="fall")
    ax.set(xlabel="time [s]", ylabel="height [m]")
    with capture_output() as captured:
        shell.display_formatter.format(fig)     # what a cell's value goes through
    [output] = captured.outputs
    assert set(output.data) == {"text/html", "text/plain"}
    assert output.data["text/plain"] == describe(fig)
    assert output.data["text/html"].startswith(f'<img alt="{describe(fig)}"')
    empty, _ = labkit.figure()
    empty.delaxes(empty.axes[0])
    with capture_output() as captured:
        shell.display_formatter.format(empty)
    assert [set(o.data) for o in captured.outputs] == [{"text/plain"}], "nothing drawn, no picture"


def test_where_pictures_are_not_kept_a_figure_shows_as_its_description(shell, monkeypatch):
    from IPython.utils.capture import capture_output

    from labkit.display import describe, show_figures

    assert show_figures()
    monkeypatch.setenv("LABKIT_PICTURES", "off")   # as the grader's runner sets it
    fig, ax = labkit.figure()
    ax.plot([0, 1], [1, 0], label="fall")
    drawn = []
    fig.canvas.mpl_connect("draw_event", drawn.append)
    with capture_output() as captured:
        shell.display_formatter.format(fig)
    assert [o.data for o in captured.outputs] == [{"text/plain": describe(fig)}]
    assert drawn == [], "the figure was never rasterized"


def test_outside_ipython_nothing_is_registered():
    from labkit.display import show_figures

    assert show_figures() is False
