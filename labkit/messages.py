"""Capture the warnings MuJoCo prints, so a notebook can show and check them.

MuJoCo reports some problems (a deprecated attribute, a mixed-sign solref) as warnings
through ``mju_user_warning``: by default they go to stderr and to ``MUJOCO_LOG.TXT``.
Inside :func:`mujoco_warnings` they are collected instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from . import gl

__all__ = ["mujoco_warnings"]


@contextmanager
def mujoco_warnings() -> Iterator[list[str]]:
    """Collect MuJoCo's warning messages raised inside the ``with`` block into a list.

    ``with labkit.mujoco_warnings() as caught: ...`` — afterwards ``caught`` holds one
    string per warning.  The previous warning handler is restored on exit.
    """
    gl.choose()
    import mujoco

    caught: list[str] = []
    mujoco.set_mju_user_warning(lambda message: caught.append(str(message).strip()))
    try:
        yield caught
    finally:
        mujoco.set_mju_user_warning(None)
