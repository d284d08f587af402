"""Sphinx configuration of the course's static site (built by scripts/build_site.py).

Why Sphinx + myst-nb + sphinx-book-theme: MuJoCo's own documentation is built with Sphinx, so
the site reads like the manual it links to; myst-nb renders the outputs stored in the committed
notebooks without running a kernel (nb_execution_mode = "off": what the site shows is exactly
what CI checked, and the build needs neither MuJoCo nor GL); sphinx-book-theme gives the
chapter navigation, offline full-text search and per-chapter "launch in Colab" buttons.

The source folder is course/ itself (``sphinx-build -c site course ...``): the notebooks are
not moved or copied, and nothing here is fetched from the network at build time.
"""

from __future__ import annotations

import importlib.util
import posixpath
import re
import shutil
import tomllib
from html import escape
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform

import labkit

ROOT = Path(__file__).resolve().parent.parent

# The repository URL lives in one place, pyproject.toml's [project.urls]; chapters open in
# Colab at the release tag of this labkit version.
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REPOSITORY = PYPROJECT["project"]["urls"]["Repository"]
RELEASE_TAG = f"v{labkit.__version__}"
COLAB = "https://colab.research.google.com"


def colab_url(docname: str) -> str:
    """Where a chapter opens in Colab (the same URL as the theme's launch button)."""
    owner_repo = REPOSITORY.removeprefix("https://github.com/")
    return f"{COLAB}/github/{owner_repo}/blob/{RELEASE_TAG}/course/{docname}.ipynb"


project = "MuJoCo by Experiment"
author = "the MuJoCo by Experiment authors"
copyright = "2026 The MuJoCo by Experiment authors (MIT License)"
release = version = labkit.__version__

# no intersphinx: the build looks nothing up on the network; githubpages writes .nojekyll, without
# which GitHub Pages would drop the _static/ and _images/ folders
extensions = ["myst_nb", "sphinx.ext.githubpages"]

# Only the course's pages: the chapters, the landing page and the reference pages.
root_doc = "index"
include_patterns = ["index.md", "references.md", "drift.md", "[0-9][0-9]_*.ipynb"]
exclude_patterns = ["**/.ipynb_checkpoints"]

# --- the notebooks: rendered from their stored outputs, never executed -------------------
nb_execution_mode = "off"
# An interactive figure (chapters 03 and 05) stores an image/png of its first state next to
# its widget view: a static page shows the picture (myst-nb's default puts the widget view,
# which needs a live kernel, first; lower numbers win).
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", 55)]
# no ipywidgets JavaScript from a CDN: widgets cannot run on a static page anyway
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
# Each exercise's reference solution is collapsed behind a "Show solution" toggle: its cell is
# tagged hide-cell (scripts/tag_solutions.py writes the tags; tests/test_solution_toggles.py
# checks that exactly the solution cells carry one), and myst-nb's own <details> toggle for a
# hidden cell says these words.  Only solution cells are hidden this way.
nb_code_prompt_show = "Show solution"
nb_code_prompt_hide = "Hide solution"
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3  # "chapter.ipynb#a-section" links resolve, as they do on GitHub
suppress_warnings = ["toc.empty_glob"]  # the drift report's entry matches once course/drift.md exists

# --- the pages ----------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "MuJoCo by Experiment"
html_static_path = ["static"]
html_css_files = ["course.css"]
html_js_files = ["search-summary.js"]
html_last_updated_fmt = None
# light by default: the stored outputs (claims, tables, plots) were styled for JupyterLab's light theme
html_context = {"default_mode": "light"}
html_theme_options = {
    "repository_url": REPOSITORY,
    "repository_branch": RELEASE_TAG,
    "path_to_docs": "course",
    "use_repository_button": True,
    "use_download_button": True,
    # the rocket menu of every chapter page: Colab (<colab>/github/OWNER/REPO/blob/TAG/course/NN_name.ipynb)
    # and Binder (JupyterLab on the repository at TAG)
    "launch_buttons": {"colab_url": COLAB, "binderhub_url": "https://mybinder.org",
                       "notebook_interface": "jupyterlab"},
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # one search field: the primary sidebar's (sphinx-book-theme puts it there); pydata's
    # default would add a second one in a header bar above it
    "navbar_persistent": [],
}

# MathJax 3.2.2 is served from the site itself, so formulas render offline.  The files come from
# the sphinx-mathjax-offline package, whose extension is not loaded (it copies all 24 MB of
# MathJax's components into every build): _copy_mathjax copies what tex-chtml.js loads (8 MB).
MATHJAX = Path(importlib.util.find_spec("sphinx-mathjax-offline").origin).parent / "static" / "mathjax"
mathjax_path = "mathjax/tex-chtml.js"

