"""Install MuJoCo's global control callback for one block of code, and always restore it.

``mujoco.set_mjcb_control`` sets a process-wide function pointer: every ``mj_step`` and
``mj_forward`` of every model calls it, once per evaluation of the dynamics.  Forgetting
to remove it after an experiment (or an exception in the middle of one) leaves it
running in every later cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import gl

__all__ = ["control_callback"]


@contextmanager
def control_callback(function: Callable[[Any, Any], None]) -> Iterator[None]:
    """Install ``function(model, data)`` as ``mjcb_control`` inside the ``with`` block.

    The previous callback (usually none) is put back on exit, also when the block raises.
    """
    gl.choose()
    import mujoco

    previous = mujoco.get_mjcb_control()
    mujoco.set_mjcb_control(function)
    try:
        yield
    finally:
        mujoco.set_mjcb_control(previous)
