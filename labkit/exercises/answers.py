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

import difflib
import json
import math
from collections.abc import Callable, Mapping, Sequence
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
    "choice",
    "encode",
    "fields",
    "integer",
    "mapping",
    "number",
    "probe_seed",
    "recorded",
    "validate",
]

MAX_BYTES = 256 * 1024
"""The largest JSON form of one answer (bytes): far beyond any honest answer."""

MAX_ITEMS = 10_000
"""The most numbers an array answer may hold."""

MISSING = {"missing": True}

SEED_VARIABLE = "LABKIT_PROBE_SEED"
"""The environment variable through which ``labkit grade`` hands a code answer's probe the
seed of its unseen inputs (drawn per submission, and given to the scorer too)."""


def probe_seed() -> int:
    """The seed of the unseen inputs a code answer's probe generates: 0 in a notebook (the
    feedback cell and its checker agree without being told), the grader's own draw when
    ``labkit grade`` runs the notebook (:data:`SEED_VARIABLE`)."""
    import os

    text = os.environ.get(SEED_VARIABLE, "0")
    return int(text) if text.isdigit() and len(text) <= 19 else 0


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
    for the learner when the value does not fit).  ``check(data)`` validates data that
    arrives from elsewhere (the grader's scorer receives answers from a student's kernel,
    which could have forged them): by default the same conversion, which every data kind
    accepts on its own output; a code answer (:func:`recorded`) declares how its record
    is validated instead.
    """

    name: str
    convert: Callable[[Any], Any]
    validate: Callable[[Any], Any] | None = None

    def check(self, data: Any) -> Any:
        """``data`` (JSON, from wherever) as this kind's data; raises :class:`AnswerError`."""
        return (self.validate or self.convert)(data)

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


def _bounded(value: float, low: float | None, high: float | None, *, low_open: bool, high_open: bool,
             unit: str, why: str) -> float:
    """``value`` if it lies in the interval, else an :class:`AnswerError` that names it."""
    below = low is not None and (value <= low if low_open else value < low)
    above = high is not None and (value >= high if high_open else value > high)
    if below or above:
        left = "" if low is None else f"{'above' if low_open else 'at least'} {low:g}{unit}"
        right = "" if high is None else f"{'below' if high_open else 'at most'} {high:g}{unit}"
        span = " and ".join(part for part in (left, right) if part)
        raise AnswerError(f"the answer should be {span}, got {value:g}{unit}" + (f": {why}" if why else ""))
    return value


def number(low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False, unit: str = "", why: str = "") -> Kind:
    """A finite number in ``[low, high]`` (``low_open`` / ``high_open``: the bound itself is
    excluded; None: no bound).  ``unit`` (with its leading space, e.g. ``" N/m"``) and
    ``why`` (the physical reason for the range) go into the message of an answer outside
    it, which is refused before anything is simulated.

    Example: ``number(0, 10, low_open=True, why="a friction coefficient is positive")``.
    """
    def convert(value: Any) -> float:
        return _bounded(_number(value, "the answer"), low, high, low_open=low_open, high_open=high_open,
                        unit=unit, why=why)

    return Kind("a number", convert)


def integer(low: int | None = None, high: int | None = None, *, why: str = "") -> Kind:
    """A whole number in ``[low, high]`` (None: no bound); ``why`` as for :func:`number`."""
    def convert(value: Any) -> int:
        found = _integer(value, "the answer")
        _bounded(found, low, high, low_open=False, high_open=False, unit="", why=why)
        return found

    return Kind("a whole number", convert)


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


def array(*, length: int | None = None, integer: bool = False,
          items: Sequence[Kind] | None = None, each: Kind | None = None) -> Kind:
    """A (nested) list of numbers: a tuple, list or numpy array; ``length`` fixes the
    outer length, ``integer`` asks for whole numbers.  ``items`` gives one kind per entry
    of a flat list (e.g. a range for each of solref's two numbers; it fixes the length),
    ``each`` one kind for every number (e.g. ``number(0, 1)``)."""
    if items is not None:
        length = len(items)

    def bounded(values: np.ndarray) -> None:
        if items is not None:
            if values.ndim != 1:
                raise AnswerError(f"the answer should be a flat list of {len(items)} numbers")
            for index, (kind, entry) in enumerate(zip(items, values.tolist(), strict=True)):
                _entry(kind, entry, index)
        if each is not None:
            for index, entry in enumerate(values.ravel().tolist()):
                _entry(each, entry, index)

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
        bounded(values)
        if integer:
            if not np.all(values == np.round(values)):
                raise AnswerError("the answer should hold whole numbers")
            return values.astype(int).tolist()
        return values.tolist()

    shape = f"{length} " if length else ""
    return Kind(f"a sequence of {shape}{'whole ' if integer else ''}numbers", convert)


