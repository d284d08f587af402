"""An exercise's checker, its requirements, its score and its feedback.

A checker is a function in labkit (one module per chapter, ``labkit.exercises.chNN``)
registered with :func:`checker`.  It receives an :class:`Exercise` holding the learner's
answers *as data* (see :mod:`labkit.exercises.answers`) and states requirements::

    @checker("1.3", "A capsule of a given weight", points=2, answers={"rho": NUMBER})
    def _(ex: Exercise) -> None:
        mass = weigh_capsule(ex.value("rho"))           # uses only labkit's own models
        ex.require(abs(mass - 0.3) < 1e-6, "the capsule weighs 0.3 kg",
                   failure=f"it weighs {fmt(mass, unit='kg')}", hint="...")

The checker reads nothing from the notebook but its answers, and its constants, models
and scripts live in labkit: the notebook's feedback cell and ``labkit grade`` run the same
code on the same data.  A requirement with ``hidden=True`` counts only when graded (the
nbgrader convention of hidden tests); the learner's feedback cell does not run it.
"""

from __future__ import annotations

import contextlib
import html
import importlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..display import fmt
from ..errors import ExerciseFailed, NotAnswered
from .answers import Kind, probe_seed, validate
from .variants import Param

__all__ = ["Exercise", "ExerciseFailed", "NotAnswered", "Param", "Result", "Spec", "chapter_specs",
           "checker", "spec"]


@dataclass
class Result:
    """One requirement of an exercise: what was asked, whether it was met, and why not.

    A *precondition* (``gate``) carries no weight: meeting it earns nothing, missing it
    makes the whole exercise score 0."""

    requirement: str
    passed: bool
    weight: float
    message: str = ""
    hint: str = ""
    hidden: bool = False
    gate: bool = False


@dataclass(frozen=True)
class Spec:
    """A registered exercise: id (``"N.M"``), title, points, answer kinds and checker.

    params: the numbers that vary from student to student (:mod:`.variants`); the title
    never states them (it names the exercise in every student's report alike).  valid: a
    condition on a whole set of numbers (None: any set).  fixed: why the exercise has no
    numbers to vary (a yes/no fact, a name), or "".
    """

    id: str
    title: str
    points: float
    answers: Mapping[str, Kind]
    check: Callable[[Exercise], None] = field(repr=False)
    params: Mapping[str, Param] = field(default_factory=dict)
    valid: Callable[[dict[str, float]], bool] | None = field(default=None, repr=False)
    fixed: str = ""

    @property
    def chapter(self) -> int:
        return int(self.id.split(".")[0])

    @property
    def defaults(self) -> dict[str, float]:
        """The published numbers: every parameter's default."""
        return {name: p.default for name, p in self.params.items()}

    def values(self, given: Mapping[str, Any] | None = None) -> dict[str, float]:
        """The numbers to check against: ``given``'s, where it holds a finite number for a
        parameter, else the default (extra names are ignored)."""
        values = self.defaults
        for name in values:
            value = (given or {}).get(name)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                values[name] = float(value)
        return values

    def grade(self, answers: Any, *, hidden: bool = False, seed: int | None = None,
              values: Mapping[str, Any] | None = None) -> Exercise:
        """Score answer data (``{name: {"value": ...} | {"missing": True} | {"invalid": why}}``).

        Every answer is first validated with its declared kind (:func:`.answers.validate`:
        type, finiteness, physical range), whatever produced the data, so a checker only
        ever sees well-formed values.  ``hidden``: also run the hidden requirements (the
        grader does; notebooks do not).  ``seed``: the seed the probe of a code answer
        generated its unseen inputs with (the grader passes its own draw; default
        :func:`.answers.probe_seed`).  ``values``: the variant's numbers (default: the
        published ones; see :meth:`values`).  Never raises for a bad answer: an error while
        checking becomes a failed requirement.
        """
        given = answers if isinstance(answers, Mapping) else {}
        clean = {name: validate(kind, given.get(name), name) for name, kind in self.answers.items()}
        ex = Exercise(self, clean, hidden=hidden, seed=probe_seed() if seed is None else int(seed),
                      values=self.values(values))
        try:
            self.check(ex)
        except _Stopped:
            pass
        except ExerciseFailed as exc:
            ex._fail("your answer can be checked", str(exc))
        except Exception as exc:  # a strange answer may upset a checker: feedback, not a crash
            ex._fail(
                "your answer can be checked", f"checking your answer raised {type(exc).__name__}: {exc}"[:500]
            )
        if not ex.results:
            raise RuntimeError(f"exercise {self.id} states no requirement to grade")
        if not any(r.weight > 0 or (r.gate and not r.passed) for r in ex.results):
            raise RuntimeError(f"exercise {self.id} stated only preconditions: nothing earns its points")
        return ex


