"""The course as a learner meets it: JupyterLab in a real (headless) browser.

Serves JupyterLab on localhost over scratch copies of the chapters that have a widget
(JupyterLab saves the notebooks it runs; the course's own files must not change), opens
each in Debian's Chromium driven by Playwright, runs all cells, and checks that rendered
images, plots and a live widget appear, that no cell wrote an error, and that dragging a
slider redraws the widget's figure.  The screenshots are kept in ``test-artifacts/``.
The server and the page driver live in ``tests/lab_in_browser.py`` (the latency benchmark
in scripts/benchmark.py uses them too).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_in_browser import CHROMIUM_FLAGS, WIDGET, Lab, chromium, serve

CHAPTERS = {"03_actuators_force.ipynb": 3,     # chapter → sliders of its widget (renders, plots, a widget)
            "05_solver_parameters.ipynb": 5}
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """One JupyterLab server on scratch copies of the chapters; yields its base URL and token."""
    with serve(list(CHAPTERS), tmp_path_factory.mktemp("jupyterlab")) as server:
        yield server


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_a_chapter_runs_in_jupyterlab_in_a_real_browser(jupyterlab, chapter):
    from playwright.sync_api import sync_playwright

    url, token = jupyterlab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            lab = Lab(page, url, token, chapter)
            code_cells, executed = lab.run_all()
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            images = page.locator(".jp-OutputArea-output[data-mime-type='image/png'] img")
            sliders = page.locator(f"{WIDGET} .widget-slider")
            slider_count, image_count, error_count = sliders.count(), images.count(), errors.count()
            error_text = errors.first.inner_text() if error_count else ""
            redrawn = None
            if slider_count and not error_count:
                # drag the first slider's handle the way it has room to go; the figure is redrawn
                lab.wait_idle()
                before = lab.figure(0)
                left, right = lab.room(0, 0)
                lab.drag(0, 0, 60 if right >= left else -60)
                page.wait_for_function(
                    "([widget, old]) => document.querySelector(widget + ' img')?.src !== old",
                    arg=[WIDGET, before], timeout=60_000)
                redrawn = lab.figure(0) != before
                sliders.first.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / f"browser-{Path(chapter).stem}.png"))
        finally:
            browser.close()
    assert error_count == 0, f"a cell wrote to stderr or raised:\n{error_text}"
    assert executed == code_cells, f"only {executed} of {code_cells} code cells ran"
    # the chapter shows renders (labkit.show) or plots (labkit.plot), both image/png, and a widget
    assert image_count >= 2, f"only {image_count} images rendered"
    assert slider_count == CHAPTERS[chapter], f"the widget shows {slider_count} sliders"
    assert redrawn, "dragging a slider redraws the widget's figure"
