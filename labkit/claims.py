"""Source-traced assertions: ``labkit.check``.

A claim is a sentence of the course, the value a cell observed, the value the sentence
predicts, and the sources that say why.  ``check`` shows the claim compactly and raises
:class:`ClaimFailed` (an ``AssertionError``) when it does not hold, so nbval fails the
notebook.  With ``LABKIT_CLAIMS=path`` every executed claim is appended to that file as
one JSON object per line.

With ``LABKIT_CLAIMS_MODE=record`` as well (``labkit drift`` sets it, on another MuJoCo
version), a claim that does not hold, or a source that no longer resolves, is logged with
what was observed instead of raising, so the chapter runs on.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import display, reporting
from .display import fmt
from .errors import ClaimFailed, SourceError
from .sources import Source, cite

__all__ = ["Claim", "ClaimFailed", "above", "below", "between", "check", "near"]


@dataclass(frozen=True)
class Bound:
    """An expected value that is a range rather than a number (see :func:`below`)."""

    low: float | None
    high: float | None
    inclusive: bool = True

    def holds(self, observed: Any) -> bool:
        values = np.asarray(observed, dtype=float)
        ok = np.ones(values.shape, dtype=bool)
        if self.low is not None:
            ok &= values >= self.low if self.inclusive else values > self.low
        if self.high is not None:
            ok &= values <= self.high if self.inclusive else values < self.high
        return bool(np.all(ok))

    def __str__(self) -> str:
        lt = "≤" if self.inclusive else "<"
        if self.low is None:
            return f"{lt} {fmt(self.high)}"
        if self.high is None:
            return f"{'≥' if self.inclusive else '>'} {fmt(self.low)}"
        return f"{fmt(self.low)} {lt} x {lt} {fmt(self.high)}"

    __repr__ = __str__          # how a range reads inside a table of cases


@dataclass(frozen=True, repr=False)
class Near(Bound):
    """An expected number with its own tolerance (see :func:`near`)."""

    value: float = 0.0
    tol: float | None = None
    rtol: float | None = None

    def holds(self, observed: Any) -> bool:
        return not _compare(observed, self.value, self.tol, self.rtol)

    def __str__(self) -> str:
        allowed = [f"±{fmt(self.tol)}"] if self.tol is not None else []
        allowed += [f"±{fmt(self.rtol * 100)}%"] if self.rtol is not None else []
        return f"{fmt(self.value)} ({' or '.join(allowed) or 'exact'})"

    __repr__ = __str__


def below(high: float, *, strict: bool = False) -> Bound:
    """Expect every observed value to be ≤ ``high`` (``< high`` if ``strict``).

    Example: ``labkit.check("RK4 drifts less", observed=wobble, expected=labkit.below(1e-6))``.
    """
    return Bound(None, high, not strict)


def above(low: float, *, strict: bool = False) -> Bound:
    """Expect every observed value to be ≥ ``low`` (``> low`` if ``strict``).

    Example: ``labkit.check("the bob rises", observed=z, expected=labkit.above(0))``.
    """
    return Bound(low, None, not strict)


def near(value: float, *, tol: float | None = None, rtol: float | None = None) -> Bound:
    """Expect ``value`` within its own tolerance: for one case of a table of cases whose
    tolerances differ (``tol``/``rtol`` as in :func:`check`).

    Example: ``labkit.check("the limits", {"euler": a, "rk4": b},
    {"euler": labkit.near(2, rtol=1e-5), "rk4": labkit.near(2 * 2**0.5, rtol=1e-3)})``.
    """
    return Near(None, None, True, value, tol, rtol)


def between(low: float, high: float) -> Bound:
    """Expect every observed value to lie in the closed interval [``low``, ``high``].

    Example: ``labkit.check("it settles", observed=depth, expected=labkit.between(1e-4, 2e-4))``.
    """
    return Bound(low, high, True)


@dataclass
class Claim:
    """The result of one :func:`check`.

    statement: the claim in words; observed/expected: the values compared;
    tol/rtol: absolute/relative tolerance (None for exact comparison);
    holds: whether the statement held; expect_fail: True for a counterexample, a statement
    shown because it does *not* hold; passed: whether the outcome was the expected one;
    sources: the citations; why: the mismatch, if any.  A scoped claim (``scope``: the
    cases where the rule holds) also keeps ``cases``: whether each case matched the
    expectation (those in the scope must, the others must not).
    """

    statement: str
    observed: Any
    expected: Any
    tol: float | None
    rtol: float | None
    holds: bool
    sources: tuple[Source, ...]
    why: str = ""
    expect_fail: bool = False
    scope: tuple[str, ...] | None = None
    cases: Mapping[str, bool] = field(default_factory=dict)
    _shown: bool = field(default=False, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.holds != self.expect_fail

    @property
    def _mark(self) -> str:
        if self.expect_fail:
            if self.passed:
                return "✘ does not hold, as expected:"
            return "✘ FAILED: held, but was expected not to:"
        return "✔" if self.passed else "✘ FAILED"

    # -- text -----------------------------------------------------------------
    def _rows(self) -> list[tuple[str, str, str]]:
        """A scoped claim's validity table: (case, measured, verdict) per case."""
        rows = []
        for case, matched in self.cases.items():
            inside = case in self.scope
            verdict = ("holds" if matched else "✘ does not hold") if inside else \
                ("differs (outside the scope)" if not matched else "✘ holds outside the scope too")
            rows.append((case, fmt(self.observed[case]), verdict))
        return rows

    def _expectation(self) -> str:
        expected = self.expected
        if isinstance(expected, Mapping):
            return ", ".join(f"{k}: {v if isinstance(v, Bound) else fmt(v)}" for k, v in expected.items())
        if isinstance(expected, Bound):
            return str(expected)
        return fmt(expected) + self._tolerance()

    def _tolerance(self) -> str:
        allowed = [f"±{fmt(self.tol)}"] if self.tol is not None else []
        allowed += [f"±{fmt(self.rtol * 100)}%"] if self.rtol is not None else []
        return f" ({' or '.join(allowed)})" if allowed else ""

    def _scope_line(self) -> str:
        everywhere = set(self.scope) == set(self.cases)
        where = ("for every case swept" if everywhere
                 else f"inside the scope ({', '.join(self.scope)}); outside it the rule must not hold")
        return f"expected {self._expectation()} {where}"

    def _table(self) -> str:
        rows = [("case", "measured", "rule"), *self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(2)]
        lines = [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}" for a, b, c in rows]
        return "\n    ".join([*lines, self._scope_line()])

    def _comparison(self) -> str:
        if self.scope is not None:
            return self._table()
        if isinstance(self.expected, Bound):
            return f"observed {fmt(self.observed)}, expected {self.expected}"
        return f"observed {fmt(self.observed)}, expected {fmt(self.expected)}{self._tolerance()}"

    def text(self) -> str:
        lines = [f"{self._mark} {self.statement}", f"    {self._comparison()}"]
        if self.why:
            lines.append(f"    {self.why}")
        if self.sources:
            lines.append("    sources: " + " · ".join(s.label for s in self.sources))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        color = "#2e7d32" if self.holds and self.passed else "#c62828"
        mark = self._mark
        links = display.links(self.sources)
        why = f"<div>{html.escape(self.why)}</div>" if self.why else ""
        comparison = f'<div style="font-family:monospace">{html.escape(self._comparison())}</div>'
        if self.scope is not None:
            cells = "".join(
                f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td><td>{html.escape(c)}</td></tr>"
                for a, b, c in self._rows())
            comparison = (f'<table style="font-family:monospace;font-size:100%"><tr><th>case</th>'
                          f"<th>measured</th><th>rule</th></tr>{cells}</table>"
                          f"<div>{html.escape(self._scope_line())}</div>")
        return (
            f'<div style="border-left:4px solid {color};padding:2px 8px;margin:4px 0;'
            f'font-family:sans-serif;font-size:90%">'
            f'<b style="color:{color}">{mark}</b> {html.escape(self.statement)}'
            f"{comparison}{why}"
            f'<div style="color:#555">sources: {links}</div></div>'
        )

    def _ipython_display_(self) -> None:
        # check() already displayed this claim; showing it again as a cell's value
        # would print it twice.
        if not self._shown:
            _display(self)

    def record(self) -> dict[str, Any]:
        """The claim as a JSON-serialisable dict (the claims-log format)."""
        import mujoco

        from . import __version__

        return {
            "notebook": reporting.notebook_name(),
            "statement": self.statement,
            "observed": _jsonable(self.observed),
            "expected": str(self.expected) if isinstance(self.expected, Bound)
            else _jsonable(self.expected),
            "tol": self.tol,
            "rtol": self.rtol,
            "passed": self.passed,
            "holds": self.holds,
            "expect_fail": self.expect_fail,
            "scope": list(self.scope) if self.scope is not None else None,
            "why": self.why,
            "sources": [{"kind": s.kind, "label": s.label, "url": s.url} for s in self.sources],
            "mujoco": mujoco.__version__,
            "labkit": __version__,
            "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value) if isinstance(value, Bound) else repr(value)


def _display(claim: Claim) -> None:
    claim._shown = True
    reporting.publish(claim.text(), claim._repr_html_())


def _compare(observed: Any, expected: Any, tol: float | None, rtol: float | None) -> str:
    """Return "" when observed matches expected, else a sentence saying how it does not."""
    if isinstance(expected, Bound):
        return "" if expected.holds(observed) else f"{fmt(observed)} is not {expected}"
    if isinstance(expected, Mapping):
        # a table of cases: each row compared with the same tolerance (or its own range), the
        # first miss named
        if not isinstance(observed, Mapping) or set(observed) != set(expected):
            return f"the cases {sorted(map(str, observed)) if isinstance(observed, Mapping) else observed} " \
                   f"differ from the expected {sorted(map(str, expected))}"
        for key in expected:
            why = _compare(observed[key], expected[key], tol, rtol)
            if why:
                return f"{key}: {why}"
        return ""
    if tol is None and rtol is None:
        if isinstance(expected, np.ndarray) or isinstance(observed, np.ndarray):
            obs, exp = np.asarray(observed), np.asarray(expected)
            if obs.shape != exp.shape:
                return f"shape {obs.shape} differs from expected shape {exp.shape}"
            return "" if np.array_equal(obs, exp) else "values differ (exact comparison)"
        return "" if observed == expected else "values differ (exact comparison)"
    obs = np.asarray(observed, dtype=float)
    exp = np.asarray(expected, dtype=float)
    if obs.shape != exp.shape and exp.shape != ():
        return f"shape {obs.shape} differs from expected shape {exp.shape}"
    allowed = np.zeros(np.broadcast(obs, exp).shape)
    if tol is not None:
        allowed = np.maximum(allowed, tol)
    if rtol is not None:
        allowed = np.maximum(allowed, rtol * np.abs(exp))
    error = np.abs(obs - exp)
    if np.all(error <= allowed):
        return ""
    worst = float(np.max(error - allowed))
    return f"off by {fmt(float(np.max(error)))}, {fmt(worst)} beyond the tolerance"


def _scoped(observed: Any, expected: Any, scope: tuple[str, ...], tol: float | None,
            rtol: float | None) -> tuple[tuple[str, ...], dict[str, bool], str]:
    """Compare a sweep case by case: (the scope, whether each case matched, the first
    case on the wrong side of the scope, in words, or "")."""
    if not isinstance(observed, Mapping):
        raise TypeError("a scoped claim observes a dict of cases (labkit.sweep returns one), "
                        f"not {type(observed).__name__}")
    unknown = [case for case in scope if case not in observed]
    if unknown:
        raise ValueError(f"the scope names {unknown[0]!r}, which the sweep did not run "
                         f"(it ran {', '.join(map(str, observed))})")
    if isinstance(expected, Mapping) and set(expected) != set(observed):
        raise ValueError("a scoped claim's expected dict has one entry per case of the sweep")
    cases, why = {}, ""
    for case, value in observed.items():
        want = expected[case] if isinstance(expected, Mapping) else expected
        miss = _compare(value, want, tol, rtol)
        cases[str(case)] = not miss
        if not why and case in scope and miss:
            why = f"{case}: {miss}, inside the scope"
        elif not why and case not in scope and not miss:
            why = f"{case}: the rule holds outside the scope too: the sentence is narrower than the engine"
    return scope, cases, why


def check(
    statement: str,
    observed: Any,
    expected: Any,
    *,
    tol: float | None = None,
    rtol: float | None = None,
    sources: Sequence[str | Source] | str | Source = (),
    expect_fail: bool = False,
    scope: Iterable[str] | None = None,
) -> Claim:
    """Check that ``observed`` is what ``statement`` predicts, and show the claim.

    observed: the value a cell measured (number, bool, string, tuple or array).
    expected: the predicted value, or a range from :func:`below`, :func:`above`,
        :func:`between`; for a dict of cases, a dict with the same keys whose values may
        be ranges, or :func:`near` for a case with its own tolerance.
    tol, rtol: absolute and relative tolerance (elementwise; the larger applies).
        Without either, the comparison is exact — right for counts, names, flags and
        values MuJoCo copies verbatim, wrong for anything integrated.
    sources: the citations that back the claim, by their printed labels
        (``"mjmodel.h:nq"``, ``"engine_forward.c:mj_fwdActuation"``,
        ``"XMLreference#body-joint-type"``, ``"#1741"``; see :func:`labkit.sources.cite`),
        each resolved against the installed MuJoCo.
    expect_fail: state a counterexample: a plausible statement that does *not* hold
        (a textbook formula outside its range, a wrong tutorial claim).  It is shown as
        failing, and raises only if it unexpectedly holds.
    scope: for a rule swept along an axis (``observed`` a dict of cases, e.g. from
        :func:`labkit.sweep`): the cases the sentence says it holds for.  Each of them
        must match ``expected``, and each case *outside* the scope must not (the edge,
        shown as an expected failure), so the claim prints a validity table of where the
        rule stops.  A rule that holds everywhere passes the whole axis
        (``scope=labkit.axes.CONES``) and its table shows every case holding.

    Returns the :class:`Claim`; raises :class:`ClaimFailed` if the outcome is not the
    expected one.

    Example: ``labkit.check("one hinge, one dof", observed=model.nv, expected=1, sources=["mjmodel.h:nv"])``.
    """
    __tracebackhide__ = True
    if isinstance(sources, str | Source):
        sources = (sources,)
    recording = os.environ.get("LABKIT_CLAIMS_MODE") == "record"
    resolved, unresolved = [], []
    for label in dict.fromkeys(sources):                         # each source once
        try:
            resolved.append(cite(label))
        except SourceError as exc:
            if not recording:
                raise
            unresolved.append(f"{label}: {exc}")
    sources = tuple(dict.fromkeys(resolved))
    for name, value in (("tol", tol), ("rtol", rtol)):
        if value is not None and not value >= 0:
            raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    if scope is None:
        why, cases, inside = _compare(observed, expected, tol, rtol), {}, None
    else:
        inside, cases, why = _scoped(observed, expected, tuple(scope), tol, rtol)
    claim = Claim(statement, observed, expected, tol, rtol, not why, tuple(sources), why, expect_fail,
                  inside, cases)
    reporting.append("LABKIT_CLAIMS", {**claim.record(), "cell": _cell_number(),
                                       "unresolved_sources": unresolved})
    _display(claim)
    if not claim.passed and not recording:
        raise ClaimFailed(claim.text())
    return claim


def _cell_number() -> int | None:
    """The execution count of the running cell (what ``labkit drift`` matches claims by:
    the same cell of the same notebook on two MuJoCo versions), or None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return None if shell is None else shell.execution_count
