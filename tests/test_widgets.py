"""Every interactive figure of the course, at every slider's extremes.

A widget cell is ``labkit.interactive(figure_function, name=ipywidgets.FloatSlider(...), ...)``;
the figure function is pure, so it is called here with each slider at its lowest and highest
value (the others at their start values) and what it plots is checked against the physics.
The slider ranges are read from the notebook's own cell, so the test covers what a reader
can reach.  The committed output of each widget cell must carry a picture with alt text for
readers without a kernel; every picture the widget draws is the one ``savefig`` would write;
and a saved widget view whose state is not stored falls back to that picture
(``labkit.widgets.pre_save_hook``, set up for JupyterLab by the files in binder/).
"""

from __future__ import annotations

import ast
import base64
import copy
import html
import io
import json
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import nbformat
import numpy as np
import pytest

import labkit
from labkit.actuation import servo_step, step_figure
from labkit.classroom.notebooks import course_notebooks
from labkit.display import describe
from labkit.solver import MAXIMP, MINIMP, solimp_figure
from labkit.widgets import WIDGET_STATE, WIDGET_VIEW, pre_save_hook

ipywidgets = pytest.importorskip("ipywidgets")

COURSE = {p.stem: p for p in course_notebooks()}
BINDER = Path(__file__).resolve().parent.parent / "binder"


