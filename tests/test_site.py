"""The course's static site, as a reader meets it: built, served and walked in a real browser.

Builds the site with the command ``./run.sh site`` runs (scripts/build_site.py) into a scratch
folder, serves it over HTTP on localhost, and opens every page in Debian's Chromium (driven by
Playwright, as in test_browser.py) with every request off this machine blocked.  Then checks:
every page loads, no picture is missing, no link inside the site is broken (the page exists, and
so does the #anchor in it), each chapter has its page, its pictures, its stored claim links and
its "Open in Colab" link, every interactive figure shows its static picture, formulas are typeset
and search finds a chapter, all offline.
"""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import nbformat
import pytest
from lab_in_browser import CHROMIUM_FLAGS, chromium

import labkit
from labkit.classroom.notebooks import course_notebooks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = course_notebooks()
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PAGE_INFO = """() => ({
    title: document.title,
    ids: [...document.querySelectorAll('[id]')].map(e => e.id)
         .concat([...document.querySelectorAll('a[name]')].map(a => a.name)),
    links: [...document.querySelectorAll('a[href]')].map(a => [a.href, a.getAttribute('href')]),
    images: [...document.images].map(i => [(i.getAttribute('src') || '').slice(0, 60),
                                           i.complete && i.naturalWidth > 0]),
    // per code cell: how many of its output pictures loaded
    cells: [...document.querySelectorAll('div.cell')].map(c =>
        [...c.querySelectorAll('.cell_output img')].filter(i => i.complete && i.naturalWidth > 0).length),
    math: document.querySelectorAll('mjx-container').length,
})"""


