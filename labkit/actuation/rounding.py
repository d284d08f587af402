"""When two numbers are equal to rounding, and when a shown number is round-off.

MuJoCo and labkit evaluate the same double-precision formulas, in a possibly different
order, so they agree to rounding (about 1e-16 relative per operation, a few dozen
operations per stage).  Stages are compared with ``|a - b| <= 1e-9·max(1, |a|, |b|)``
(:func:`agree`): six orders of magnitude above rounding, yet a missing gear, a wrong sign
or a forgotten clamp differs by far more.  Which displayed values are round-off and
print as 0 is :func:`labkit.display.clean`'s rule, the same bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Relative (and, below magnitude 1, absolute) tolerance of every cross-check; see the module docstring.
RTOL = 1e-9


def tolerance(*magnitudes: Any) -> np.ndarray:
    """``RTOL·max(1, |m₁|, |m₂|, …)``, elementwise: a difference or a value below it is round-off.

    Example: ``tolerance(3.0, -5.0)`` → ``array(5.e-09)``.
    """
    scale: Any = 1.0
    for magnitude in magnitudes:
        scale = np.maximum(scale, np.abs(np.asarray(magnitude, dtype=float)))
    return RTOL * np.asarray(scale)


def agree(ours: Any, theirs: Any) -> np.ndarray:
    """Whether ``ours`` and ``theirs`` (same shape) are equal to rounding, elementwise (bool array).

    Example: ``agree(1.0, 1.0 + 1e-12)`` → ``array(True)``.
    """
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    with np.errstate(invalid="ignore"):                 # inf - inf: handled by the equality below
        close = (np.abs(ours - theirs) <= tolerance(ours, theirs)) & np.isfinite(ours) & np.isfinite(theirs)
    return close | (ours == theirs)                     # an infinity agrees only with itself

