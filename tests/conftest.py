"""Shared fixtures.  labkit.setup() runs once, before anything imports mujoco."""

from __future__ import annotations

import os

import pytest

import labkit
from labkit.errors import CorpusUnavailable

labkit.setup(quiet=True)

# The modules that take longest (``--durations``: their fixtures grade classes, build the site,
# drive a browser or rerun chapters), slowest first.  xdist hands out whole modules (``--dist
# loadscope``) in collection order, so these go first and the run ends on short ones, not on
# one worker finishing a long module while the other waits.
SLOWEST_FIRST = (
    "test_grading_course.py", "test_gradescope.py", "test_mutations.py", "test_site.py",
    "test_browser.py", "test_grading.py", "test_variants_ch08.py", "test_grading_isolation.py",
    "test_nbgrader.py", "test_grading_variants.py", "test_corpus.py", "test_browser_practice.py",
    "test_scoring_attacks.py",
)


def pytest_collection_modifyitems(session, config, items):
    """Put :data:`SLOWEST_FIRST`'s modules first, in that order; the rest keep theirs."""
    rank = {name: k for k, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture
def pendulum():
    """The course pendulum, reset to its tilted keyframe."""
    return labkit.load("pendulum", keyframe="tilted")


@pytest.fixture(scope="session")
def corpus():
    """labkit.corpus, its wheels fetched (once) and unpacked.  Offline the real-model tests
    skip, saying why; CI sets LABKIT_REQUIRE_CORPUS=1, which turns that skip into a failure."""
    import labkit.corpus

    try:
        for wheel in labkit.corpus.WHEELS:
            labkit.corpus.path(next(n for n in labkit.corpus.names() if n.startswith(wheel)))
    except CorpusUnavailable as exc:
        if os.environ.get("LABKIT_REQUIRE_CORPUS"):
            pytest.fail(f"the real-model corpus is required here: {exc}")
        pytest.skip(f"the real-model corpus is unavailable (offline?): {exc}")
    return labkit.corpus


@pytest.fixture(scope="session")
def cli():
    """Run ``labkit ARGS...`` through the real command-line entry point: (status, stdout)."""
    import contextlib
    import io

    from labkit.cli import main

    def run(*argv: object) -> tuple[int, str]:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            status = main([str(a) for a in argv])
        return status, buffer.getvalue()

    return run