def python(cell: str) -> str:
    """A cell's source as plain Python (IPython magics translated)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell)


def interactive_calls(source: str) -> list[ast.Call]:
    if "interactive" not in source:    # a call needs the name: skip parsing the other cells
        return []
    return [node for node in ast.walk(ast.parse(python(source))) if isinstance(node, ast.Call)
            and ast.unparse(node.func) == "labkit.interactive"]


@cache
def notebook(stem: str) -> nbformat.NotebookNode:
    """A chapter as committed, read once for the module (read-only)."""
    return nbformat.read(COURSE[stem], as_version=4)


def widget_cells(stem: str) -> list[nbformat.NotebookNode]:
    nb = notebook(stem)
    return [c for c in nb.cells if c.cell_type == "code" and interactive_calls(c.source)]


@cache
def built(stem: str) -> labkit.widgets.Interactive:
    """Run the chapter's widget cell as the notebook does, after the chapter's imports only:
    the cell must not depend on anything else the notebook computed."""
    nb = notebook(stem)
    namespace: dict = {"labkit": labkit}
    for cell in nb.cells:
        if cell.cell_type == "code":
            for node in ast.parse(python(cell.source)).body:
                if isinstance(node, ast.Import | ast.ImportFrom):
                    exec(compile(ast.Module([node], []), stem, "exec"), namespace)
    (cell,) = widget_cells(stem)
    tree = ast.parse(python(cell.source))
    *body, last = tree.body
    exec(compile(ast.Module(body, []), stem, "exec"), namespace)
    widget = eval(compile(ast.Expression(last.value), stem, "eval"), namespace)
    assert isinstance(widget, labkit.widgets.Interactive), "the cell's value is the labkit.interactive"
    return widget


def settings(widget: labkit.widgets.Interactive) -> list[tuple[str, dict[str, float]]]:
    """The start values, then each slider alone at its lowest and highest value."""
    start = {name: value for name, (_, value, _) in widget.ranges.items()}
    cases = [("start", start)]
    for name, (low, _, high) in widget.ranges.items():
        cases += [(f"{name} lowest", {**start, name: low}), (f"{name} highest", {**start, name: high})]
    return cases


def pixels(png: bytes) -> np.ndarray:
    """A PNG's pixels, (height, width, 4) uint8."""
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def savefig(fig) -> np.ndarray:
    """The figure's pixels as matplotlib's own savefig draws them (the reference)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return pixels(buffer.getvalue())


def curve(fig) -> tuple[np.ndarray, np.ndarray]:
    line = fig.axes[0].lines[0]
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)


# --- what each figure must show ---------------------------------------------------------------

def arm_balance(kp: float, gear: float, target: float) -> float:
    """The exact rest angle under gravity: kp·gear²·(target − q) = m·g·L·cos q (bisection)."""
    model, _ = labkit.load("actuator_arm")
    mgl = model.body("arm").mass[0] * 9.81 * 0.5
    low, high = -np.pi / 2, target
    for _ in range(100):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if kp * gear**2 * (target - mid) > mgl * np.cos(mid) else (low, mid)
    return 0.5 * (low + high)


def servo_sane(values: dict[str, float], x: np.ndarray, y: np.ndarray) -> None:
    kp, kv, gear = values["kp"], values["kv"], values["gear"]
    step = servo_step(kp, kv, gear)
    np.testing.assert_array_equal(y, step.angle)          # the figure plots the simulation
    assert x[0] == 0 and x[-1] == pytest.approx(1.5) and y[0] == 0, "the step starts at rest, at 0"
    assert np.all(np.abs(y) <= 1.2 + 0.05), "the arm stays within its joint range (soft limit)"
    assert step.rest < step.target, "gravity makes the servo rest short of its target"
    assert step.omega_h < 2, "every slider setting is stable under Euler"
    # slowest pole's decay rate: ζω below critical damping, ω(ζ − √(ζ² − 1)) above
    decay = step.omega * (step.zeta if step.zeta <= 1 else step.zeta - np.sqrt(step.zeta**2 - 1))
    balance = arm_balance(kp, gear, step.target)
    if kv > 0:   # damped: the error decays inside the 2nd-order envelope (3×: overshoot, nonlinear gravity)
        bound = 3 * np.exp(-decay * 1.5) * abs(balance) + 0.005
        assert abs(y[-1] - balance) < bound, f"heads for the balance {balance:.3f} rad, ends at {y[-1]:.3f}"
    if decay * 1.5 > 5:                                    # settled: the error is below e⁻⁵ of the step
        assert abs(y[-1] - step.rest) < abs(step.target - step.rest), "the predicted rest is the better guess"
        tail = np.abs(y[-len(y) // 5:] - balance).max()
        assert tail < np.abs(y[: len(y) // 5] - balance).max(), "the error shrinks over time"
    elif kv == 0:                                          # undamped: oscillates about the balance
        assert y.max() > balance > y.min()


def solimp_sane(values: dict[str, float], x: np.ndarray, y: np.ndarray) -> None:
    dmin, dmax = (float(np.clip(values[k], MINIMP, MAXIMP)) for k in ("dmin", "dmax"))
    assert x[0] == 0 and x[-1] == pytest.approx(3.0), "violation 0 to 3 mm"
    assert np.all((y >= min(dmin, dmax) - 1e-12) & (y <= max(dmin, dmax) + 1e-12)), "d stays in [dmin, dmax]"
    assert np.all((y > 0) & (y < 1)), "the impedance is a fraction"
    assert y[0] == pytest.approx(dmin if dmin != dmax else dmax, abs=1e-12), "d(0) = dmin"
    width_mm = 1e3 * values["width"]
    np.testing.assert_allclose(y[x >= width_mm], dmax, atol=1e-12)   # beyond the width: dmax
    steps = np.diff(y) * np.sign(dmax - dmin)
    assert np.all(steps >= -1e-12), "d moves monotonically from dmin to dmax"


WIDGETS: dict[str, tuple[Callable, Callable]] = {
    # chapter → (the figure function its widget drives, what every plotted curve must satisfy)
    "03_actuators_force": (step_figure, servo_sane),
    "05_solver_parameters": (solimp_figure, solimp_sane),
}


# --- the tests ----------------------------------------------------------------------------------

def test_every_widget_of_the_course_is_listed_here():
    """A new widget (or one built with ipywidgets directly, which stores no picture) fails
    until it is a labkit.interactive listed in WIDGETS."""
    found, raw = {}, []
    for stem in COURSE:
        for number, cell in enumerate(notebook(stem).cells):
            if cell.cell_type != "code":
                continue
            calls = interactive_calls(cell.source)
            for call in calls:
                found.setdefault(stem, []).append(ast.unparse(call.args[0]) if call.args else "?")
            uses = [line for line in cell.source.splitlines()
                    if "ipywidgets." in line and not line.lstrip().startswith(("import", "from"))]
            if uses and not calls:
                raw.append(f"{stem} cell {number}: {uses[0].strip()}")
    assert not raw, f"use labkit.interactive (it stores a picture of the figure): {raw}"
    assert set(found) == set(WIDGETS), f"widgets found in {sorted(found)}, listed for {sorted(WIDGETS)}"
    for stem, names in found.items():
        assert len(names) == 1, f"{stem} has {len(names)} widgets; list each one"
        assert built(stem).figure is WIDGETS[stem][0], f"{stem}'s widget drives {names[0]}"


@pytest.mark.parametrize("stem", sorted(WIDGETS))
def test_the_figure_is_sane_and_moves_at_every_slider_extreme(stem):
    widget = built(stem)
    function, sane = WIDGETS[stem]
    assert widget.sliders, "the widget has sliders"
    curves = {}
    for label, values in settings(widget):
        fig = function(**values)
        x, y = curve(fig)
        assert len(x) == len(y) > 100 and np.all(np.isfinite(y)), f"{label}: finite data"
        assert fig.axes[0].get_title(), f"{label}: the figure says what it shows"
        sane(values, x, y)
        curves[label] = y
    for name in widget.ranges:
        low, high = curves[f"{name} lowest"], curves[f"{name} highest"]
        assert np.abs(low - high).max() > 1e-3, f"{name} from its lowest to its highest changes the curve"


@pytest.mark.parametrize("stem", sorted(WIDGETS))
def test_the_stored_widget_output_carries_a_picture_with_alt_text(stem):
    (cell,) = widget_cells(stem)
    (result,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert WIDGET_VIEW in result.data, "JupyterLab gets the live widget"
    shown = result.data["text/html"]
    (encoded,) = re.findall(r'src="data:image/png;base64,([^"]+)"', shown)
    png = base64.b64decode(encoded)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000, "a static page gets the figure"
    widget = built(stem)
    start = {name: value for name, (_, value, _) in widget.ranges.items()}
    (alt,) = re.findall(r'alt="([^"]*)"', shown)
    assert html.unescape(alt) == describe(WIDGETS[stem][0](**start)), \
        "the alt text says what the picture at the start values shows"
    for name in widget.ranges:
        assert f"{name} " in result.data["text/plain"], "the text says the sliders' ranges"


@pytest.mark.parametrize("stem", sorted(WIDGETS))
def test_every_picture_is_the_figure_as_savefig_draws_it(stem):
    """The widget redraws only what changes on its kept background: the pictures must still be
    matplotlib's own, pixel for pixel, wherever the sliders go."""
    widget = built(stem)
    for label, values in settings(widget)[1:]:       # the start picture is drawn whole anyway
        drawn = pixels(widget.png(**values))
        expected = savefig(WIDGETS[stem][0](**values))
        assert drawn.shape == expected.shape, label
        assert np.count_nonzero((drawn != expected).any(axis=-1)) == 0, f"{label}: pixels differ"
    # both figures fix their axes' limits: every setting shares the start's background, so
    # the pictures above were drawn on it, not whole
    assert len(widget._painter._kept) == 1


