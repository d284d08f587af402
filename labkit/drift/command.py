"""``labkit drift --mujoco X [--mujoco Y ...]``: run the course's claims on other MuJoCo
versions and report, claim by claim, what holds, what changes and what errors."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from ..classroom.notebooks import course_dir, course_notebooks
from ..errors import DriftError
from ..session import BASELINE_MUJOCO
from .compare import CHANGED, ERROR, HOLDS, Outcome, compare, read_log, summary
from .environments import ROOT, side_environment
from .report import read_notes, render

__all__ = ["add_commands", "drift"]


def _run_chapters(python: str, log: Path, notebooks: list[Path], version: str,
                  baseline: list[dict] | None) -> str | None:
    """Run the chapters in record mode under ``python``, printing a line per chapter.

    Returns None, or the reason the chapters could not run at all.
    """
    log.write_text("")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}      # this checkout's labkit, not an installed one
    env.pop("LABKIT_CLAIMS", None)
    command = [python, "-m", "labkit.drift.record", str(log), *map(str, notebooks)]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, cwd=ROOT) as process:
        for line in process.stdout:
            try:
                chapter = json.loads(line)
            except json.JSONDecodeError:
                continue
            print(f"  {version:<8} {chapter['notebook']:<28} {_counts(log, chapter['notebook'], baseline)}"
                  f"  ({chapter['seconds']:.1f} s)", flush=True)
        stderr = process.stderr.read()
    if process.returncode != 0:
        last = [line for line in stderr.splitlines() if line.strip()]
        return f"the chapters cannot start on MuJoCo {version}: {last[-1] if last else 'no message'}"
    return None


def _counts(log: Path, notebook: str, baseline: list[dict] | None) -> str:
    records = [r for r in read_log(log) if r["notebook"] == notebook]
    if baseline is None:
        claims = [r for r in records if "statement" in r]
        failed = sum(not r["passed"] for r in claims)
        return f"{len(claims):3d} claims, {failed} failed, {len(records) - len(claims)} cell errors"
    row = summary(compare([r for r in baseline if r["notebook"] == notebook], records)).get(
        notebook, {HOLDS: 0, CHANGED: 0, ERROR: 0})
    return f"{row[HOLDS]:3d} hold, {row[CHANGED]} changed, {row[ERROR]} error"


def drift(versions: list[str], *, out: Path, notebooks: list[Path], report: Path | None,
          notes: Path) -> int:
    """Run the chapters on the baseline and on each version; write logs and the report.

    Returns the command's exit status: 0 when every version ran (changes are findings,
    not failures), 1 when a version could not run or the baseline itself fails.
    """
    import mujoco

    if mujoco.__version__ != BASELINE_MUJOCO:
        raise DriftError(f"the comparison needs the course's own MuJoCo {BASELINE_MUJOCO} here, "
                         f"not {mujoco.__version__}: run it from the course's environment")
    out.mkdir(parents=True, exist_ok=True)
    # the environments first: a version pip cannot install is reported before the long runs
    pythons: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    for version in versions:
        try:
            pythons[version] = side_environment(version, log=lambda s: print(s, flush=True))
        except DriftError as exc:
            print(f"MuJoCo {version}: skipped: {exc}", flush=True)
            skipped[version] = str(exc)
    print(f"baseline: MuJoCo {BASELINE_MUJOCO} (this environment)", flush=True)
    base_log = out / f"claims-{BASELINE_MUJOCO}.jsonl"
    problem = _run_chapters(sys.executable, base_log, notebooks, BASELINE_MUJOCO, None)
    if problem:
        raise DriftError(problem)
    baseline = read_log(base_log)
    failing = [r for r in baseline if "statement" in r and not r["passed"]] + \
              [r for r in baseline if "statement" not in r]
    if failing:
        first = failing[0].get("statement", failing[0].get("error"))
        raise DriftError(f"{len(failing)} claims or cells fail on the baseline itself (first: {first}); "
                         "fix the course first")
    results: dict[str, list[Outcome]] = {}
    for version, python in pythons.items():
        print(f"MuJoCo {version}:", flush=True)
        log = out / f"claims-{version}.jsonl"
        problem = _run_chapters(str(python), log, notebooks, version, baseline)
        if problem:
            print(f"  skipped: {problem}", flush=True)
            skipped[version] = problem
            continue
        results[version] = compare(baseline, read_log(log))
    command = "labkit drift " + " ".join(f"--mujoco {v}" for v in versions)
    environment = (f"{dt.date.today().isoformat()}, Python {platform.python_version()}, "
                   f"{platform.system()} {platform.machine()}")
    text, unexplained = render(BASELINE_MUJOCO, results, read_notes(notes), command=command,
                               environment=environment, skipped=skipped)
    targets = [out / "drift.md"] + ([report] if report else [])
    for target in targets:
        target.write_text(text, encoding="utf-8")
    for version, outcomes in results.items():
        counts = {k: sum(o.status == k for o in outcomes) for k in (HOLDS, CHANGED, ERROR)}
        print(f"MuJoCo {version}: {counts[HOLDS]} hold, {counts[CHANGED]} changed, {counts[ERROR]} error")
    print(f"{unexplained} changes or errors have no note in {notes}" if unexplained else
          "every change and error is explained")
    print(f"report: {targets[-1]}")
    return 1 if skipped else 0


def _main(args: argparse.Namespace) -> int:
    notebooks = [Path(p) for p in args.notebooks] or course_notebooks()
    try:
        return drift(args.mujoco, out=Path(args.out), notebooks=notebooks,
                     report=Path(args.report) if args.report else None, notes=Path(args.notes))
    except DriftError as exc:
        print(f"labkit drift: {exc}", file=sys.stderr)
        return 2


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``labkit drift`` on the CLI's subcommands."""
    parser = commands.add_parser(
        "drift", help="run the course's claims on other MuJoCo versions and report what changes "
        "(maintainers: after a MuJoCo release)")
    parser.add_argument("--mujoco", action="append", required=True, metavar="VERSION",
                        help="a MuJoCo version to compare with the baseline (repeatable)")
    parser.add_argument("--out", default="build/drift", help="where logs and the report go "
                        "(default: build/drift)")
    parser.add_argument("--report", help="also write the report here (e.g. course/drift.md)")
    parser.add_argument("--notes", default=str(course_dir() / "drift-notes.toml"),
                        help="the maintainers' explanations (default: course/drift-notes.toml)")
    parser.add_argument("notebooks", nargs="*", help="chapters (default: all of course/)")
    parser.set_defaults(run=_main)
