"""Variants: each student's own numbers for the exercises, derived from a secret.

An exercise may declare *parameters* (:class:`Param`): the numbers its question gives (a
target depth, a mass, a gear), each with a default, a range and a step.  The default is the
published exercise: the reference chapters, the site, nbval and a self-learner's practice
copy all use it.  An instructor keeps a secret (a file outside the course) and a roster of
logins; a student's numbers are drawn from each parameter's grid by an HMAC of the secret
and the login (:func:`derive`), so they are the same on every rerun, and nobody without the
secret can compute them, not even for themselves.

A handout (``labkit student ... --roster --secret``) carries its student's numbers in one
code cell, :func:`use` (the notebook needs them offline, for its immediate feedback).  The
grader never reads them from there to score: ``labkit grade`` and the Gradescope
autograder derive the numbers again from the login and the secret and score the answers
against those; numbers in the copy that differ are reported as a changed variant.

HMAC-SHA256 (:mod:`hmac`, the standard library) is the keyed hash: without the key its
output cannot be predicted or inverted, which is what makes a neighbour's numbers unknown.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import html
import json
import math
import os
import re
import secrets as _secrets
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..display import fmt

__all__ = [
    "NAMESPACE_KEY",
    "Given",
    "Param",
    "RosterError",
    "SecretError",
    "copy_of",
    "derive",
    "fingerprint",
    "given",
    "instructor_files",
    "new_secret",
    "normal_login",
    "numbers_in",
    "read_roster",
    "read_secret",
    "use",
    "variant_cell",
]

NAMESPACE_KEY = "__labkit_variant__"
"""The notebook variable in which :func:`use` keeps the copy's numbers (``{"login": ...,
"numbers": {exercise id: {name: value}}}``); absent in the published chapters."""

_LABEL = b"labkit-variant/1"   # versions the derivation: a new scheme would change every variant
MIN_SECRET_BYTES = 16


class SecretError(ValueError):
    """The instructor's secret file is missing, unreadable or too short; the message says what to do."""


class RosterError(ValueError):
    """The roster CSV cannot be used; the message names the row and what to change."""


@dataclass(frozen=True)
class Param:
    """A number of an exercise that varies from student to student.

    default: the published value (SI units, as the checker uses it); low, high, step: the
    grid variants are drawn from (``low``, ``low + step``, ... up to ``high``); scale and
    unit: how it is shown (the value divided by ``scale``, then ``unit``: ``scale=1e-6,
    unit="µm"`` shows 2e-05 as "20 µm"); label: what it is, in words ("the target depth");
    gap: variants lie at least this far from the default (default: one step), so that the
    published answer is never the right one for a student.
    """

    default: float
    low: float
    high: float
    step: float
    unit: str = ""
    scale: float = 1.0
    label: str = ""
    gap: float | None = None

    def __post_init__(self) -> None:
        numbers = (self.default, self.low, self.high, self.step, self.scale)
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in numbers):
            raise ValueError(f"a parameter's numbers are finite: {numbers}")
        if not (self.step > 0 and self.scale > 0 and self.low <= self.high):
            raise ValueError(f"a parameter needs step > 0, scale > 0 and low <= high: {self}")
        if not self.low <= self.default <= self.high:
            raise ValueError(f"the default {self.default} lies outside [{self.low}, {self.high}]")
        if not self.values():
            raise ValueError(f"no value of {self} lies far enough from the default")

    def values(self) -> list[float]:
        """The grid variants are drawn from: every ``low + k·step`` up to ``high`` at least
        ``gap`` from the default, each rounded to the step's precision (so 0.1·3 is 0.3)."""
        gap = self.step if self.gap is None else self.gap
        count = math.floor((self.high - self.low) / self.step + 1e-9) + 1
        digits = max(0, 12 - math.floor(math.log10(self.step)))
        grid = (round(self.low + k * self.step, digits) for k in range(count))
        return [float(f"{v:.12g}") for v in grid if abs(v - self.default) >= gap * (1 - 1e-9)]

    def show(self, value: float) -> str:
        """``value`` as the question shows it: in the parameter's unit, e.g. "20 µm"."""
        return fmt(float(value) / self.scale, unit=self.unit)


def normal_login(login: str) -> str:
    """A login as variants use it: without surrounding whitespace, in lower case (e-mail
    addresses and most LMS logins ignore case, so ``Alice@Uni.edu`` is ``alice@uni.edu``)."""
    return str(login).strip().lower()


def fingerprint(secret: bytes) -> str:
    """A short public tag of a secret (8 hex digits of its HMAC of a fixed text): a handout
    carries it, so that a grader run with another secret says so instead of flagging every
    student.  It reveals nothing usable about the secret."""
    return hmac.new(secret, _LABEL + b"\0fingerprint", hashlib.sha256).hexdigest()[:8]