class _Stopped(Exception):
    """A precondition failed: the checker stops, and the exercise scores 0."""


_REGISTRY: dict[str, Spec] = {}
_ID = re.compile(r"^\d+\.\d+$")


def checker(
    number: str, title: str, *, points: float, answers: Mapping[str, Kind],
    params: Mapping[str, Param] | None = None, valid: Callable[[dict[str, float]], bool] | None = None,
    fixed: str = "",
) -> Callable[[Callable[[Exercise], None]], Callable[[Exercise], None]]:
    """Register the decorated function as the checker of exercise ``number``.

    answers: the learner's variables the exercise reads, with their kinds; points: what a
    fully met exercise earns; params: the numbers that vary per student (the checker reads
    them with :meth:`Exercise.param`), with valid, an optional condition on a whole set;
    fixed: for an exercise without params, why it cannot vary.
    """
    params = dict(params or {})
    if params and fixed:
        raise ValueError(f"exercise {number} has parameters, so it is not fixed")
    if not _ID.match(number):
        raise ValueError(f"an exercise id looks like '3.2', not {number!r}")
    if points <= 0:
        raise ValueError("an exercise must be worth a positive number of points")

    def register(function: Callable[[Exercise], None]) -> Callable[[Exercise], None]:
        if number in _REGISTRY:
            raise ValueError(f"exercise {number} is registered twice")
        _REGISTRY[number] = Spec(number, title, float(points), dict(answers), function, params, valid, fixed)
        return function

    return register


def _module(chapter: int) -> str:
    return f"labkit.exercises.ch{chapter:02d}"


def spec(number: str) -> Spec:
    """The registered exercise ``number`` (its chapter's checkers are imported on demand)."""
    number = str(number)
    if number not in _REGISTRY and _ID.match(number):
        with contextlib.suppress(ModuleNotFoundError):
            importlib.import_module(_module(int(number.split(".")[0])))
    if number not in _REGISTRY:
        raise KeyError(
            f"there is no exercise {number!r} in labkit; the chapter's checkers live in "
            f"{_module(int(number.split('.')[0])) if _ID.match(number) else 'labkit.exercises'}"
        )
    return _REGISTRY[number]


def chapter_specs(chapter: int) -> list[Spec]:
    """The exercises of chapter ``chapter``, in order (empty if it has none)."""
    try:
        importlib.import_module(_module(chapter))
    except ModuleNotFoundError:
        return []
    found = [s for s in _REGISTRY.values() if s.chapter == chapter]
    return sorted(found, key=lambda s: int(s.id.split(".")[1]))


