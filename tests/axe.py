"""axe-core, the accessibility engine, for the browser tests: fetched from npm, checked, cached.

npm is not needed: the pinned release's tarball is downloaded from the npm registry with
urllib, its sha512 checked against the integrity the registry publishes for it (written here,
so a changed tarball is refused), and ``package/axe.min.js`` kept in
``$XDG_CACHE_HOME/mujoco-by-experiment/axe-core/`` (``~/.cache/...``), as labkit.corpus keeps
its wheels.  Offline, with nothing cached, :class:`AxeUnavailable` says what to do; the site
test then skips, or fails where ``LABKIT_REQUIRE_CORPUS=1`` (CI) asks for every download.

    from axe import axe_source, run_axe
    violations = run_axe(page, axe_source())   # a Playwright page, loaded
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

VERSION = "4.14.1"
TARBALL = f"https://registry.npmjs.org/axe-core/-/axe-core-{VERSION}.tgz"
# dist.integrity of https://registry.npmjs.org/axe-core/4.14.1 (a sha512 of the tarball)
INTEGRITY = ("sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe"
             "37OgudVGtQ==")
MEMBER = "package/axe.min.js"
#: The impacts a page must not have (axe's four are minor, moderate, serious, critical).
BLOCKING = ("serious", "critical")
#: The rule sets run: WCAG 2.0-2.2 A and AA, and axe's best practices (landmarks, headings...).
TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice")


class AxeUnavailable(RuntimeError):
    """axe-core is neither cached nor downloadable (offline), or the download is not the release."""


def cache_dir() -> Path:
    """Where the checked axe.min.js is kept: ``$XDG_CACHE_HOME/mujoco-by-experiment/axe-core``."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "mujoco-by-experiment" / "axe-core"


def _integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def axe_source(timeout: float = 60.0) -> str:
    """The JavaScript of axe-core :data:`VERSION` (axe.min.js), from the cache or from npm.

    Raises :class:`AxeUnavailable` when it is not cached and cannot be downloaded, or when the
    downloaded tarball's sha512 is not :data:`INTEGRITY` (nothing is cached then).
    """
    path = cache_dir() / VERSION / "axe.min.js"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    try:
        with urllib.request.urlopen(TARBALL, timeout=timeout) as response:
            data = response.read()
    except OSError as exc:
        raise AxeUnavailable(
            f"axe-core {VERSION} is not cached in {path.parent} and could not be downloaded from "
            f"{TARBALL} ({exc}); run the test once with network access") from exc
    if _integrity(data) != INTEGRITY:
        raise AxeUnavailable(f"{TARBALL} is not the published axe-core {VERSION}: its sha512 is "
                             f"{_integrity(data)}, the registry's is {INTEGRITY}; nothing cached")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = tar.extractfile(MEMBER)
        if member is None:
            raise AxeUnavailable(f"{TARBALL} holds no {MEMBER}")
        source = member.read().decode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(source, encoding="utf-8")
    partial.replace(path)   # whole or not at all: a concurrent reader never sees half a file
    return source


def run_axe(page: Any, source: str, *, tags: tuple[str, ...] = TAGS,
            exclude: tuple[str, ...] = (), rules: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """axe's violations on a loaded Playwright ``page``: one dict per rule with ``id``, ``impact``
    (minor/moderate/serious/critical), ``help`` and ``nodes`` (each with its ``target``
    selector, the start of its ``html`` and ``failureSummary``).

    tags: the rule sets to run (:data:`TAGS`), or rules: these rule ids only; exclude: CSS
    selectors of parts of the page axe does not read.
    """
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=source)
    only = ({"type": "rule", "values": list(rules)} if rules
            else {"type": "tag", "values": list(tags)})
    context = {"exclude": [[selector] for selector in exclude]} if exclude else None
    return page.evaluate(
        """async ([context, only]) => (await axe.run(
                context || document, {runOnly: only, resultTypes: ['violations']}))
            .violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200),
                                          failureSummary: n.failureSummary}))}))""",
        [context, only])


def blocking(violations: list[dict[str, Any]]) -> list[str]:
    """The serious and critical violations, one line each: rule, impact, help, first elements."""
    lines = []
    for v in violations:
        if v["impact"] in BLOCKING:
            where = "; ".join(n["target"] for n in v["nodes"][:3])
            more = f" (+{len(v['nodes']) - 3} more)" if len(v["nodes"]) > 3 else ""
            lines.append(f"{v['id']} [{v['impact']}] {v['help']}: {where}{more}")
    return lines