def _index(secret: bytes, login: str, number: str, name: str, attempt: int, size: int) -> int:
    login = normal_login(login)
    message = b"\0".join([_LABEL, login.encode(), number.encode(), name.encode(), str(attempt).encode()])
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % size   # 2^64 / size: the bias is below 1e-15


def derive(secret: bytes, login: str, number: str, params: Mapping[str, Param],
           valid: Callable[[dict[str, float]], bool] | None = None) -> dict[str, float]:
    """The numbers of exercise ``number`` for ``login``: one grid value per parameter,
    chosen by HMAC-SHA256 of the secret and (login, exercise, parameter); the login's case
    and surrounding whitespace do not matter (:func:`normal_login`).  ``valid``: a
    condition on the whole set (parameters that must stay apart, say); sets that fail it
    are drawn again with the next attempt number, deterministically."""
    if len(secret) < MIN_SECRET_BYTES:
        raise SecretError(f"the secret is {len(secret)} bytes long; it needs at least {MIN_SECRET_BYTES}")
    for attempt in range(1000):
        values = {name: p.values()[_index(secret, login, number, name, attempt, len(p.values()))]
                  for name, p in params.items()}
        if valid is None or valid(values):
            return values
    raise ValueError(f"exercise {number}: no variant meets its condition in 1000 draws")


# -- the instructor's files -----------------------------------------------------------------------
def new_secret(path: Path | str) -> Path:
    """Write a new random secret (32 bytes, hex) to ``path``, readable by its owner only;
    never replaces an existing file (a lost secret changes every student's numbers)."""
    path = Path(path)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SecretError(f"{path} exists already; it may be the secret your handouts were made "
                          "with, so it is left as it is (choose another path)") from None
    with os.fdopen(handle, "w") as out:
        out.write(_secrets.token_hex(32) + "\n")
    return path


def read_secret(path: Path | str) -> bytes:
    """The instructor's secret, the bytes of the file at ``path`` without surrounding whitespace."""
    path = Path(path)
    try:
        secret = path.read_bytes().removeprefix(b"\xef\xbb\xbf").strip()   # an editor's UTF-8 BOM too
    except OSError as exc:
        raise SecretError(f"cannot read the secret file {path} ({exc.strerror or exc}); make one with "
                          f"`labkit variants secret {path}` and keep it outside the course folder") from None
    if len(secret) < MIN_SECRET_BYTES:
        raise SecretError(f"the secret file {path} holds {len(secret)} bytes; a secret needs at least "
                          f"{MIN_SECRET_BYTES}: make one with `labkit variants secret NEWFILE`")
    return secret


_LOGIN = re.compile(r"^[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]{0,127}$")


def read_roster(path: Path | str) -> list[str]:
    """The logins of a roster CSV: a header row with a ``login`` column (other columns are
    ignored), one student a row.  A login becomes a folder name of the handout and of the
    grade report, so it is letters, digits and ``_ . @ + -`` (an e-mail address fits),
    and unique regardless of case."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
    except UnicodeDecodeError:
        raise RosterError(f"the roster {path} is not UTF-8 text: save it as CSV UTF-8") from None
    except (OSError, csv.Error) as exc:
        raise RosterError(f"cannot read the roster {path}: {exc}") from None
    header = [str(k).strip().lower() for k in (rows[0].keys() if rows else [])]
    if not rows or header.count("login") != 1:
        found = ", ".join(repr(k) for k in (rows[0].keys() if rows else [])) or "no columns"
        raise RosterError(f"the roster {path} needs a header row with one `login` column, then one "
                          f"student a row, comma-separated (e.g. `login,name` then `alice,Alice Smith`); "
                          f"its header has {found}")
    column = next(k for k in rows[0] if str(k).strip().lower() == "login")
    logins: list[str] = []
    for line, row in enumerate(rows, start=2):
        login = (row.get(column) or "").strip()
        if not _LOGIN.match(login):
            raise RosterError(f"{path}, line {line}: the login {login!r} is not usable as a folder name "
                              "(letters, digits and _ . @ + - only, not starting with a dot)")
        if normal_login(login) in map(normal_login, logins):
            raise RosterError(f"{path}, line {line}: the login {login!r} appears twice (logins ignore "
                              "case: alice and Alice are one student)")
        logins.append(login)
    return logins


def instructor_files(secret: Path | str | None, roster: Path | str | None, *, together: bool = False
                     ) -> tuple[bytes | None, list[str] | None]:
    """The secret and the roster's logins from their files (None for a file not given).  A
    roster needs the secret (it says whose numbers the secret makes); ``together``: the secret
    needs the roster too.  Raises :class:`SecretError` or :class:`RosterError` saying what to do."""
    if (roster is not None and secret is None) or (together and secret is not None and roster is None):
        raise SecretError("--roster and --secret go together: the roster says who, the secret makes "
                          "each student's numbers (the file the handouts were made with)"
                          if together else "--roster needs --secret, the file the handouts were made with")
    return (read_secret(secret) if secret is not None else None,
            read_roster(roster) if roster is not None else None)


# -- in the notebook ---------------------------------------------------------------------------------
def variant_cell(login: str, numbers: Mapping[str, Mapping[str, float]], secret: bytes) -> str:
    """The source of the code cell a handout carries: :func:`use` with the student's numbers
    and the :func:`fingerprint` of the secret they were made with."""
    data = json.dumps({k: dict(v) for k, v in numbers.items()}, sort_keys=True)
    return ("# Your own numbers for this chapter's exercises, made for you by your instructor.\n"
            "# Leave this cell as it is: the grader knows which numbers are yours.\n"
            f"labkit.exercises.variants.use({json.dumps(login)}, {data},\n"
            f"                              made_with={json.dumps(fingerprint(secret))})")


def use(login: str, numbers: Mapping[str, Mapping[str, float]], made_with: str = "") -> None:
    """Give the calling notebook the numbers of ``login``'s variant (the handout's cell);
    ``made_with``: the fingerprint of the instructor's secret."""
    namespace = sys._getframe(1).f_globals
    clean = {str(k): {str(n): float(v) for n, v in dict(values).items()} for k, values in numbers.items()}
    namespace[NAMESPACE_KEY] = {"login": str(login), "numbers": clean, "made_with": str(made_with)}
    from .. import reporting

    listed = ", ".join(clean) or "none"
    reporting.publish(f"Your variant ({login}): exercises {listed} use your own numbers.",
                      f"<p>Your variant (<code>{html.escape(str(login))}</code>): exercises "
                      f"{html.escape(listed)} use your own numbers.</p>")