class Exercise:
    """An exercise being checked: the answers (data), the requirements stated so far, the score."""

    def __init__(self, spec: Spec, answers: Mapping[str, Any], *, hidden: bool = False, seed: int = 0,
                 values: Mapping[str, float] | None = None):
        self.spec = spec
        self.values = spec.values(values)   # the variant's numbers the answers are checked against
        self.number, self.title, self.points = spec.id, spec.title, spec.points
        self.hidden = hidden
        self.seed = seed  # the seed of a code answer's unseen probe inputs (see answers.probe_seed)
        self.results: list[Result] = []
        self._answers = dict(answers)

    def param(self, name: str) -> float:
        """The number ``name`` of the variant being checked (SI units)."""
        if name not in self.values:
            raise KeyError(f"exercise {self.number} declares no parameter {name!r}")
        return self.values[name]

    # -- reading the learner's answer ----------------------------------------------
    def _problem(self, name: str) -> str | None:
        if name not in self.spec.answers:
            raise KeyError(f"exercise {self.number} declares no answer {name!r}")
        data = self._answers.get(name, {"missing": True})
        if (
            not isinstance(data, Mapping)
            or data.get("missing")
            or ("value" not in data and "invalid" not in data)
        ):
            return (
                f"you have not defined `{name}` yet: write your answer in the cell above "
                f"(it should assign `{name}`) and run it"
            )
        if "invalid" in data:
            return str(data["invalid"])
        return None

    def value(self, name: str) -> Any:
        """The learner's answer ``name`` as data (raises :class:`ExerciseFailed` if it is
        missing or not of its kind; the exercise then fails with that message)."""
        problem = self._problem(name)
        if problem:
            raise ExerciseFailed(problem)
        return self._answers[name]["value"]

    def has(self, name: str) -> bool:
        """Whether answer ``name`` is present and of its kind."""
        return self._problem(name) is None

    # -- requirements ----------------------------------------------------------------
    def close(
        self,
        name: str,
        target: Any,
        *,
        tol: float | None = None,
        rtol: float | None = None,
        unit: str = "",
        hint: str = "",
        mistakes: Mapping[float, str] | None = None,
        weight: float = 1.0,
        requirement: str | None = None,
    ) -> bool:
        """Require answer ``name`` (a number or array) to be close to ``target``.

        tol / rtol: absolute / relative tolerance, the larger applies (the same vocabulary
        as :func:`labkit.check`); exact when both are None.  ``mistakes`` maps typical
        wrong answers to an explanation, shown when the answer is within 0.1 % of one.
        The target is never shown to the learner."""
        requirement = requirement or f"`{name}` has the right value"
        problem = self._problem(name)
        if problem:
            return self._add(requirement, False, weight, problem, hint)
        got = np.asarray(self.value(name), dtype=float)
        want = np.asarray(target, dtype=float)
        if got.shape != want.shape:
            return self._add(
                requirement,
                False,
                weight,
                f"`{name}` should have shape {want.shape}, but has shape {got.shape}",
                hint,
            )
        allowed = np.maximum(tol or 0.0, (rtol or 0.0) * np.abs(want))
        ok = bool(np.all(np.abs(got - want) <= allowed))
        message = ""
        if not ok:
            message = f"`{name}` = {fmt(got.tolist() if got.shape else float(got), unit=unit)} is not right"
            for wrong, why in (mistakes or {}).items():
                if got.shape == () and math.isclose(float(got), wrong, rel_tol=1e-3, abs_tol=1e-12):
                    message += f": {why}"
                    break
        return self._add(requirement, ok, weight, message, hint)

    def equal(
        self, name: str, target: Any, *, hint: str = "", weight: float = 1.0, requirement: str | None = None
    ) -> bool:
        """Require answer ``name`` to equal ``target`` exactly (counts, names, flags)."""
        requirement = requirement or f"`{name}` has the right value"
        problem = self._problem(name)
        if problem:
            return self._add(requirement, False, weight, problem, hint)
        value = self.value(name)
        ok = (
            bool(np.array_equal(np.asarray(value), np.asarray(target)))
            if isinstance(target, np.ndarray | list | tuple)
            else bool(value == target)
        )
        return self._add(requirement, ok, weight, "" if ok else f"`{name}` = {fmt(value)} is not right", hint)

    def require(
        self,
        condition: bool,
        requirement: str,
        *,
        failure: str = "",
        hint: str = "",
        weight: float = 1.0,
        hidden: bool = False,
    ) -> bool:
        """Require a condition on the answer, e.g. a measured behaviour.

        requirement: what is asked, in words; failure: what was observed instead;
        hidden: a hidden test, run only by the grader (call it only ``if ex.hidden``).
        """
        ok = bool(condition)
        return self._add(requirement, ok, weight, "" if ok else (failure or "not met"), hint, hidden)

    def precondition(self, condition: bool, requirement: str, *, failure: str = "", hint: str = "") -> None:
        """Require what must hold before the lesson can be judged ("not negative", "the
        simulation stays stable", "the file compiles").  It earns nothing: when it holds the
        checker goes on; when it fails the checker stops here and the exercise scores 0."""
        ok = bool(condition)
        self.results.append(Result(requirement, ok, 0.0, "" if ok else (failure or "not met"),
                                   "" if ok else hint, gate=True))
        if not ok:
            raise _Stopped

    def _add(
        self, requirement: str, ok: bool, weight: float, message: str, hint: str, hidden: bool = False
    ) -> bool:
        if not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"a requirement's weight is positive, not {weight!r}: use precondition()")
        self.results.append(
            Result(requirement, ok, float(weight), "" if ok else message, "" if ok else hint, hidden)
        )
        return ok

    def _fail(self, requirement: str, message: str) -> None:
        """An answer the checker could not judge: a failed precondition (the exercise scores 0)."""
        self.results.append(Result(requirement, False, 0.0, message, gate=True))

    # -- scoring and feedback -----------------------------------------------------------
    @property
    def score(self) -> float:
        """Points earned: ``points`` times the weight share of the requirements met; 0 when
        a precondition failed."""
        if any(r.gate and not r.passed for r in self.results):
            return 0.0
        total = sum(r.weight for r in self.results)
        earned = sum(r.weight for r in self.results if r.passed)
        return round(self.points * earned / total, 2) if total else 0.0

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def text(self) -> str:
        """The feedback as plain text (what nbval compares and the grader reports)."""
        head = f"Exercise {self.number} · {self.title}: {fmt(self.score)}/{fmt(self.points)} points"
        lines = [("✔ " if self.passed else "✘ ") + head]
        for r in self.results:
            tags = " (hidden test)" if r.hidden else " · required before any points count" if r.gate else ""
            lines.append(f"  {'✔' if r.passed else '✘'} {r.requirement}{tags}")
            lines += [f"      {r.message}"] if r.message else []
            lines += [f"      hint: {r.hint}"] if r.hint else []
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        color = "#2e7d32" if self.passed else "#c62828"
        items = []
        for r in self.results:
            extra = "".join(
                f"<div style='margin-left:1.5em'>{label}{html.escape(t)}</div>"
                for label, t in (("", r.message), ("<i>hint:</i> ", r.hint))
                if t
            )
            items.append(f"<div>{'✔' if r.passed else '✘'} {html.escape(r.requirement)}{extra}</div>")
        return (
            f'<div style="border:1px solid {color};border-left:6px solid {color};padding:4px 8px;'
            f'margin:4px 0;font-family:sans-serif;font-size:90%"><b style="color:{color}">'
            f"Exercise {html.escape(self.number)} · {html.escape(self.title)}: "
            f"{fmt(self.score)}/{fmt(self.points)} points</b>{''.join(items)}</div>"
        )

    def record(self) -> dict[str, Any]:
        """The outcome as JSON-ready data (what the grader's scorer returns)."""
        return {
            "exercise": self.number,
            "title": self.title,
            "values": dict(self.values),
            "points": self.points,
            "score": self.score,
            "results": [
                {
                    "requirement": r.requirement,
                    "passed": r.passed,
                    "weight": r.weight,
                    "message": r.message,
                    "hint": r.hint,
                    "hidden": r.hidden,
                    "gate": r.gate,
                }
                for r in self.results
            ],
        }
