"""Every interactive figure of the course, at every slider's extremes.

A widget cell is ``labkit.interactive(figure_function, name=ipywidgets.FloatSlider(...), ...)``;
the figure function is pure, so it is called here with each slider at its lowest and highest
value (the others at their start values) and what it plots is checked against the physics.
The slider ranges are read from the notebook's own cell, so the test covers what a reader
can reach.  The committed output of each widget cell must carry a picture (image/png) for
readers without a kernel.
"""

from __future__ import annotations

import ast
import base64
from collections.abc import Callable
from functools import cache

import nbformat
import numpy as np
import pytest

import labkit
from labkit.actuation import servo_step, step_figure
from labkit.classroom.notebooks import course_notebooks
from labkit.solver import MAXIMP, MINIMP, solimp_figure

ipywidgets = pytest.importorskip("ipywidgets")

COURSE = {p.stem: p for p in course_notebooks()}


def python(cell: str) -> str:
    """A cell's source as plain Python (IPython magics translated)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell)


def interactive_calls(source: str) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(python(source))) if isinstance(node, ast.Call)
            and ast.unparse(node.func) == "labkit.interactive"]


def widget_cells(stem: str) -> list[nbformat.NotebookNode]:
    nb = nbformat.read(COURSE[stem], as_version=4)
    return [c for c in nb.cells if c.cell_type == "code" and interactive_calls(c.source)]


@cache
def built(stem: str) -> labkit.widgets.Interactive:
    """Run the chapter's widget cell as the notebook does, after the chapter's imports only:
    the cell must not depend on anything else the notebook computed."""
    nb = nbformat.read(COURSE[stem], as_version=4)
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
    for stem, path in COURSE.items():
        for number, cell in enumerate(nbformat.read(path, as_version=4).cells):
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
def test_the_stored_widget_output_carries_a_picture(stem):
    (cell,) = widget_cells(stem)
    (result,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert "application/vnd.jupyter.widget-view+json" in result.data, "JupyterLab gets the live widget"
    png = base64.b64decode(result.data["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000, "a static page gets the figure"
    for name in built(stem).ranges:
        assert f"{name} " in result.data["text/plain"], "the text says the sliders' ranges"


def test_interactive_reads_slider_ranges_and_adds_a_picture_to_the_widget():
    log = ipywidgets.FloatLogSlider(value=50, base=10, min=1, max=3, step=0.1)
    widget = labkit.interactive(step_figure, kp=log, kv=ipywidgets.FloatSlider(value=5, min=0, max=15),
                                gear=ipywidgets.IntSlider(value=1, min=1, max=3))
    assert widget.ranges == {"kp": (10.0, 50.0, 1000.0), "kv": (0.0, 5.0, 15.0), "gear": (1, 1, 3)}
    bundle = widget._repr_mimebundle_()
    assert {"application/vnd.jupyter.widget-view+json", "image/png", "text/plain"} <= set(bundle)
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert bundle["text/plain"] == ("interactive step_figure · kp 10 … 1000 (at 50) · kv 0 … 15 (at 5) · "
                                    "gear 1 … 3 (at 1)")
    start = widget.png()
    log.value = 200                                        # a slider move draws and shows a new picture
    assert widget.widget.result.data == widget.png(kp=200) != start
    assert widget.png() == start, "the stored picture stays the start values' one"
    again = labkit.interactive(step_figure, kp=ipywidgets.FloatLogSlider(value=50, base=10, min=1, max=3),
                               kv=ipywidgets.FloatSlider(value=5, max=15), gear=ipywidgets.IntSlider(value=1))
    assert again.png() == start, "the same values draw the same picture"
    with pytest.raises(TypeError, match="kp= should be an ipywidgets slider"):
        labkit.interactive(step_figure, kp=50)
