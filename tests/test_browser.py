"""The course as a learner meets it: JupyterLab in a real (headless) browser.

Serves JupyterLab on localhost over a scratch copy of one chapter (JupyterLab saves the
notebooks it runs; the course's own file must not change), opens it in Debian's
Chromium driven by Playwright, runs all cells, and checks that rendered images, plots and
a live widget appear and that no cell wrote an error.  The screenshot is kept in
``test-artifacts/``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from labkit.classroom.notebooks import course_dir
from labkit.models import models_dir

CHAPTER = "03_actuators_force.ipynb"  # has renders, plots and a widget
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = os.environ.get("LABKIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("the browser test needs Chromium: ./run.sh test installs Debian's 'chromium' "
                    "package; elsewhere install Chromium and set LABKIT_CHROMIUM=/path/to/it")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path):
    """A JupyterLab server on a scratch copy of the chapter; yields its base URL and token."""
    work = tmp_path / "course"
    work.mkdir()
    shutil.copy(course_dir() / CHAPTER, work)
    port, token = free_port(), secrets.token_hex(16)
    # user settings: render every cell (JupyterLab's windowing drops off-screen cells from
    # the page) and do not ask about news
    settings = tmp_path / "settings" / "@jupyterlab"
    for extension, file, value in (("notebook-extension", "tracker", '{"windowingMode": "none"}'),
                                   ("apputils-extension", "notification", '{"fetchNews": "false"}')):
        (settings / extension).mkdir(parents=True)
        (settings / extension / f"{file}.jupyterlab-settings").write_text(value)
    log = open(tmp_path / "jupyterlab.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}", "--allow-root",
         "--LabApp.expose_app_in_browser=True"],
        env={**os.environ, "LABKIT_MODELS": str(models_dir()), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
             "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings")},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                log.close()
                pytest.fail("JupyterLab did not start:\n" + (tmp_path / "jupyterlab.log").read_text()[-3000:])
            time.sleep(0.5)
    try:
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_a_chapter_runs_in_jupyterlab_in_a_real_browser(jupyterlab):
    from playwright.sync_api import sync_playwright

    url, token = jupyterlab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/lab/tree/{CHAPTER}?token={token}")
            page.wait_for_function("window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell')",
                                   timeout=120_000)
            # the kernel is connected and idle (the toolbar's indicator says idle before that)
            page.wait_for_function("""() => {
                const kernel = window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel;
                return kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
            }""", timeout=120_000, polling=500)
            code_cells = page.locator(".jp-Notebook .jp-CodeCell").count()
            page.locator(".jp-Notebook .jp-Cell").first.click()  # the notebook is the active widget
            page.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
            page.wait_for_function("!document.querySelector('.jp-OutputArea-output img')", timeout=30_000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            # every code cell gets an execution count (or one fails and stops the run), and
            # nothing is still running
            page.wait_for_function(
                """n => {
                    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
                    const done = prompts.filter(p => /\\[\\d+\\]/.test(p.textContent)).length;
                    const busy = prompts.some(p => p.textContent.includes('*'));
                    const failed = document.querySelector(
                        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']");
                    return !busy && (done === n || failed !== null);
                }""", arg=code_cells, timeout=240_000, polling=1000)
            executed = page.evaluate("""[...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                .filter(p => /\\[\\d+\\]/.test(p.textContent)).length""")
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            images = page.locator(".jp-OutputArea-output[data-mime-type='image/png'] img")
            sliders = page.locator(".jp-OutputArea-output .widget-slider")
            slider_count, image_count, error_count = sliders.count(), images.count(), errors.count()
            if slider_count:
                sliders.first.scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "browser-03_actuators_force.png"))
            error_text = errors.first.inner_text() if error_count else ""
        finally:
            browser.close()
    assert error_count == 0, f"a cell wrote to stderr or raised:\n{error_text}"
    assert executed == code_cells, f"only {executed} of {code_cells} code cells ran"
    # the chapter shows renders (labkit.show) and plots (labkit.plot), both image/png, and a widget
    assert image_count >= 2, f"only {image_count} images rendered"
    assert slider_count >= 3, "the kp/kv/gear widget did not render"