def _entry(kind: Kind, value: Any, index: int | str) -> Any:
    """``kind``'s data for one entry of a list or dict, its message naming the entry."""
    try:
        return kind.convert(value)
    except AnswerError as exc:
        raise AnswerError(f"the answer's entry {index!r}: {str(exc).replace('the answer ', '', 1)}") from None


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
            out[key] = _entry(values, item, key)
        return out

    return Kind(f"a dict of {values.name}", convert)


def choice(options: Sequence[Any], what: str = "") -> Kind:
    """One of ``options``: names (strings) or whole numbers (e.g. MuJoCo's condim values 1,
    3, 4, 6), refused otherwise; ``what`` says what they are, for the message."""
    shown = ", ".join(repr(o) for o in options[:-1]) + f" or {options[-1]!r}" if len(options) > 1 \
        else repr(options[0])
    whole = all(isinstance(o, int) and not isinstance(o, bool) for o in options)

    def convert(value: Any) -> Any:
        found = _integer(value, "the answer") if whole and not isinstance(value, str | bool) else value
        if isinstance(found, bool) or not isinstance(found, int | str) or found not in options:
            raise AnswerError(f"the answer should be {shown}{f' ({what})' if what else ''}, "
                              f"got {str(value)[:40]!r}")
        return found

    return Kind(f"one of {shown}", convert)


def fields(kinds: Mapping[str, Kind], *, required: Sequence[str] = ()) -> Kind:
    """A dict with known keys, each of its own kind (e.g. the capstone's parameters, each
    with its physical range).  A key not in ``kinds`` is refused, naming the nearest known
    one; so is a missing ``required`` key; other keys may be left out."""
    known = dict(kinds)

    def convert(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise AnswerError(f"the answer should be a dict, got {type(value).__name__}")
        unknown = [key for key in value if key not in known]
        if unknown:
            near = difflib.get_close_matches(str(unknown[0]), list(known), n=1)
            raise AnswerError(f"the answer has an unknown entry {str(unknown[0])[:40]!r}"
                              + (f"; did you mean {near[0]!r}?" if near else "")
                              + f" (known: {', '.join(known)})")
        absent = [key for key in required if key not in value]
        if absent:
            raise AnswerError(f"the answer lacks the entry {absent[0]!r}")
        return {key: _entry(known[key], item, key) for key, item in value.items()}

    return Kind("a dict of parameters", convert)


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


def recorded(probe: Callable[[Any], Any], name: str = "a function", *,
             validate: Callable[[Any], Any]) -> Kind:
    """An answer that is code: ``probe(value)`` calls the learner's function on inputs
    that labkit chooses and returns what it observed, as JSON data.  The probe runs where
    the learner's code runs (the notebook's kernel, or the grader's sandbox), so its record
    is as untrusted as any answer: ``validate(record)`` checks its shape and types (raising
    :class:`AnswerError`) before the checker, which receives only the record, verifies it."""

    def convert(value: Any) -> Any:
        if not callable(value):
            raise AnswerError(f"the answer should be {name}, got {type(value).__name__}")
        try:
            return probe(value)
        except AnswerError:
            raise
        except Exception as exc:
            raise AnswerError(f"calling it raised {type(exc).__name__}: {exc}"[:500]) from None

    return Kind(name, convert, validate)


def validate(kind: Kind, data: Any, label: str = "the answer") -> dict[str, Any]:
    """Answer data as the scorer accepts it: ``{"value": v}`` whose ``v`` passes the kind's
    :meth:`Kind.check` (finiteness, ranges and all) and fits :data:`MAX_BYTES`,
    ``{"invalid": why}`` or ``MISSING``.  ``label``: the answer's name, for the message.

    The notebook produced ``data`` with the same conversion, but the grader receives it
    from a student's kernel, where any payload can be forged: nothing else reaches a
    checker.
    """
    if not isinstance(data, Mapping) or data.get("missing") is True:
        return dict(MISSING)
    if "value" not in data:
        why = data.get("invalid")
        return {"invalid": why[:500]} if isinstance(why, str) and why else dict(MISSING)
    try:
        value = kind.check(data["value"])
        text = json.dumps(value, allow_nan=False)
    except AnswerError as exc:
        return {"invalid": str(exc).replace("the answer", f"`{label}`", 1)[:500]}
    except (TypeError, ValueError, RecursionError) as exc:
        return {"invalid": f"`{label}` cannot be read as {kind.name} ({type(exc).__name__})"}
    if len(text) > MAX_BYTES:
        return {"invalid": f"`{label}` is too large ({len(text)} bytes as JSON; the limit is {MAX_BYTES})"}
    return {"value": value}


def encode(kind: Kind, namespace: Mapping[str, Any], name: str) -> Any:
    """The answer ``name`` in ``namespace`` as data (``MISSING`` if it is not there)."""
    if name not in namespace or namespace[name] is Ellipsis:
        return dict(MISSING)
    return kind.to_data(namespace[name], name)
