"""Benchmark ``labkit grade``: N copies of a chapter graded with ``--jobs J`` in the sandbox.

    .venv/bin/python scripts/benchmark_grading.py                 # 20 × chapter 05, 2 jobs
    .venv/bin/python scripts/benchmark_grading.py --chapter 00 --copies 8

Prints the notebook's own run (a fresh kernel, as ``labkit execute`` runs it), the grading
run's total wall time, the time each submission occupies a worker (total × jobs / copies)
and its ratio to the notebook's own run (budget: ≤ 1.5×).  The copies are the course's
reference notebook, so every one must earn full marks.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from labkit.classroom import grading, sandbox
from labkit.classroom.notebooks import course_notebooks, execute


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", default="05")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    source = next(p for p in course_notebooks() if p.stem.startswith(f"{args.chapter}_"))
    own = execute(source)
    assert own.error is None, own.error
    print(f"{source.stem}: its own run (fresh kernel) {own.seconds:.2f} s")
    print(f"limits: {sandbox.isolation()}")  # uid, cgroup or rlimits, folders: what a sandbox costs
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for i in range(args.copies):
            (root / "class" / f"student{i:02d}").mkdir(parents=True)
            shutil.copyfile(source, root / "class" / f"student{i:02d}" / source.name)
        start = time.perf_counter()
        graded = grading.grade([root / "class"], root / "out", jobs=args.jobs)
        total = time.perf_counter() - start
    assert all(g.total == g.points for g in graded), [g.problems for g in graded if g.total != g.points]
    share = total * args.jobs / args.copies
    mean = sum(g.seconds for g in graded) / len(graded)
    print(f"graded {args.copies} submissions with --jobs {args.jobs} in {total:.1f} s "
          f"({total / args.copies:.2f} s of wall time per submission)")
    print(f"each submission occupies a worker for {share:.2f} s (its own run: {mean:.2f} s wall, sandbox "
          f"start, notebook, collection and scoring included): {share / own.seconds:.2f}× the notebook's "
          "own run (budget ≤ 1.5×)")


if __name__ == "__main__":
    main()
