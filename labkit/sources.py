"""Sources that a claim cites, each resolved against the installed MuJoCo.

A :class:`Source` carries a label and a permalink at the pinned version.  Claims cite
sources by that printed label (:func:`cite`): ``"mjmodel.h:nq"`` (a header declaration),
``"engine_core_constraint.c:mj_makeImpedance"`` (an engine function),
``"XMLreference#body-joint-type"`` (a manual section), ``"#1741"`` (a learner question on
MuJoCo's issue tracker), ``"ref:mjcf-book §6"`` (a document on the course's references
page).  Constructing
one *checks* it: a header symbol must be declared in the installed wheel's headers, an
engine function must be in the installed ``libmujoco`` (where its symbol table can be
read), a documentation page must be one the manual has.  A source that no longer
resolves raises :class:`SourceError`, so a notebook that cites it fails like a false claim.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import SourceError
from .session import BASELINE_MUJOCO

__all__ = ["Source", "SourceError", "cite", "doc", "engine", "header", "issue", "reference"]

REPO = "https://github.com/google-deepmind/mujoco"
DOCS = f"https://mujoco.readthedocs.io/en/{BASELINE_MUJOCO}"

# Where engine sources live in the MuJoCo repository, by file-name prefix.
_SOURCE_DIRS = {"engine_": "src/engine", "user_": "src/user", "xml_": "src/xml",
                "render_": "src/render", "thread_": "src/thread", "ui_": "src/ui"}


@dataclass(frozen=True)
class Source:
    """One citation.

    kind: ``"header"``, ``"engine"``, ``"doc"``, ``"issue"`` or ``"reference"``.
    label: short text shown in the claim (e.g. ``"mjmodel.h:nq"``).
    url: permalink at the pinned version (for a reference: its entry on the course's
        references page, relative to ``course/``).
    detail: what was resolved (the declaration line, or how the symbol was confirmed).
    """

    kind: str
    label: str
    url: str | None
    detail: str = ""

    def __str__(self) -> str:
        return self.label


def _close(word: str, candidates: object, n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``word`` (difflib, imported only when a citation is wrong)."""
    import difflib

    return difflib.get_close_matches(word, candidates, n=n)


def _mujoco_dir() -> Path:
    import mujoco

    return Path(mujoco.__file__).parent


@functools.cache
def _header_lines(file: str) -> tuple[str, ...]:
    path = _mujoco_dir() / "include" / "mujoco" / file
    if not path.is_file():
        available = sorted(p.name for p in path.parent.glob("*.h"))
        raise SourceError(f"no header {file!r} in the installed MuJoCo; it has: {', '.join(available)}")
    return tuple(path.read_text(encoding="utf-8", errors="replace").splitlines())


def header(file: str, symbol: str) -> Source:
    """Cite the declaration of ``symbol`` in MuJoCo header ``file`` (e.g. ``"mjmodel.h"``).

    The symbol is looked up in the code (not the comments) of the installed header; the
    permalink points at that line at the pinned tag.  Raises :class:`SourceError` if the
    header has no such declaration.
    """
    __tracebackhide__ = True
    if not re.fullmatch(r"[A-Za-z_]\w*", symbol):
        raise SourceError(f"header symbol must be an identifier, got {symbol!r}")
    pattern = re.compile(rf"\b{symbol}\b")
    for number, line in enumerate(_header_lines(file), start=1):
        code = line.split("//", 1)[0]
        if pattern.search(code) and not code.lstrip().startswith(("*", "/*")):
            url = f"{REPO}/blob/{BASELINE_MUJOCO}/include/mujoco/{file}#L{number}"
            return Source("header", f"{file}:{symbol}", url, line.strip())
    words = {w for line in _header_lines(file) for w in re.findall(r"[A-Za-z_]\w*", line.split("//", 1)[0])}
    close = _close(symbol, words, n=3)
    raise SourceError(
        f"{file} in MuJoCo {_installed_version()} declares no {symbol!r}"
        + (f"; did you mean {' or '.join(close)}?" if close else
           ": it was renamed or removed, so the claim citing it needs revisiting"))


def _installed_version() -> str:
    import mujoco

    return mujoco.__version__


@functools.cache
def _library_symbols() -> frozenset[str] | None:
    """Function names in the installed libmujoco, or None where they cannot be read."""
    import platform  # here, not at import time: it is only needed for engine citations

    if platform.system() != "Linux":
        return None
    from elftools.elf.elffile import ELFFile

    library = next(iter(sorted(_mujoco_dir().glob("libmujoco.so*"))), None)
    if library is None:
        return None
    names: set[str] = set()
    with open(library, "rb") as handle:
        elf = ELFFile(handle)
        for section in (".symtab", ".dynsym"):
            table = elf.get_section_by_name(section)
            if table is not None:
                names.update(_function_names(elf, table))
    return frozenset(names)


