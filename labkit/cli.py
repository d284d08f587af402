"""The ``labkit`` command: ``doctor``, ``audit``, ``claims``, ``execute``, ``practice``,
``student``, ``grade``, ``gradescope``, ``drift``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

__all__ = ["main"]


def _doctor(_: argparse.Namespace) -> int:
    from .doctor import diagnose

    failed = False
    for finding in diagnose():
        mark = "✔" if finding.ok else ("✘" if finding.required else "·")
        print(f"{mark} {finding.topic:<15} {finding.detail}")
        if not finding.ok and finding.fix:
            print(f"  {'':<15} fix: {finding.fix}")
        failed |= finding.required and not finding.ok
    verdict = "Some required checks fail: see the fixes above." if failed else "All required checks pass."
    print(f"\n{verdict}")
    return 1 if failed else 0


def _audit(args: argparse.Namespace) -> int:
    """Exit status 0: no finding of severity error; 1: some; 2: the model did not load."""
    from .auditing import CHECKS, audit
    from .errors import CorpusUnavailable, ModelError

    if args.list:
        for check_id, function in CHECKS.items():
            print(f"{check_id:<22} {(function.__doc__ or '').strip().splitlines()[0]}")
        return 0
    if not args.model:
        raise SystemExit("labkit audit: give a model (a file, a course model name, or "
                         "corpus:NAME), or --list for the checks")
    source: object = args.model
    try:
        if args.model.startswith("corpus:"):
            from . import corpus

            source = corpus.path(args.model.removeprefix("corpus:"))
        report = audit(source, keyframe=args.key, checks=args.check or None)
    except (ModelError, CorpusUnavailable, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"labkit audit: {message}", file=sys.stderr)
        return 2
    try:
        print(report.to_json() if args.json else report, flush=True)
    except BrokenPipeError:  # `labkit audit ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1 if any(f.severity == "error" for f in report) else 0


def _notebooks(paths: list[str]) -> list[Path]:
    from .classroom.notebooks import course_notebooks

    chosen = [Path(p) for p in paths] or course_notebooks()
    missing = [str(p) for p in chosen if not p.is_file()]
    if missing:
        raise SystemExit(f"labkit: no such notebook: {', '.join(missing)}")
    return chosen


def _claims(args: argparse.Namespace) -> int:
    from .classroom.notebooks import execute

    log = Path(args.log) if args.log else Path(tempfile.mkdtemp()) / "claims.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    notebooks = _notebooks(args.notebooks)
    errors = {}
    seconds = {}
    for path in notebooks:
        run = execute(path, env={"LABKIT_CLAIMS": str(log.resolve())})
        seconds[path.stem] = run.seconds
        if run.error:
            errors[path.stem] = run.error
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    failures = []
    for line in log.read_text().splitlines():
        claim = json.loads(line)
        counts[claim["notebook"]][0 if claim["passed"] else 1] += 1
        if not claim["passed"]:
            failures.append(claim)
    print(f"{'chapter':<28} {'claims':>6} {'failed':>6} {'time':>7}")
    for path in notebooks:
        ok, bad = counts[path.stem]
        status = f"  ERROR: {errors[path.stem]}" if path.stem in errors else ""
        print(f"{path.stem:<28} {ok + bad:>6} {bad:>6} {seconds[path.stem]:>6.1f}s{status}")
    total = sum(sum(c) for c in counts.values())
    print(f"{'total':<28} {total:>6} {len(failures):>6} {sum(seconds.values()):>6.1f}s")
    for claim in failures:
        print(f"\n✘ [{claim['notebook']}] {claim['statement']}\n    {claim['why']}")
    print(f"\nclaims log: {log}")
    return 1 if failures or errors else 0


def _execute(args: argparse.Namespace) -> int:
    import nbformat

    from .classroom.notebooks import execute

    status = 0
    for path in _notebooks(args.notebooks):
        run = execute(path)
        if run.error:
            print(f"✘ {path}: {run.error} (file left unchanged)")
            status = 1
            continue
        nbformat.write(run.notebook, path)
        print(f"✔ {path} executed in {run.seconds:.1f} s and saved with its outputs")
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``labkit`` console script."""
    parser = argparse.ArgumentParser(prog="labkit", description="MuJoCo by Experiment tools")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("doctor", help="check GL, ffmpeg, versions and the Jupyter kernel"
                        ).set_defaults(run=_doctor)
    audit = commands.add_parser("audit", help="check a model against the course's lessons "
                                "(overlaps, clamped timeconst, degrees, servo stability, ...)")
    audit.add_argument("model", nargs="?", help="an MJCF/URDF file, a course model name, or "
                       "corpus:NAME (a model of labkit.corpus)")
    audit.add_argument("--json", action="store_true", help='print {"findings": [...]} as JSON')
    audit.add_argument("--key", help="start from this keyframe (name) instead of qpos0")
    audit.add_argument("--check", action="append", help="run only this check (repeatable)")
    audit.add_argument("--list", action="store_true", help="list the checks and exit")
    audit.set_defaults(run=_audit)
    claims = commands.add_parser("claims", help="run the course with the claims log on and "
                                 "print a per-chapter summary")
    claims.add_argument("notebooks", nargs="*", help="notebooks (default: all of course/)")
    claims.add_argument("--log", help="where to write the JSON-lines claims log")
    claims.set_defaults(run=_claims)
    execute = commands.add_parser("execute", help="re-execute notebooks and save their outputs "
                                  "(for maintainers: regenerates the committed outputs)")
    execute.add_argument("notebooks", nargs="*", help="notebooks (default: all of course/)")
    execute.set_defaults(run=_execute)
    from .classroom import gradescope, grading, practice, student, variants
    from .drift import command as drift

    practice.add_commands(commands)
    student.add_commands(commands)
    grading.add_commands(commands)
    gradescope.add_commands(commands)
    variants.add_commands(commands)
    drift.add_commands(commands)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