def colab_url(stem: str) -> str:
    """The URL a chapter must open in Colab: the repository of pyproject.toml, at the release tag."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    repository = pyproject["project"]["urls"]["Repository"].removeprefix("https://github.com/")
    return (f"https://colab.research.google.com/github/{repository}/blob/v{labkit.__version__}"
            f"/course/{stem}.ipynb")


def stored(path: Path) -> dict:
    """What a chapter's committed outputs hold: pictures, widget cells, claim links, formulas."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    pictures, widgets, links = 0, [], set()
    for index, cell in enumerate(code):
        for out in cell.outputs:
            data = out.get("data", {})
            html = data.get("text/html", "")
            pictures += ("image/png" in data) + html.count("<img")
            links.update(re.findall(r'href="(https?://[^"]+)"', html))
            if WIDGET_VIEW in data:
                widgets.append(index)
    math = any("$" in c.source for c in nb.cells if c.cell_type == "markdown")
    return {"code_cells": len(code), "pictures": pictures, "widgets": widgets, "links": links, "math": math}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Build the site as ./run.sh site does; returns (html folder, seconds the build took)."""
    out = tmp_path_factory.mktemp("site")
    start = time.monotonic()
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_site.py"), str(out)],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    seconds = time.monotonic() - start
    assert run.returncode == 0, f"the site did not build:\n{run.stdout[-4000:]}\n{run.stderr[-6000:]}"
    index = out / "html" / "index.html"
    assert run.stdout.strip().splitlines()[-1] == str(index), "the last line printed is the index page"
    assert index.is_file()
    return out / "html", seconds


@pytest.fixture(scope="module")
def walked(site):
    """Every page of the site, opened in Chromium over HTTP: what each page holds and what failed."""
    from playwright.sync_api import sync_playwright

    html, _ = site
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                   if not p.relative_to(html).parts[0].startswith("_"))
    result = {"base": base, "pages": {}, "status": {}, "remote": [], "failed": [], "errors": []}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
            try:
                context = browser.new_context(viewport={"width": 1300, "height": 900})

                def offline(route):  # the site must not need anything from elsewhere
                    result["remote"].append(route.request.url)
                    route.abort()

                context.route(lambda url: not url.startswith(base), offline)
                page = context.new_page()
                page.on("pageerror", lambda exc: result["errors"].append(f"{page.url}: {exc}"))
                page.on("response", lambda r: r.ok or result["failed"].append(f"{r.status} {r.url}"))
                for name in pages:
                    response = page.goto(base + name, wait_until="load")
                    result["status"][name] = response.status if response else None
                    if name.split(".")[0] in {p.stem for p in NOTEBOOKS} or name == "index.html":
                        # formulas are typeset by the site's own MathJax
                        page.evaluate("() => window.MathJax?.startup?.promise")
                    result["pages"][name] = page.evaluate(PAGE_INFO)
                page.goto(base + "search.html?q=solimp", wait_until="load")
                page.wait_for_function("document.querySelectorAll('#search-results li').length > 0",
                                       timeout=30_000)
                result["search"] = page.eval_on_selector_all("#search-results li a",
                                                            "links => links.map(a => a.href)")
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return result


def test_the_site_builds_from_the_committed_notebooks(site):
    html, seconds = site
    print(f"site built in {seconds:.1f} s")
    assert {f"{p.stem}.html" for p in NOTEBOOKS} <= {p.name for p in html.glob("*.html")}
    assert (html / "references.html").is_file()
    assert not any(ROOT.joinpath("course").glob("**/jupyter_execute")), "nothing is written into course/"


def test_every_page_loads_offline(walked):
    assert walked["pages"], "no page was found"
    assert {name: status for name, status in walked["status"].items() if status != 200} == {}
    assert walked["failed"] == [], "requests that failed"
    assert walked["remote"] == [], "the site loads these from outside (it must work offline)"
    assert walked["errors"] == [], "JavaScript errors"


def test_no_picture_is_missing(walked):
    missing = [(name, src) for name, info in walked["pages"].items() for src, ok in info["images"] if not ok]
    assert missing == []


def test_no_internal_link_is_broken(walked, site):
    html, _ = site
    base = walked["base"]
    broken = []
    for name, info in walked["pages"].items():
        for href, raw in info["links"]:
            if not href.startswith(base):
                continue  # another site: the claim-link test checks those are the stored ones
            url, anchor = urldefrag(href)
            path = unquote(urlsplit(url).path).lstrip("/") or "index.html"
            if path.endswith("/"):
                path += "index.html"
            if not (html / path).is_file():
                broken.append(f"{name}: {raw} (no such page)")
            elif anchor and path.endswith(".html"):
                target = walked["pages"].get(path)
                if target is None or unquote(anchor) not in target["ids"]:
                    broken.append(f"{name}: {raw} (no #{anchor} in {path})")
    assert broken == []


def test_the_landing_page_leads_to_every_chapter_and_the_references(walked):
    base = walked["base"]
    linked = {href.removeprefix(base).split("#")[0] for href, _ in walked["pages"]["index.html"]["links"]}
    wanted = {f"{p.stem}.html" for p in NOTEBOOKS} | {"references.html"}
    if (ROOT / "course" / "drift.md").is_file():
        wanted.add("drift.html")
    assert wanted - linked == set()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_chapter_has_its_page_pictures_claim_links_and_colab_link(walked, path):
    page = walked["pages"][f"{path.stem}.html"]
    nb = stored(path)
    assert len(page["cells"]) == nb["code_cells"], "one rendered cell per code cell"
    shown = sum(page["cells"])
    assert shown >= nb["pictures"], f"{nb['pictures']} pictures stored, {shown} shown"
    hrefs = {raw for _, raw in page["links"]}
    assert nb["links"] - hrefs == set(), "the claims' source links are on the page, unchanged"
    assert colab_url(path.stem) in hrefs, "an Open in Colab link to this chapter at the release tag"
    if nb["math"]:
        assert page["math"] > 0, "the chapter's formulas are typeset"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if stored(p)["widgets"]],
                         ids=[p.stem for p in NOTEBOOKS if stored(p)["widgets"]])
def test_every_interactive_figure_shows_a_picture(walked, path):
    """A widget cannot run on a static page: its cell must show the image/png stored with it."""
    page = walked["pages"][f"{path.stem}.html"]
    widgets = stored(path)["widgets"]
    without = [index for index in widgets if page["cells"][index] == 0]
    assert without == [], (f"code cells {without} (counted from 0) store a widget view but show no "
                           "picture: store an image/png next to the widget view")


def test_search_works_offline(walked):
    assert any("05_solver_parameters.html" in href for href in walked["search"]), walked["search"][:5]