# --- links inside stored HTML outputs ----------------------------------------------------
# A claim's sources (text/html outputs) link a document on the references page as
# "references.md#key", which is right in JupyterLab and on GitHub; on the site that page is
# references.html.  Sphinx rewrites links in Markdown, not in raw HTML, so this does.
_LOCAL_PAGE = re.compile(r'''(href=["'])(?![a-z][a-z0-9+.-]*:|/|#)([^"'#?]+)\.(md|ipynb)(?=["'#?])''', re.I)


def _rewrite_local_links(app, doctree, docname) -> None:
    for node in doctree.findall(nodes.raw):
        if "html" not in node.get("format", "").split():
            continue
        text = node.astext()
        new = _LOCAL_PAGE.sub(lambda m: f"{m[1]}{m[2]}{app.builder.link_suffix}", text)
        if new != text:
            node.children[0] = nodes.Text(new)


# The references page marks each document's entry with an empty HTML anchor in its heading,
# <a id="key"></a>, the anchor chapters link as references.md#key.  Sphinx does not see ids in
# raw HTML (links to them would not resolve, and the heading's copy in the page's table of
# contents would repeat the id), so the anchor becomes an id and a label of its section.
class HtmlAnchors(SphinxTransform):
    default_priority = 200  # before the labels are collected (SphinxDomains, 850)
    OPEN = re.compile(r'\s*<a\s+(?:id|name)="([^"]+)"\s*>\s*')  # MyST splits <a ...></a> in two

    def apply(self, **kwargs) -> None:
        for node in list(self.document.findall(nodes.raw)):
            match = self.OPEN.fullmatch(node.astext())
            if not match:
                continue
            after = node.next_node(descend=False, siblings=True)
            if not isinstance(after, nodes.raw) or after.astext().strip() != "</a>":
                continue
            key, target = match[1], node.parent
            if isinstance(target, nodes.title):
                target = target.parent
            node.parent.remove(after)
            node.parent.remove(node)
            target["ids"].append(key)
            target["names"].append(key)
            self.document.ids[key] = target
            self.document.nameids[key] = key
            self.document.nametypes[key] = True  # explicit: a label, as (key)= would make


# Besides the launch menu, a chapter says "Open in Colab" in plain sight, under its title.
def _add_colab_link(app, doctree, docname) -> None:
    if app.env.doc2path(docname).suffix != ".ipynb":
        return
    section = next(doctree.findall(nodes.section), None)
    if section is None:
        return
    logo = posixpath.relpath("_static/images/logo_colab.png", posixpath.dirname(docname) or ".")
    html = (f'<p class="open-in-colab"><a href="{colab_url(docname)}" target="_blank" rel="noopener">'
            f'<img src="{logo}" alt="" height="20"/>Open in Colab</a> '
            f'<span>to run this chapter (release {RELEASE_TAG})</span></p>')
    section.insert(1, nodes.raw("", html, format="html"))


# myst-nb's toggle of a hidden cell is a <details> whose <summary> says "Show solution" but is
# named "Toggle hidden content" (aria-label): a screen reader would not say the words on the
# button (axe: label-content-name-mismatch).  The same element without that aria-label: its
# name is then its visible words.
def _visit_hidden_cell(self, node) -> None:
    classes = " ".join(node["classes"])
    show, hide = escape(node["prompt_show"]), escape(node["prompt_hide"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n'
                     f'<p class="collapsed admonition-title">{show}</p>\n'
                     f'<p class="expanded admonition-title">{hide}</p>\n</summary>\n')


def _depart_hidden_cell(self, node) -> None:
    self.body.append("</details>\n")


# A table whose cells are all short (the drift report's counts, a case table) keeps each cell on
# one line and scrolls sideways in its own box on a narrow screen (pydata-sphinx-theme wraps every
# table in a scrolling container) instead of squeezing its words into columns one word wide.
SHORT_CELL = 40  # characters: "57 hold · 4 changed · 2 error" is 29


def _mark_data_tables(app, doctree, docname) -> None:
    for table in doctree.findall(nodes.table):
        cells = [entry.astext() for entry in table.findall(nodes.entry)]
        if cells and max(len(" ".join(c.split())) for c in cells) <= SHORT_CELL:
            table["classes"].append("data-table")


def _copy_mathjax(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return

    def skip(folder: str, names: list[str]) -> list[str]:
        if Path(folder) == MATHJAX:  # the other combined components, and the node.js entry
            return [n for n in names if n.endswith(".js") and n != "tex-chtml.js"]
        return ["svg"] if Path(folder) == MATHJAX / "output" else []

    shutil.copytree(MATHJAX, Path(app.outdir) / "_static" / "mathjax", ignore=skip, dirs_exist_ok=True)


def setup(app):
    from myst_nb.sphinx_ import HideCodeCellNode

    app.add_node(HideCodeCellNode, override=True, html=(_visit_hidden_cell, _depart_hidden_cell))
    app.connect("doctree-resolved", _mark_data_tables)
    app.connect("build-finished", _copy_mathjax)
    app.add_transform(HtmlAnchors)
    app.connect("doctree-resolved", _rewrite_local_links)
    app.connect("doctree-resolved", _add_colab_link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