def test_a_figure_whose_background_changes_is_drawn_whole():
    """Limits or a suptitle that change with a slider are redrawn, not reused."""
    def rising(top: float):
        fig, ax = labkit.figure()
        ax.plot([0, 1], [0, top], label="a line")
        ax.set(title=f"up to {top:g}", xlabel="x [m]", ylabel="y [m]",
               ylim=(0, 10 if top <= 10 else 100))
        if top > 100:
            fig.suptitle("a big one")
        return fig

    widget = labkit.interactive(rising, top=ipywidgets.FloatSlider(value=1, min=0.5, max=1000))
    for top in (2.0, 5.0, 50.0, 90.0, 500.0, 8.0):
        assert np.array_equal(pixels(widget.png(top=top)), savefig(rising(top))), top
    assert len(widget._painter._kept) == 2, "a background per y range; with a suptitle: drawn whole"


def notebook_with(outputs: list[dict], state: dict) -> dict:
    cells = [{"cell_type": "code", "source": "", "metadata": {}, "outputs": [o],
              "execution_count": 1} for o in outputs]
    return {"cells": cells, "metadata": {"widgets": {WIDGET_STATE: {"state": state}}},
            "nbformat": 4, "nbformat_minor": 5}


def test_a_saved_widget_view_without_its_state_falls_back_to_its_picture():
    picture = {"text/html": '<img alt="a plot" src="data:image/png;base64,iVBO"/>',
               "text/plain": "a plot"}

    def output(model_id: str, **data: str) -> dict:
        return {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                "data": {WIDGET_VIEW: {"model_id": model_id, "version_major": 2}, **data}}

    stored, lost = output("a", **picture), output("b", **picture)
    plain = output("c", **{"text/plain": "x"})
    notebook = notebook_with([stored, lost, plain], {"a": {"state": {}}})
    before = copy.deepcopy(notebook)
    pre_save_hook(model={"type": "notebook", "content": notebook}, path="x.ipynb")
    kept = [set(cell["outputs"][0]["data"]) for cell in notebook["cells"]]
    assert kept == [set(stored["data"]), set(picture), {WIDGET_VIEW, "text/plain"}], \
        "a stored view stays, a lost one keeps its picture, one without a picture is left alone"
    assert notebook["metadata"] == before["metadata"], "the widget state is not touched"
    assert notebook["cells"][1]["outputs"][0]["data"] == picture, "the picture itself is unchanged"
    odd = {"cells": [{"cell_type": "markdown"}], "metadata": {"widgets": "odd"}}
    for model in ({"type": "file", "content": "text"}, {"type": "notebook", "content": {"cells": []}},
                  {"type": "notebook", "content": odd}):
        untouched = copy.deepcopy(model)
        pre_save_hook(model=model, path="x")
        assert model == untouched


