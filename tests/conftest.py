"""Shared fixtures.  labkit.setup() runs once, before anything imports mujoco."""

from __future__ import annotations

import pytest

import labkit

labkit.setup(quiet=True)


@pytest.fixture
def pendulum():
    """The course pendulum, reset to its tilted keyframe."""
    return labkit.load("pendulum", keyframe="tilted")



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
