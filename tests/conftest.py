"""Shared fixtures.  labkit.setup() runs once, before anything imports mujoco."""

from __future__ import annotations

import pytest

import labkit

labkit.setup(quiet=True)


@pytest.fixture
def pendulum():
    """The course pendulum, reset to its tilted keyframe."""
    return labkit.load("pendulum", keyframe="tilted")