def _function_names(elf: Any, table: Any) -> set[str]:
    """The STT_FUNC names of one ELF symbol table.

    pyelftools finds the table and its string table; the entries are then read at once with
    NumPy, since decoding ~40 000 of them one Symbol object at a time (``iter_symbols``)
    costs about a second per kernel, in every notebook that cites an engine function.
    """
    import numpy as np

    order = "<" if elf.little_endian else ">"
    if elf.elfclass == 64:  # Elf64_Sym: name, info, other, shndx, value, size
        fields = [("name", "u4"), ("info", "u1"), ("other", "u1"), ("shndx", "u2"),
                  ("value", "u8"), ("size", "u8")]
    else:                   # Elf32_Sym: name, value, size, info, other, shndx
        fields = [("name", "u4"), ("value", "u4"), ("size", "u4"), ("info", "u1"),
                  ("other", "u1"), ("shndx", "u2")]
    entry = np.dtype([(n, order + t if t != "u1" else t) for n, t in fields])
    symbols = np.frombuffer(table.data(), dtype=entry)
    strings = elf.get_section(table["sh_link"]).data()
    STT_FUNC = 2  # the low four bits of st_info: the symbol's type
    offsets = symbols["name"][(symbols["info"] & 0xF) == STT_FUNC]
    # the compiler may suffix local copies of a function: mj_solPrimal.llvm.123
    return {strings[o:strings.index(b"\0", o)].decode("utf-8", "replace").split(".", 1)[0]
            for o in offsets.tolist()}


def _has_symbol(symbols: frozenset[str], function: str) -> bool:
    """C functions by name; C++ methods (``"mjCGeom::Compile"``) by their Itanium-mangled
    prefix ``_ZN7mjCGeom7CompileE``, which any overload of the method starts with."""
    if "::" not in function:
        return function in symbols
    parts = function.split("::")
    if not all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in parts):
        return False
    prefix = "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + "E"
    return any(name.startswith(prefix) for name in symbols)


def engine(file: str, function: str) -> Source:
    """Cite engine ``function`` in source ``file`` (e.g. ``"engine_forward.c"``).

    ``file`` may be a bare name with a known prefix (``engine_``, ``user_``, ``xml_``, ...)
    or a repository path; ``function`` a C function or a C++ method
    (``"mjCModel::CompileTree"``).  On Linux the function must appear in the installed libmujoco's
    symbol table; small static helpers that the compiler inlined are absent there, so cite
    the function that contains them.  Elsewhere the symbol is not checked.
    """
    __tracebackhide__ = True
    path = file
    if "/" not in file:
        prefix = next((p for p in _SOURCE_DIRS if file.startswith(p)), None)
        if prefix is None:
            raise SourceError(f"unknown source file {file!r}: give its repository path (src/...)")
        path = f"{_SOURCE_DIRS[prefix]}/{file}"
    symbols = _library_symbols()
    if symbols is None:
        detail = "symbol not checked on this platform"
    elif _has_symbol(symbols, function):
        detail = f"{function} found in libmujoco {_installed_version()}"
    else:
        raise SourceError(
            f"libmujoco {_installed_version()} has no function {function!r} (cited from {file}): "
            "it was renamed, removed, or is an inlined static helper; cite its caller instead"
        )
    url = f"{REPO}/blob/{BASELINE_MUJOCO}/{path}"
    return Source("engine", f"{Path(path).name}:{function}", url, detail)


def _rows(name: str) -> list[list[str]]:
    """The tab-separated rows of ``labkit/data/<name>``, without its ``#`` comment lines."""
    text = (Path(__file__).parent / "data" / name).read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


@functools.cache
def _doc_labels() -> dict[str, frozenset[str]]:
    """page -> reStructuredText labels of the MuJoCo manual (from labkit/data)."""
    table: dict[str, set[str]] = {}
    for page, label in _rows("doc_anchors.tsv"):
        table.setdefault(page, set()).add(label)
    return {page: frozenset(labels) for page, labels in table.items()}