def copy_of(namespace: Mapping[str, Any]) -> dict[str, str] | None:
    """Whose handout the notebook says it is: ``{"login": ..., "made_with": ...}`` (strings,
    at most 200 characters each), or None in a published chapter."""
    found = namespace.get(NAMESPACE_KEY)
    if not isinstance(found, Mapping):
        return None
    return {key: str(found.get(key, ""))[:200] for key in ("login", "made_with")}


def numbers_in(namespace: Mapping[str, Any], number: str) -> dict[str, float] | None:
    """The copy's numbers for exercise ``number`` (None in a published chapter)."""
    found = namespace.get(NAMESPACE_KEY)
    if not isinstance(found, Mapping) or not isinstance(found.get("numbers"), Mapping):
        return None
    values = found["numbers"].get(number)
    return dict(values) if isinstance(values, Mapping) else None


class Given:
    """The numbers of one exercise, as attributes (``target.depth``), shown as a box."""

    def __init__(self, number: str, title: str, params: Mapping[str, Param], values: Mapping[str, float],
                 own: bool):
        self._number, self._title, self._params, self._own = number, title, dict(params), own
        self._values = {name: float(values[name]) for name in params}
        for name, value in self._values.items():
            setattr(self, name, value)

    def __iter__(self) -> Iterable[float]:
        return iter(self._values.values())

    def as_dict(self) -> dict[str, float]:
        """The numbers, ``{name: value}`` in SI units."""
        return dict(self._values)

    def _lines(self) -> list[tuple[str, str, str]]:
        return [(name, self._params[name].label or name, self._params[name].show(v))
                for name, v in self._values.items()]

    def _whose(self) -> str:
        return ("your own numbers" if self._own else
                "the published numbers (an instructor's handout gives each student their own)")

    def text(self) -> str:
        """The box as plain text."""
        rows = "\n".join(f"  {name} = {shown}   ({label})" for name, label, shown in self._lines())
        return f"Exercise {self._number} · {self._title} · {self._whose()}:\n{rows}"

    def html(self) -> str:
        """The box as HTML."""
        rows = "".join(f"<li><code>{html.escape(name)}</code> = <b>{html.escape(shown)}</b> "
                       f"({html.escape(label)})</li>" for name, label, shown in self._lines())
        return ('<div style="border:1px solid #1565c0;border-left:6px solid #1565c0;padding:4px 8px;'
                'margin:4px 0;font-family:sans-serif;font-size:90%"><b>Exercise '
                f"{html.escape(self._number)} · {html.escape(self._title)}</b>: {self._whose()}"
                f"<ul style='margin:2px 0'>{rows}</ul></div>")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self._values.items())
        return f"Given({self._number!r}, {shown})"


def given(number: str) -> Given:
    """Exercise ``number``'s numbers in this notebook: the student's own in a handout, the
    published defaults elsewhere.  Shows them as a box (each with its unit and what it is)
    and returns them, each as an attribute in SI units.

    Example: ``target = labkit.given("5.1")``, then ``target.depth`` (m) in the answer.
    """
    from .core import spec

    found = spec(number)
    if not found.params:
        raise ValueError(f"exercise {number} has no numbers of its own (it declares no parameters)")
    own = numbers_in(sys._getframe(1).f_globals, found.id)
    values = found.values(own)
    shown = Given(found.id, found.title, found.params, values, own is not None)
    from .. import reporting

    reporting.publish(shown.text(), shown.html())
    return shown
