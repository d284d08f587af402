"""The practice copy as a self-learner meets it: ``labkit practice lab`` (what ``./run.sh lab``
runs) serving JupyterLab on a scratch practice folder, chapter 00 opened in headless Chromium.

The learner has answered exercise 0.1 wrongly and left 0.2 and 0.3 blank.  Run All must run
every cell; no solution may be on the page; each exercise's feedback box shows once, and no
output shows a traceback or a frame of labkit's.  The server lands on the practice chapter
00 and lists the reference chapters one click away.  The page driver is tests/lab_in_browser.py's
(:class:`Lab`); the server differs (``labkit practice lab`` instead of ``jupyter lab`` on
copies), so it is started here.  The screenshot is kept in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest
from lab_in_browser import CHROMIUM_FLAGS, Lab, chromium, free_port

from labkit.classroom import practice, student
from labkit.classroom.notebooks import course_dir
from labkit.exercises import spec

CHAPTER = "00_start_here.ipynb"
WRONG = "tip_height = 3.0   # my answer: wrong, the bob is not 3 m up"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
MARKER = re.compile(r"^\s*#+\s*(BEGIN|END) SOLUTION\s*$")


def solution_lines(nb) -> list[str]:
    """The reference's solution lines (≥ 8 characters) that it shows nowhere else."""
    inside, outside, region = [], [], False
    for cell in nb.cells:
        for line in cell.source.splitlines():
            if MARKER.match(line):
                region = MARKER.match(line).group(1) == "BEGIN"
            else:
                (inside if region else outside).append(line.strip())
    return [line for line in inside if len(line) >= 8 and line not in "\n".join(outside)]


@contextmanager
def practice_lab(scratch: Path) -> Iterator[tuple[str, str, Path]]:
    """``labkit practice lab`` on a scratch course of chapter 00, after the learner's first
    session: yields the base URL, the token and the practice folder."""
    course, folder = scratch / "course", scratch / "practice"
    course.mkdir()
    shutil.copyfile(course_dir() / CHAPTER, course / CHAPTER)
    for page in practice.LINKED_PAGES:
        shutil.copyfile(course_dir() / page, course / page)
    practice.init(folder, course)
    nb = nbformat.read(folder / CHAPTER, as_version=4)
    next(c for c in nb.cells if "answer-0_1" in str(c.metadata.get("nbgrader"))).source = WRONG
    nbformat.write(nb, folder / CHAPTER)
    settings = scratch / "settings" / "@jupyterlab"   # every cell rendered; no news
    for extension, file, value in (
            ("notebook-extension", "tracker", '{"windowingMode": "none"}'),
            ("apputils-extension", "notification", '{"fetchNews": "false"}')):
        (settings / extension).mkdir(parents=True)
        (settings / extension / f"{file}.jupyterlab-settings").write_text(value)
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "LABKIT_COURSE": str(course), practice.PRACTICE_ENV: str(folder),
           "JUPYTER_CONFIG_DIR": str(scratch / "cfg"),
           "JUPYTERLAB_SETTINGS_DIR": str(scratch / "settings")}
    env.pop("LABKIT_MODELS", None)                    # labkit practice lab sets it
    log = open(scratch / "jupyterlab.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "labkit.cli", "practice", "lab", "--", f"--port={port}",
         f"--IdentityProvider.token={token}", "--allow-root",
         "--LabApp.expose_app_in_browser=True"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
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
                    raise RuntimeError("labkit practice lab did not start:\n"
                                       + (scratch / "jupyterlab.log").read_text()[-3000:]) from None
                time.sleep(0.5)
        yield url, token, folder
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def run_all(lab: Lab, timeout: float = 120) -> tuple[int, int]:
    """Run All; wait until every code cell ran or the kernel has been idle with nothing left
    running for 5 s (Run All stopped at a failing cell).  Returns (code cells, executed)."""
    page = lab.page
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    count = """() => {
        const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
        const kernel = window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel;
        return [prompts.length, prompts.filter(p => /\\[\\d+\\]/.test(p.textContent)).length,
                prompts.some(p => p.textContent.includes('*')) || kernel?.status !== 'idle'];
    }"""
    deadline, quiet = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        cells, done, busy = page.evaluate(count)
        quiet = 0 if busy else quiet + 1
        if done == cells or quiet >= 5:
            return cells, done
        time.sleep(1)
    return tuple(page.evaluate(count)[:2])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with practice_lab(tmp_path_factory.mktemp("practice-lab")) as server:
        yield server


def test_the_practice_copy_runs_all_past_its_answers_and_shows_each_feedback_once(served):
    from playwright.sync_api import sync_playwright

    url, token, folder = served
    log = (folder.parent / "jupyterlab.log").read_text()
    assert f"/lab/tree/{CHAPTER}?token=" in log, "the URL printed lands on the practice chapter 00"
    assert "kept as you left them" in log and WRONG in (folder / CHAPTER).read_text()
    listing = json.load(urllib.request.urlopen(f"{url}/api/contents/{practice.REFERENCE_LINK}"
                                               f"?token={token}"))
    assert CHAPTER in [item["name"] for item in listing["content"]], "the references, one click"
    reference = nbformat.read(course_dir() / CHAPTER, as_version=4)
    hidden = solution_lines(reference)
    wrong = spec("0.1").grade({"tip_height": {"value": 3.0}})      # what its box must say
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            lab = Lab(page, url, token, CHAPTER)
            before = page.locator(".jp-Notebook").inner_text()
            code_cells, executed = run_all(lab)
            outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
            files = page.locator(".jp-DirListing-item").all_inner_texts()
            page.locator(".jp-OutputArea-output", has_text="Exercise 0.1 ·").first \
                .scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / "browser-practice-00.png"))
        finally:
            browser.close()
    assert executed == code_cells, f"Run All stopped: {executed} of {code_cells} code cells ran"
    assert hidden and not [line for line in hidden if line in before], "no solution on the page"
    assert all(f'{student.STUB}"Exercise {n} · ' in before for n in ("0.2", "0.3")), "stubs"
    text = "\n".join(outputs)
    assert "Traceback" not in text and not re.search(r"File .*labkit", text), text[-2000:]
    for number in ("0.1", "0.2", "0.3"):
        box = f"Exercise {number} · {spec(number).title}: 0/{spec(number).points:g} points"
        assert text.count(box) == 1, f"exercise {number}'s feedback box, once"
        assert text.count(f"Exercise {number} is not solved yet") == 1, "and one line under it"
    for result in wrong.results:      # the feedback's own lines are not repeated by the error
        assert text.count(result.requirement) == 1, result.requirement
    blank = [t.strip() for t in outputs if t.strip().startswith("NotAnswered: Exercise")]
    assert [t.split(" · ")[0] for t in blank] == ["NotAnswered: Exercise 0.2",
                                                  "NotAnswered: Exercise 0.3"], blank
    assert any(item.strip().startswith(practice.REFERENCE_LINK) for item in files), files
