"""Answers as data: what kind of value each exercise asks for, and its JSON form.

An exercise declares its answer variables and their kinds, e.g.
``{"tip_height": NUMBER, "masks": mapping(array(length=2, integer=True))}``.  Before an
answer is checked it is turned into plain JSON data (numbers, strings, lists, dicts; never
pickled, at most :data:`MAX_BYTES` per answer) and read back, both in the notebook's
feedback cell and when ``labkit grade`` collects it from a student's kernel, so the
checker sees exactly the same value in both places.

An answer that cannot be turned into its kind becomes ``{"invalid": "<why>"}``; one the
learner never assigned becomes ``{"missing": true}``.  An exercise whose answer has to be
code uses :func:`recorded`: a probe held in labkit runs the learner's function on inputs
it chooses and records what came out, as data; the checker then verifies the record.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "BOOLEAN",
    "INTEGER",
    "MAX_BYTES",
    "MISSING",
    "NUMBER",
    "PARAMS",
    "STRING",
    "AnswerError",
    "Kind",
    "array",
    "encode",
    "mapping",
    "recorded",
]

MAX_BYTES = 256 * 1024
"""The largest JSON form of one answer (bytes): far beyond any honest answer."""

MAX_ITEMS = 10_000
"""The most numbers an array answer may hold."""

MISSING = {"missing": True}


class AnswerError(ValueError):
    """An answer does not have the kind its exercise asks for; the message says why."""


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool | np.bool_):
        raise AnswerError(f"{what} should be a number, not {value!r}")
    if isinstance(value, str | bytes):
        raise AnswerError(f"{what} should be a number, got {type(value).__name__} {value[:40]!r}")
    try:
        number = float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise AnswerError(f"{what} should be a number, got {type(value).__name__}") from None
    if not math.isfinite(number):
        raise AnswerError(f"{what} should be a finite number, got {number}")
    return number


def _integer(value: Any, what: str) -> int:
    number = _number(value, what)
    if number != int(number):
        raise AnswerError(f"{what} should be a whole number, got {number!r}")
    return int(number)


@dataclass(frozen=True)
class Kind:
    """A kind of answer: a name for messages and a function from a Python value to JSON data.

    ``convert(value)`` returns plain data (it raises :class:`AnswerError` with a message
    for the learner when the value does not fit).
    """

    name: str
    convert: Callable[[Any], Any]

    def to_data(self, value: Any, label: str) -> Any:
        """``value`` as JSON-ready data, or ``{"invalid": why}``."""
        try:
            data = self.convert(value)
            text = json.dumps(data, allow_nan=False)
        except AnswerError as exc:
            return {"invalid": str(exc).replace("the answer", f"`{label}`", 1)}
        except (TypeError, ValueError) as exc:
            return {"invalid": f"`{label}` cannot be stored as {self.name}: {exc}"}
        if len(text) > MAX_BYTES:
            return {
                "invalid": f"`{label}` is too large ({len(text)} bytes as JSON; the limit is {MAX_BYTES})"
            }
        return {"value": data}


NUMBER = Kind("a number", lambda v: _number(v, "the answer"))
INTEGER = Kind("a whole number", lambda v: _integer(v, "the answer"))


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise AnswerError(f"the answer should be True or False, got {value!r}")
    return bool(value)


BOOLEAN = Kind("True or False", _boolean)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise AnswerError(f"the answer should be a string, got {type(value).__name__}")
    return value


STRING = Kind("a string", _string)


def array(*, length: int | None = None, integer: bool = False) -> Kind:
    """A (nested) list of numbers: a tuple, list or numpy array; ``length`` fixes the
    outer length, ``integer`` asks for whole numbers."""

    def convert(value: Any) -> Any:
        if isinstance(value, str | bytes | Mapping):
            raise AnswerError(f"the answer should be a sequence of numbers, got {type(value).__name__}")
        try:
            values = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise AnswerError(
                "the answer should be a sequence of numbers (all rows the same length)"
            ) from None
        if values.ndim == 0:
            raise AnswerError(f"the answer should be a sequence of numbers, got one number {float(values)!r}")
        if values.size > MAX_ITEMS:
            raise AnswerError(f"the answer holds {values.size} numbers; at most {MAX_ITEMS} are read")
        if length is not None and len(values) != length:
            raise AnswerError(f"the answer should have {length} entries, it has {len(values)}")
        if not np.all(np.isfinite(values)):
            raise AnswerError("the answer should hold finite numbers only")
        if integer:
            if not np.all(values == np.round(values)):
                raise AnswerError("the answer should hold whole numbers")
            return values.astype(int).tolist()
        return values.tolist()

    shape = f"{length} " if length else ""
    return Kind(f"a sequence of {shape}{'whole ' if integer else ''}numbers", convert)


def mapping(values: Kind) -> Kind:
    """A dict from names (strings) to answers of kind ``values``."""

    def convert(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise AnswerError(f"the answer should be a dict, got {type(value).__name__}")
        if len(value) > 1000:
            raise AnswerError("the answer has more than 1000 entries")
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise AnswerError(f"the answer's keys should be strings, got {key!r}")
            try:
                out[key] = values.convert(item)
            except AnswerError as exc:
                raise AnswerError(
                    f"the answer's entry {key!r}: {str(exc).replace('the answer ', '', 1)}"
                ) from None
        return out

    return Kind(f"a dict of {values.name}", convert)


def _parameter(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if np.ndim(value) == 0:
        return _number(value, "the answer")
    return array().convert(value)


PARAMS = Kind("a dict of parameters", mapping(Kind("a parameter", _parameter)).convert)
"""A dict of named parameters, each a number, a string, a bool or a list of numbers."""


def recorded(probe: Callable[[Any], Any], name: str = "a function") -> Kind:
    """An answer that is code: ``probe(value)`` calls the learner's function on inputs
    that labkit chooses and returns what it observed, as JSON data.  The probe runs where
    the learner's code runs (the notebook's kernel, or the grader's sandbox); the checker
    receives only the record."""

    def convert(value: Any) -> Any:
        if not callable(value):
            raise AnswerError(f"the answer should be {name}, got {type(value).__name__}")
        try:
            return probe(value)
        except AnswerError:
            raise
        except Exception as exc:
            raise AnswerError(f"calling it raised {type(exc).__name__}: {exc}"[:500]) from None

    return Kind(name, convert)


def encode(kind: Kind, namespace: Mapping[str, Any], name: str) -> Any:
    """The answer ``name`` in ``namespace`` as data (``MISSING`` if it is not there)."""
    if name not in namespace or namespace[name] is Ellipsis:
        return dict(MISSING)
    return kind.to_data(namespace[name], name)
