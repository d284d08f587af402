"""The course's static site, as a reader meets it: built, served and walked in a real browser.

Builds the site with the command ``./run.sh site`` runs (scripts/build_site.py) into a scratch
folder, serves it over HTTP on localhost, and opens every page in Debian's Chromium (driven by
Playwright, as in test_browser.py) with every request off this machine blocked.  Then checks:
every page loads, no picture is missing, no link inside the site is broken (the page exists, and
so does the #anchor in it), each chapter has its page, its pictures, its stored claim links and
its "Open in Colab" link, every interactive figure shows its static picture, formulas are typeset
and search finds a chapter, all offline.

Accessibility: axe-core (tests/axe.py: from npm, checked, cached) finds no serious or critical
violation on any page; every picture and video says what it shows; in dark mode labkit's output
boxes are dark and keep their contrast; each page has one search field, and search summaries
are the chapter's text; the drift table scrolls in its own box on a phone; each reference
solution is collapsed behind "Show solution" until clicked.
"""

from __future__ import annotations

import functools
import http.server
import os
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
from axe import AxeUnavailable, axe_source, blocking, run_axe
from lab_in_browser import CHROMIUM_FLAGS, chromium

import labkit
from labkit.classroom.notebooks import course_notebooks, solution_cells

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
    // what each picture and video of the stored outputs says it shows
    alts: [...document.querySelectorAll('.cell_output img')].map(i => i.getAttribute('alt')),
    videos: [...document.querySelectorAll('.cell_output video')]
        .map(v => v.getAttribute('aria-label')),
    // collapsed cells: [the toggle's words, open, the hidden code rendered on the page]
    toggles: [...document.querySelectorAll('div.cell details.hide')].map(d =>
        [d.querySelector('summary').innerText.trim(), d.open,
         d.querySelector('.cell_input')?.checkVisibility() ?? false]),
    // search fields a reader can see (the theme's search button, or a search form's input)
    search: [...document.querySelectorAll('.search-button-field, form.bd-search input')]
        .filter(e => e.checkVisibility()).length,
})"""
# Most of a chapter's markup is Pygments-highlighted source (div.cell_input) and MathJax's
# rendering of formulas (mjx-container), the same markup on every page: axe reads them on the
# first chapter, and everything else on every page.  axe's time grows with the whole page's
# markup, whatever it is told to leave out, so the walk removes them from the page it has
# measured before axe runs (chapter 03 took 15-35 s with them, 4 s without).
FULLY_CHECKED = "00_start_here.html"
REPEATED_MARKUP = ("div.cell_input", "mjx-container")
THEME_WORDS = ("System Settings", "Light Dark", "Binder", ".ipynb .pdf", "Contents")


def drop_repeated_markup(page) -> None:
    """Remove :data:`REPEATED_MARKUP` from a loaded page (after what it shows was read)."""
    page.evaluate("selectors => selectors.forEach(s => document.querySelectorAll(s)"
                  ".forEach(e => e.remove()))", list(REPEATED_MARKUP))


def luminance(css: str) -> float:
    """Relative luminance (0 black … 1 white) of a CSS ``rgb(...)``/``rgba(...)`` colour, as
    WCAG defines it."""
    r, g, b = (float(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


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
def served(site):
    """The built site over HTTP on localhost: its base URL."""
    html, _ = site
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, driven by Playwright, for this module's tests."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    chrome = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
    yield chrome
    chrome.close()
    playwright.stop()


def offline_context(browser, base: str, **options):
    """A browser context in which every request off the site is refused; returns (context,
    the list of refused URLs)."""
    context = browser.new_context(**{"viewport": {"width": 1300, "height": 900}, **options})
    refused: list[str] = []

    def offline(route):  # the site must not need anything from elsewhere
        refused.append(route.request.url)
        route.abort()

    context.route(lambda url: not url.startswith(base), offline)
    return context, refused


@pytest.fixture(scope="module")
def axe():
    """axe-core's script (tests/axe.py); offline the accessibility checks skip, saying why, and
    fail where LABKIT_REQUIRE_CORPUS=1 (CI) asks for every download."""
    try:
        return axe_source()
    except AxeUnavailable as exc:
        if os.environ.get("LABKIT_REQUIRE_CORPUS"):
            pytest.fail(f"axe-core is required here: {exc}")
        pytest.skip(f"axe-core is unavailable (offline?): {exc}")


@pytest.fixture(scope="module")
def walked(site, served, browser, axe):
    """Every page of the site, opened in Chromium over HTTP: what each page holds, what failed,
    and what axe found on it."""
    html, _ = site
    base = served
    pages = sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                   if not p.relative_to(html).parts[0].startswith("_"))
    result = {"base": base, "pages": {}, "status": {}, "failed": [], "errors": [], "axe": {}}
    context, result["remote"] = offline_context(browser, base)
    try:
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
            if name != FULLY_CHECKED:
                drop_repeated_markup(page)
            result["axe"][name] = run_axe(page, axe)
        page.goto(base + "search.html?q=solimp", wait_until="load")
        page.wait_for_function(
            "document.querySelectorAll('#search-results li p.context').length > 2", timeout=30_000)
        result["search"] = page.eval_on_selector_all("#search-results li a",
                                                    "links => links.map(a => a.href)")
        result["summaries"] = page.eval_on_selector_all("#search-results li p.context",
                                                       "ps => ps.map(p => p.textContent)")
    finally:
        context.close()
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


# --- accessibility ---------------------------------------------------------------------------

def test_axe_finds_no_serious_or_critical_violation_on_any_page(walked):
    found = {name: blocking(violations) for name, violations in walked["axe"].items()}
    assert {name: lines for name, lines in found.items() if lines} == {}


HASHED = re.compile(r"^(_images/)?[0-9a-f]{64}\.\w+$")   # docutils' alt: the picture's file name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_picture_and_video_says_what_it_shows(walked, path):
    page = walked["pages"][f"{path.stem}.html"]
    nameless = [alt for alt in page["alts"] if not alt or not alt.strip() or HASHED.match(alt)]
    assert nameless == [], ("pictures without alt text, or with their file name as alt (a stored "
                            "image/png only): show them through labkit.display.image_bundle")
    assert all(label and label.startswith("video") for label in page["videos"]), page["videos"]


def test_search_summaries_are_the_chapters_text(walked):
    summaries = walked["summaries"]
    assert summaries and all("solimp" in s.lower() for s in summaries), summaries[:3]
    boilerplate = [s for s in summaries if any(word in s for word in THEME_WORDS)]
    assert boilerplate == [], "the theme's buttons and tables of contents are not page text"


def test_each_page_has_one_search_field(walked):
    fields = {name: info["search"] for name, info in walked["pages"].items()}
    # the search page's own form is the search; the sidebar's field is the one other pages have
    assert {name: n for name, n in fields.items() if n != (2 if name == "search.html" else 1)} == {}


def test_dark_mode_keeps_labkits_boxes_dark_and_readable(served, browser, axe):
    """In dark mode a claim's box takes the page's dark surface and light text (the theme paints
    stored HTML outputs light there), and axe finds no contrast failure in the article."""
    context, _ = offline_context(browser, served)
    context.add_init_script("localStorage.setItem('mode', 'dark'); "
                            "localStorage.setItem('theme', 'dark')")
    try:
        page = context.new_page()
        page.goto(served + FULLY_CHECKED, wait_until="load")
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
        claim = page.locator("b", has_text="✔")
        box = page.locator("div.cell_output .text_html", has=claim).first
        background, colour = box.evaluate(
            "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]")
        assert luminance(background) < 0.05 and luminance(colour) > 0.5, (background, colour)
        contrast = run_axe(page, axe, rules=("color-contrast",))
        assert blocking(contrast) == []
    finally:
        context.close()


@pytest.mark.skipif(not (ROOT / "course" / "drift.md").is_file(), reason="no drift report yet")
def test_the_drift_table_scrolls_in_its_own_box_on_a_phone(served, browser):
    context, _ = offline_context(browser, served, viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        page.goto(served + "drift.html", wait_until="load")
        box, page_width, lines = page.evaluate("""() => {
            const table = document.querySelector('article table');
            const box = table.closest('.pst-scrollable-table-container');
            // how many lines each cell's text takes: its text boxes' tops, more than half a
            // line apart (inline code sits a pixel or two off the text beside it)
            const lines = [...table.querySelectorAll('td')].map(td => {
                const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
                const tops = [];
                while (walker.nextNode()) {
                    const range = document.createRange(); range.selectNodeContents(walker.currentNode);
                    tops.push(...[...range.getClientRects()].map(r => r.top));
                }
                const half = parseFloat(getComputedStyle(td).fontSize) / 2;
                return tops.sort((a, b) => a - b).filter((t, i) => i === 0 || t - tops[i - 1] > half)
                    .length; });
            return [box && [box.scrollWidth, box.clientWidth, getComputedStyle(box).overflowX],
                    document.documentElement.scrollWidth, Math.max(...lines)]; }""")
    finally:
        context.close()
    assert box is not None, "the table sits in the theme's scrolling box"
    scroll_width, client_width, overflow = box
    assert scroll_width > client_width and overflow == "auto", "wider than a phone: it scrolls"
    assert page_width <= 375, "the page itself does not scroll sideways"
    assert lines == 1, "no cell is squeezed onto several lines"


# --- reference solutions ---------------------------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_solution_is_collapsed_behind_show_solution(walked, path):
    toggles = walked["pages"][f"{path.stem}.html"]["toggles"]
    solutions = solution_cells(nbformat.read(path, as_version=4))
    assert len(toggles) == len(solutions), (
        f"{len(solutions)} solution cells, {len(toggles)} collapsed: run "
        ".venv/bin/python scripts/tag_solutions.py (it tags them hide-cell)")
    assert all(toggle == ["Show solution", False, False] for toggle in toggles), toggles


def test_show_solution_reveals_the_solution(served, browser, axe):
    path = NOTEBOOKS[0]
    first = solution_cells(nbformat.read(path, as_version=4))
    if not first:
        pytest.skip(f"{path.name} has no solution cell")
    context, _ = offline_context(browser, served)
    try:
        page = context.new_page()
        page.goto(served + f"{path.stem}.html", wait_until="load")
        toggle = page.locator("div.cell details.hide").first
        code = toggle.locator(".cell_input")
        assert not code.is_visible()
        toggle.locator("summary").click()
        assert code.is_visible() and "BEGIN SOLUTION" in code.inner_text()
        assert toggle.locator("summary").inner_text().strip() == "Hide solution"
        assert blocking(run_axe(page, axe)) == [], "axe is clean with a solution open"
    finally:
        context.close()
