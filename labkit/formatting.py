"""Deterministic, readable text for numbers, arrays and units.

Executed notebooks are compared by nbval, so the same value must print the same way on
every machine: floats are shown with a fixed number of significant digits and values
within 1e-12 of zero print as 0 (their sign and last bits vary between CPUs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["fmt"]

_ZERO = 1e-12


def _float(x: float, digits: int) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) < _ZERO:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


def fmt(value: Any, digits: int = 4, unit: str = "") -> str:
    """Format ``value`` (number, bool, string, array, sequence or mapping) for display.

    Floats get ``digits`` significant digits; arrays keep their shape in brackets.
    ``unit`` is appended after a space (e.g. ``fmt(0.0123, unit="m")`` → ``"0.0123 m"``).
    """
    text = _fmt(value, digits)
    return f"{text} {unit}" if unit else text


def _fmt(value: Any, digits: int) -> str:
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return _float(float(value), digits)
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _fmt(value.item(), digits)
        return "[" + ", ".join(_fmt(v, digits) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_fmt(v, digits)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(_fmt(v, digits) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, Sequence):
        return "[" + ", ".join(_fmt(v, digits) for v in value) + "]"
    return repr(value)
