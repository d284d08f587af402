"""Compare two claims logs, claim by claim: what holds, what changes, what errors.

Claims are matched by notebook, cell (execution count) and their order in the cell, so a
statement that prints a computed value still matches its counterpart.  The baseline log
comes from the course's pinned MuJoCo, the other from a side environment in record mode
(see :mod:`labkit.drift.record`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DriftError

__all__ = ["CHANGED", "ERROR", "HOLDS", "Outcome", "compare", "read_log", "summary"]

HOLDS, CHANGED, ERROR = "holds", "changed", "error"


@dataclass(frozen=True)
class Outcome:
    """One baseline claim on another version.

    status: ``"holds"`` (it passes there too), ``"changed"`` (it runs but no longer holds:
    ``other`` has the observed value) or ``"error"`` (never reached: ``error`` names the
    exception of the cell that stopped it).
    unresolved: sources the claim cites that the other version's headers, library or
    manual table no longer have.
    """

    notebook: str
    statement: str
    status: str
    baseline: dict[str, Any]
    other: dict[str, Any] | None = None
    error: str = ""
    unresolved: tuple[str, ...] = field(default=())


def read_log(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines claims log (claims and cell errors)."""
    records = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DriftError(f"{path}, line {number}: not a JSON claims record ({exc.msg})") from None
    return records


def _by_cell(records: list[dict[str, Any]]) -> dict[tuple[str, Any], list[dict[str, Any]]]:
    cells: dict[tuple[str, Any], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if "statement" in record:
            cells[record["notebook"], record.get("cell")].append(record)
    return cells


def compare(baseline: list[dict[str, Any]], other: list[dict[str, Any]]) -> list[Outcome]:
    """Every baseline claim's outcome on the other version, in the baseline's order.

    A claim the other run never reached is an error: the exception of its own cell if that
    cell raised, else the last error raised earlier in that notebook (the cell that left a
    name undefined), else "not reached".
    """
    others = _by_cell(other)
    errors: dict[str, list[tuple[Any, str]]] = defaultdict(list)
    for record in other:
        if "error" in record and "statement" not in record:
            errors[record["notebook"]].append((record.get("cell"), record["error"]))
    seen: dict[tuple[str, Any], int] = defaultdict(int)
    outcomes = []
    for claim in baseline:
        if "statement" not in claim:
            continue
        key = (claim["notebook"], claim.get("cell"))
        index = seen[key]
        seen[key] += 1
        candidates = others.get(key, [])
        if index < len(candidates):
            match = candidates[index]
            status = HOLDS if match["passed"] else CHANGED
            unresolved = tuple(match.get("unresolved_sources", ()))
            outcomes.append(Outcome(claim["notebook"], claim["statement"], status, claim, match,
                                    unresolved=unresolved))
            continue
        outcomes.append(Outcome(claim["notebook"], claim["statement"], ERROR, claim,
                                error=_blame(errors[claim["notebook"]], claim.get("cell"))))
    return outcomes


def _blame(errors: list[tuple[Any, str]], cell: Any) -> str:
    own = [e for c, e in errors if c == cell and c is not None]
    if own:
        return own[0]
    before = [(c, e) for c, e in errors if c is None or cell is None or c < cell]
    if before:
        c, e = before[-1]
        return f"{e} (in cell {c})" if c is not None else e
    return "not reached"


def summary(outcomes: list[Outcome]) -> dict[str, dict[str, int]]:
    """notebook -> {"holds": n, "changed": n, "error": n}, in the outcomes' order."""
    table: dict[str, dict[str, int]] = {}
    for outcome in outcomes:
        row = table.setdefault(outcome.notebook, {HOLDS: 0, CHANGED: 0, ERROR: 0})
        row[outcome.status] += 1
    return table
