"""JupyterLab in a headless Chromium: shared by tests/test_browser.py and scripts/benchmark.py.

:func:`serve` starts JupyterLab on scratch copies of chapters (JupyterLab saves the
notebooks it runs; the course's own files must not change); :class:`Lab` drives one
notebook page through Playwright: open it, run all cells, move a widget's slider and time
the new figure, save, shut the kernel down, reload, and say what a widget cell shows.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labkit.classroom.notebooks import course_dir
from labkit.models import models_dir

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDGET = ".jp-OutputArea-output .widget-interact"   # a labkit.interactive (ipywidgets.interactive) view
# JavaScript: the first code cell on the page whose code calls labkit.interactive (or undefined)
WIDGET_CELL = """() => [...document.querySelectorAll('.jp-CodeCell')].find(
    c => c.querySelector('.jp-InputArea')?.textContent.includes('labkit.interactive('))"""


def chromium() -> str:
    path = os.environ.get("LABKIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise RuntimeError("the browser test needs Chromium: ./run.sh test installs Debian's 'chromium' "
                           "package; elsewhere install Chromium and set LABKIT_CHROMIUM=/path/to/it")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(chapters: Sequence[str], scratch: Path, *,
          windowing: str = "none") -> Iterator[tuple[str, str]]:
    """A JupyterLab server on copies of ``chapters`` (file names in course/) in ``scratch``;
    yields its base URL and token, and stops it afterwards.  ``windowing``: the notebook's
    windowing mode; "none" (the tests) puts every cell on the page at once, so that what a
    run shows can be counted; "contentVisibility", JupyterLab 4.6's default, attaches cells
    off screen later and does not paint them (what a learner's JupyterLab does)."""
    work = scratch / "course"
    work.mkdir(parents=True)
    for chapter in chapters:
        shutil.copy(course_dir() / chapter, work)
    port, token = free_port(), secrets.token_hex(16)
    # user settings: the windowing mode, and do not ask about news
    settings = scratch / "settings" / "@jupyterlab"
    cells = json.dumps({"windowingMode": windowing})
    for extension, file, value in (("notebook-extension", "tracker", cells),
                                   ("apputils-extension", "notification", '{"fetchNews": "false"}')):
        (settings / extension).mkdir(parents=True)
        (settings / extension / f"{file}.jupyterlab-settings").write_text(value)
    log = open(scratch / "jupyterlab.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}", "--allow-root",
         "--LabApp.expose_app_in_browser=True"],
        env={**os.environ, "LABKIT_MODELS": str(models_dir()), "JUPYTER_CONFIG_DIR": str(scratch / "cfg"),
             "JUPYTERLAB_SETTINGS_DIR": str(scratch / "settings")},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError("JupyterLab did not start:\n"
                                       + (scratch / "jupyterlab.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield url, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


class Lab:
    """One notebook open in JupyterLab, in a Playwright ``page``."""

    def __init__(self, page: Any, url: str, token: str, chapter: str) -> None:
        self.page, self.chapter = page, chapter
        # a workspace of its own, reset: only this notebook is open (JupyterLab would restore
        # the tabs an earlier page of the same server had open)
        page.goto(f"{url}/lab/workspaces/{Path(chapter).stem}/tree/{chapter}?token={token}&reset")
        self._opened()

    def _opened(self) -> None:
        self.page.wait_for_function(
            "window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell')", timeout=120_000)
        self.wait_idle(120_000)

    def reload(self) -> None:
        """Reload the page (the notebook reopens from its file; JupyterLab starts a kernel if
        none runs for it), until its kernel is idle and the widget cell shows something other
        than "Loading widget..." (a widget, a picture or an error)."""
        self.page.reload()
        self._opened()
        self.scroll_to_widgets()
        self.page.wait_for_function("""() => {
            const cell = (""" + WIDGET_CELL + """)();
            if (!cell) return false;
            const out = cell.querySelector('.jp-OutputArea'), text = out.textContent;
            return !text.includes('Loading widget') && (text.includes('Error displaying widget')
                || out.querySelector('.widget-interact, img') !== null);
        }""", timeout=60_000, polling=250)

    def save(self) -> dict[str, Any]:
        """Save with Ctrl+S, as a reader does, until the server has written the file; returns
        what the saved file holds: each widget view's model id and whether the notebook
        stores that widget's state ``{"views": [...], "stored": [...]}``."""
        page = self.page
        before = page.evaluate(
            "window.jupyterapp.shell.currentWidget.context.contentsModel.last_modified")
        page.locator(".jp-Notebook .jp-Cell .jp-InputPrompt").first.click()
        page.keyboard.press("Control+s")
        page.wait_for_function(
            """before => {
                const context = window.jupyterapp.shell.currentWidget.context;
                return context.contentsModel.last_modified !== before && !context.model.dirty;
            }""", arg=before, timeout=60_000, polling=200)
        return page.evaluate("""async path => {
            const nb = (await window.jupyterapp.serviceManager.contents.get(path)).content;
            const widgets = nb.metadata.widgets ?? {};
            const state = widgets['application/vnd.jupyter.widget-state+json']?.state ?? {};
            const views = nb.cells.flatMap(c => c.outputs ?? []).map(o => o.data ?? {})
                .map(d => d['application/vnd.jupyter.widget-view+json']?.model_id).filter(Boolean);
            return {views, stored: views.map(v => v in state)};
        }""", self.chapter)

    def set_windowing(self, mode: str) -> None:
        """Set the notebook's windowing mode (see :func:`serve`) for the pages loaded next."""
        self.page.evaluate("""mode => window.jupyterapp.serviceManager.settings.save(
            '@jupyterlab/notebook-extension:tracker', JSON.stringify({windowingMode: mode}))""", mode)

    def shut_down_kernel(self) -> None:
        """Shut the notebook's kernel down (Kernel › Shut Down Kernel, without its dialog)."""
        self.page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        self.page.wait_for_function("!window.jupyterapp.shell.currentWidget.sessionContext.session",
                                    timeout=30_000)

    def widget_cell(self) -> dict[str, Any]:
        """What the first cell that calls labkit.interactive shows: ``error`` (JupyterLab's
        "Error displaying widget" anywhere on the page), ``pictures`` (images in the cell's
        output), ``sliders``, ``live`` (a widget view connected to a kernel)."""
        return self.page.evaluate("""() => {
            const out = (""" + WIDGET_CELL + """)().querySelector('.jp-OutputArea');
            return {error: document.body.textContent.includes('Error displaying widget'),
                    pictures: out.querySelectorAll('img').length,
                    sliders: out.querySelectorAll('.widget-slider').length,
                    live: out.querySelector('.widget-interact') !== null
                          && out.querySelector('.jupyter-widgets-disconnected') === null};
        }""")

    def wait_idle(self, timeout: float = 60_000) -> None:
        """Until the kernel is connected and idle (the toolbar says idle before it connects)."""
        self.page.wait_for_function("""() => {
            const kernel = window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel;
            return kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
        }""", timeout=timeout, polling=100)

    def run_all(self) -> tuple[int, int]:
        """Clear the outputs, run every cell; returns (code cells, code cells executed), read
        from the notebook's model (JupyterLab attaches off-screen cells to the page later).
        Stops waiting early when a cell fails."""
        page = self.page
        page.locator(".jp-Notebook .jp-Cell").first.click()  # the notebook is the active widget
        page.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        page.wait_for_function("!document.querySelector('.jp-OutputArea-output img')", timeout=30_000)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # every code cell gets an execution count (or one fails and stops the run), and
        # nothing is still running
        progress = """() => {
            const cells = [...window.jupyterapp.shell.currentWidget.content.model.cells]
                .filter(c => c.type === 'code');
            const failed = cells.some(c => c.outputs.toJSON().some(o => o.output_type === 'error'
                || (o.output_type === 'stream' && o.name === 'stderr')));
            return {cells: cells.length, done: cells.filter(c => c.executionCount !== null).length,
                    busy: cells.some(c => c.executionState === 'running'), failed};
        }"""
        page.wait_for_function(f"""() => {{
                const p = ({progress})();
                return !p.busy && (p.done === p.cells || p.failed);
            }}""", timeout=240_000, polling=1000)
        seen = page.evaluate(progress)
        return seen["cells"], seen["done"]

    def scroll_to_widgets(self) -> int:
        """Scroll each cell that calls labkit.interactive into view (JupyterLab attaches cells
        off screen later), the last one left in view; returns how many there are."""
        return self.page.evaluate("""async () => {
            const notebook = window.jupyterapp.shell.currentWidget.content;
            const cells = [...notebook.model.cells].map((c, i) => [c, i]).filter(([c]) =>
                c.type === 'code' && c.sharedModel.getSource().includes('labkit.interactive('));
            for (const [, index] of cells) await notebook.scrollToItem(index, 'center');
            return cells.length;
        }""")

    def widgets(self) -> Any:
        return self.page.locator(WIDGET)

    def figure(self, widget: int) -> str:
        """The ``src`` of the figure widget ``widget`` shows now (a data: URL of its PNG)."""
        return self.widgets().nth(widget).locator("img").first.get_attribute("src", timeout=30_000)

    def press(self, widget: int, slider: int, key: str = "ArrowRight") -> float:
        """Press ``key`` on a slider's handle; returns the ms from the key press reaching the
        page to the new figure decoded and painted (the next animation frame)."""
        box = self.widgets().nth(widget)
        handle = box.locator(".widget-slider .noUi-handle").nth(slider)
        handle.scroll_into_view_if_needed()
        handle.focus()
        box.evaluate("""box => {
            const old = box.querySelector('img')?.src;
            window.__figure = new Promise((resolve, reject) => {
                let start = null;
                document.addEventListener('keydown', e => { start = e.timeStamp; },
                                          {capture: true, once: true});
                const watch = new MutationObserver(() => {
                    const img = box.querySelector('img');
                    if (!img || img.src === old || start === null) return;
                    watch.disconnect();
                    img.decode().then(() => requestAnimationFrame(() => resolve(performance.now() - start)),
                                      reject);
                });
                watch.observe(box, {subtree: true, childList: true, attributes: true});
                setTimeout(() => reject(new Error('the figure did not change in 30 s')), 30000);
            });
        }""")
        handle.press(key)
        return float(self.page.evaluate("window.__figure"))

    def room(self, widget: int, slider: int) -> tuple[float, float]:
        """How far a slider's handle can move (left, right), in the slider's own units (a log
        slider's exponent)."""
        return tuple(self.widgets().nth(widget).locator(".widget-slider .noUi-target").nth(slider).evaluate(
            """t => { const now = Number(t.noUiSlider.get()), r = t.noUiSlider.options.range;
                      return [now - r.min, r.max - now]; }"""))

    def drag(self, widget: int, slider: int, dx: float) -> None:
        """Drag a slider's handle ``dx`` pixels with the mouse."""
        handle = self.widgets().nth(widget).locator(".widget-slider .noUi-handle").nth(slider)
        handle.scroll_into_view_if_needed()
        box = handle.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        self.page.mouse.move(x, y)
        self.page.mouse.down()
        self.page.mouse.move(x + dx, y, steps=5)
        self.page.mouse.up()
