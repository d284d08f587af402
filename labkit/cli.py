"""The ``labkit`` command: ``doctor``, ``claims``, ``execute``, ``student``, ``grade``, ``gradescope``,
``drift``."""

from __future__ import annotations

import argparse
import json
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
    claims = commands.add_parser("claims", help="run the course with the claims log on and "
                                 "print a per-chapter summary")
    claims.add_argument("notebooks", nargs="*", help="notebooks (default: all of course/)")
    claims.add_argument("--log", help="where to write the JSON-lines claims log")
    claims.set_defaults(run=_claims)
    execute = commands.add_parser("execute", help="re-execute notebooks and save their outputs "
                                  "(for maintainers: regenerates the committed outputs)")
    execute.add_argument("notebooks", nargs="*", help="notebooks (default: all of course/)")
    execute.set_defaults(run=_execute)
    from .classroom import gradescope, grading, student
    from .drift import command as drift

    student.add_commands(commands)
    grading.add_commands(commands)
    gradescope.add_commands(commands)
    drift.add_commands(commands)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