def test_the_course_environment_saves_widget_state_and_runs_the_hook():
    """binder/ holds JupyterLab's settings override and the server extension; ./run.sh (and
    Binder's postBuild) install them where this environment's JupyterLab reads them."""
    from traitlets.utils.importstring import import_item

    overrides = json.loads((BINDER / "overrides.json").read_text())
    (plugin, settings), = overrides.items()
    package, _, name = plugin.partition(":")
    labextension = Path(sys.prefix) / "share/jupyter/labextensions" / package
    schema = json.loads((labextension / "schemas" / package / f"{name}.json").read_text())
    assert schema["properties"]["saveState"]["type"] == "boolean"
    assert settings == {"saveState": True}
    extension = json.loads((BINDER / "jupyter_server_extension.json").read_text())
    (module, enabled), = extension["ServerApp"]["jpserver_extensions"].items()
    points = import_item(module)._jupyter_server_extension_points()
    assert enabled and points == [{"module": module}]
    assert import_item(f"{module}.pre_save_hook") is pre_save_hook
    installed = {"share/jupyter/lab/settings/overrides.d": "overrides.json",
                 "etc/jupyter/jupyter_server_config.d": "jupyter_server_extension.json"}
    for folder, source in installed.items():
        copy_ = Path(sys.prefix) / folder / "mujoco-by-experiment.json"
        assert copy_.exists() and copy_.read_text() == (BINDER / source).read_text(), \
            f"{copy_} should be binder/{source}: ./run.sh installs it (python_env)"
        assert f"cp binder/{source} \"$prefix/{folder}/mujoco-by-experiment.json\"" in \
            (BINDER / "postBuild").read_text(), f"Binder's postBuild installs binder/{source}"


def test_interactive_reads_slider_ranges_and_adds_a_picture_to_the_widget():
    log = ipywidgets.FloatLogSlider(value=50, base=10, min=1, max=3, step=0.1)
    widget = labkit.interactive(step_figure, kp=log, kv=ipywidgets.FloatSlider(value=5, min=0, max=15),
                                gear=ipywidgets.IntSlider(value=1, min=1, max=3))
    assert widget.ranges == {"kp": (10.0, 50.0, 1000.0), "kv": (0.0, 5.0, 15.0), "gear": (1, 1, 3)}
    bundle = widget._repr_mimebundle_()
    assert set(bundle) == {WIDGET_VIEW, "text/html", "text/plain"}
    assert bundle["text/plain"] == ("interactive step_figure · kp 10 … 1000 (at 50) · kv 0 … 15 (at 5) · "
                                    "gear 1 … 3 (at 1)")
    start = widget.picture()
    assert start.png.startswith(b"\x89PNG") and start.alt == describe(step_figure(50, 5, 1))
    assert base64.b64encode(start.png).decode() in bundle["text/html"], "it shows the start picture"
    height, width, _ = pixels(start.png).shape
    assert f'width="{width}" height="{height}"' in bundle["text/html"], "its size keeps the layout"
    (shown,) = widget.widget.out.outputs
    assert shown["data"] == start._repr_mimebundle_(), "the widget's output area starts with it too"
    log.value = 200                                        # a slider move draws and shows a new picture
    assert widget.widget.result == widget.picture(kp=200) != start
    assert "kp 200," in widget.widget.result.alt, "its alt text follows the sliders"
    assert widget.png() == start.png, "the stored picture stays the start values' one"
    again = labkit.interactive(step_figure, kp=ipywidgets.FloatLogSlider(value=50, base=10, min=1, max=3),
                               kv=ipywidgets.FloatSlider(value=5, max=15), gear=ipywidgets.IntSlider(value=1))
    assert again.png() == start.png, "the same values draw the same picture"
    with pytest.raises(TypeError, match="kp= should be an ipywidgets slider"):
        labkit.interactive(step_figure, kp=50)