def _html_id(label: str) -> str:
    """The HTML id Sphinx gives a label (docutils' make_id: lowercase, hyphens)."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def doc(page: str, anchor: str | None = None) -> Source:
    """Cite a section of the MuJoCo manual, e.g. ``doc("modeling", "CDefault")``.

    page: the page path as in its URL without ``.html`` (``"XMLreference"``,
    ``"computation/index"``).  anchor: the section's reStructuredText label, exactly as
    the manual's source spells it (``"CDefault"``, ``"body-geom-size"``, ``"mj_step"``).
    Both are checked against the manual's table of labels shipped with labkit.
    """
    __tracebackhide__ = True
    page = page.removesuffix(".html")
    labels = _doc_labels()
    if page not in labels:
        close = _close(page, labels, n=3)
        raise SourceError(f"{page!r} is not a page of the MuJoCo manual"
                          + (f"; did you mean {' or '.join(close)}?" if close else ""))
    if anchor is not None and anchor not in labels[page]:
        close = _close(anchor, labels[page], n=3)
        raise SourceError(f"the manual page {page!r} has no section labelled {anchor!r}"
                          + (f"; did you mean {' or '.join(close)}?" if close else ""))
    url = f"{DOCS}/{page}.html" + (f"#{_html_id(anchor)}" if anchor else "")
    label = f"docs {page}" + (f"#{anchor}" if anchor else "")
    return Source("doc", label, url)


@functools.cache
def _issue_topics() -> dict[int, str]:
    """issue number -> its topic, from labkit/data/issues.tsv (one wording per issue)."""
    return {int(number): topic for number, topic in _rows("issues.tsv")}


def issue(number: int, about: str = "") -> Source:
    """Cite a learner question (or bug report) on MuJoCo's GitHub issue tracker.

    The label carries the issue's topic from ``labkit/data/issues.tsv``, so ``"#786"`` prints
    as ``mujoco#786 (impratio and cones)`` wherever it is cited.  ``about`` names the topic
    of an issue that file does not list; for a listed one it must agree with the file.

    Example: ``issue(1741)``, or in a claim ``sources=["#1741"]``.
    """
    __tracebackhide__ = True
    if not isinstance(number, int) or number <= 0:
        raise SourceError(f"issue numbers are positive integers, got {number!r}")
    topic = _issue_topics().get(number)
    if about and topic and about != topic:
        raise SourceError(f"issue #{number} is cited as {topic!r} (labkit/data/issues.tsv), not {about!r}: "
                          f"write '#{number}'")
    about = about or topic
    label = f"mujoco#{number}" + (f" ({about})" if about else "")
    return Source("issue", label, f"{REPO}/issues/{number}")


REFERENCES_PAGE = "references.md"
"""The course's references page, next to the chapters (links are relative to course/)."""


@functools.cache
def _references() -> dict[str, str]:
    """key -> the name chapters use for it, from labkit/data/references.tsv."""
    return {key: name for key, name, _title in _rows("references.tsv")}


def reference(key: str, section: str = "") -> Source:
    """Cite a document of the course's references page by its key (``"mjcf-book"``) and,
    optionally, a section of it (``"§6"``).

    The references page names each document by its title, author and site, and lists
    what the course checked from it and what it found wrong.

    Example: ``reference("e2-course", "§9")``, or in a claim ``sources=["ref:e2-course §9"]``.
    """
    __tracebackhide__ = True
    known = _references()
    if key not in known:
        close = _close(key, known)
        raise SourceError(f"no reference {key!r} on the course's references page"
                          + (f"; did you mean {' or '.join(close)}?" if close else
                             f"; its keys: {', '.join(sorted(known))}"))
    return Source("reference", f"ref:{key}" + (f" {section}" if section else ""), f"{REFERENCES_PAGE}#{key}")


_ISSUE = re.compile(r"^(?:mujoco)?#(?P<number>\d+)(?:\s+\((?P<about>.*)\))?$")
_REFERENCE = re.compile(r"^ref:(?P<key>[a-z0-9-]+)(?:\s+(?P<section>.+))?$")
_CODE = re.compile(r"^(?P<file>[\w./-]+\.(?P<ext>h|c|cc|cpp)):(?P<symbol>[\w:~]+)$")
_DOC = re.compile(r"^(?:docs\s+)?(?P<page>[A-Za-z][\w/]*)(?:#(?P<anchor>[\w.:-]+))?$")


def cite(label: str | Source) -> Source:
    """The source a printed label names, resolved and checked like :func:`header`,
    :func:`engine`, :func:`doc`, :func:`issue` and :func:`reference` do.

    Example: ``cite("mjmodel.h:nq")``, ``cite("XMLreference#body-joint-type")``,
    ``cite("engine_forward.c:mj_fwdActuation")``, ``cite("#1741")``.
    A typo raises :class:`SourceError`, with a "did you mean" where one is close.
    """
    __tracebackhide__ = True
    if isinstance(label, Source):
        return label
    if not isinstance(label, str):
        raise SourceError(f"a source is a label such as 'mjmodel.h:nq' or '#1741', got {label!r}")
    text = label.strip()
    if match := _ISSUE.match(text):
        return issue(int(match["number"]), match["about"] or "")
    if match := _REFERENCE.match(text):
        return reference(match["key"], match["section"] or "")
    if match := _CODE.match(text):
        if match["ext"] == "h":
            return header(match["file"], match["symbol"])
        return engine(match["file"], match["symbol"])
    if match := _DOC.match(text):
        return doc(match["page"], match["anchor"])
    raise SourceError(
        f"cannot read the source {label!r}: cite a header ('mjmodel.h:nq'), an engine function "
        "('engine_forward.c:mj_fwdActuation'), a manual section ('XMLreference#body-joint-type') "
        "or an issue ('#1741')")
