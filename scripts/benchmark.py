"""Measure the course against its runtime budgets.

    .venv/bin/python scripts/benchmark.py            # everything
    .venv/bin/python scripts/benchmark.py --skip-notebooks
    .venv/bin/python scripts/benchmark.py --only widgets

Prints: each notebook's execution time in a fresh kernel and the total (budgets: 30 s
each, 3 min in all, on 2 CPU cores); the start-up cost of ``import labkit`` and of a
notebook's first cell over ``import mujoco`` (budget: +0.5 s); rendering frames per
second through labkit vs a bare ``mujoco.Renderer``; recording throughput vs a bare
``mj_step`` loop; for every widget of the course, the latency from a slider's change to
its new figure on screen in JupyterLab in headless Chromium (budget: 300 ms on 2 cores);
``labkit.audit`` of a 300-geom real model, from its file (budget: 5 s on 2 cores).
Timing lives here, not in the tests, so the tests stay deterministic.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOTEBOOK_BUDGET_S = 30.0
COURSE_BUDGET_S = 180.0
IMPORT_BUDGET_S = 0.5
LATENCY_BUDGET_MS = 300.0
AUDIT_BUDGET_S = 5.0


def best_of(command: str, runs: int = 5) -> float:
    """Fastest wall time (s) of a fresh Python process running ``command``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", command], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def notebooks() -> None:
    from labkit.classroom.notebooks import course_notebooks, execute

    print("notebook execution (fresh kernel each)")
    total = 0.0
    for path in course_notebooks():
        run = execute(path)
        total += run.seconds
        verdict = "ERROR" if run.error else "ok" if run.seconds <= NOTEBOOK_BUDGET_S else "OVER"
        print(f"  {path.stem:<28} {run.seconds:6.1f} s  [{verdict}]" + (f" {run.error}" if run.error else ""))
    print(f"  {'total':<28} {total:6.1f} s  [{'ok' if total <= COURSE_BUDGET_S else 'OVER'}]"
          f"  (budget {COURSE_BUDGET_S:.0f} s)")


def imports() -> None:
    python = best_of("pass")
    bare = best_of("import mujoco")
    lab = best_of("import labkit")
    first_cell = best_of("import labkit; labkit.setup(quiet=True)")
    print("start-up (best of 5 fresh processes)")
    print(f"  python alone                 {python * 1000:6.0f} ms")
    print(f"  import mujoco                {bare * 1000:6.0f} ms")
    print(f"  import labkit                {lab * 1000:6.0f} ms   (plain imports; does not import mujoco)")
    over = first_cell - bare
    verdict = "ok" if over <= IMPORT_BUDGET_S else "OVER"
    print(f"  import labkit + setup()      {first_cell * 1000:6.0f} ms   = import mujoco + "
          f"{over * 1000:.0f} ms  [{verdict}]  (GL probe, GL context, numpy setup)")


def rendering(frames: int = 200, width: int = 320, height: int = 240) -> None:
    import labkit

    labkit.setup(quiet=True)
    import mujoco

    model, data = labkit.load("pendulum", keyframe="tilted")
    labkit.snapshot(model, data, width=width, height=height)  # warm the cache
    start = time.perf_counter()
    for _ in range(frames):
        mujoco.mj_step(model, data)
        labkit.snapshot(model, data, width=width, height=height)
    lab = frames / (time.perf_counter() - start)
    renderer = mujoco.Renderer(model, height=height, width=width)
    renderer.update_scene(data)
    renderer.render()
    start = time.perf_counter()
    for _ in range(frames):
        mujoco.mj_step(model, data)
        renderer.update_scene(data)
        renderer.render()
    bare = frames / (time.perf_counter() - start)
    renderer.close()
    print(f"rendering {width}×{height}, pendulum scene, {frames} frames")
    print(f"  labkit.snapshot              {lab:6.0f} frames/s")
    print(f"  bare mujoco.Renderer         {bare:6.0f} frames/s   (labkit at {100 * lab / bare:.0f} %)")


def recording(steps: int = 20000, repeats: int = 5) -> None:
    import labkit

    labkit.setup(quiet=True)
    import mujoco
    import numpy as np

    model, data = labkit.load("pendulum", keyframe="tilted")

    def with_labkit() -> float:
        mujoco.mj_resetDataKeyframe(model, data, 0)
        start = time.perf_counter()
        labkit.record(model, data, {"angle": data.joint("swing").qpos, "speed": data.joint("swing").qvel,
                                    "bob": data.sensor("bob_pos").data}, nstep=steps)
        return time.perf_counter() - start

    def bare() -> float:
        mujoco.mj_resetDataKeyframe(model, data, 0)
        qpos, qvel, sensor = np.empty(steps), np.empty(steps), np.empty((steps, 3))
        start = time.perf_counter()
        for i in range(steps):
            mujoco.mj_step(model, data)
            qpos[i], qvel[i] = data.qpos[0], data.qvel[0]
            sensor[i] = data.sensordata
        return time.perf_counter() - start

    def steps_only() -> float:
        mujoco.mj_resetDataKeyframe(model, data, 0)
        start = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
        return time.perf_counter() - start

    lab = statistics.median(with_labkit() for _ in range(repeats))
    loop = statistics.median(bare() for _ in range(repeats))
    only = statistics.median(steps_only() for _ in range(repeats))
    print(f"recording 3 signals of the pendulum, {steps} steps (median of {repeats})")
    print(f"  mj_step alone                {steps / only / 1000:6.0f} k steps/s")
    print(f"  bare loop copying signals    {steps / loop / 1000:6.0f} k steps/s")
    print(f"  labkit.record                {steps / lab / 1000:6.0f} k steps/s   "
          f"(labkit takes {lab / loop:.2f}× the bare loop's time)")


def widgets(presses: int = 3) -> None:
    """Slider-to-figure latency of every widget: each slider of each chapter's widget is moved
    ``presses`` times by one step (arrow key on its handle, towards its farther end, so that
    every picture is new), timed in the page from the key press to the new figure painted."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from lab_in_browser import CHROMIUM_FLAGS, WIDGET, Lab, chromium, serve
    from playwright.sync_api import sync_playwright

    from labkit.classroom.notebooks import course_notebooks

    chapters = [p.name for p in course_notebooks() if "labkit.interactive(" in p.read_text(encoding="utf-8")]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0]
    print(f"widgets: slider change → new figure on screen, JupyterLab + headless Chromium "
          f"({presses} steps per slider; load average {load:.1f} on {cores} cores)")
    worst = (0.0, "")
    # JupyterLab's default windowing (the tests' "none" paints every cell of the chapter on
    # each new picture: 20–40 ms more, and spikes, that a learner's JupyterLab does not have)
    with tempfile.TemporaryDirectory() as scratch, \
            serve(chapters, Path(scratch), windowing="contentVisibility") as (url, token), \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        for chapter in chapters:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            lab = Lab(page, url, token, chapter)
            lab.run_all()
            count = lab.scroll_to_widgets()
            page.wait_for_function("([selector, n]) => document.querySelectorAll(selector).length >= n",
                                   arg=[WIDGET, count], timeout=60_000)   # every widget on the page
            for w in range(count):
                times = []
                for s in range(lab.widgets().nth(w).locator(".widget-slider").count()):
                    left, right = lab.room(w, s)
                    for _ in range(presses):
                        lab.wait_idle()
                        time.sleep(0.1)
                        times.append(lab.press(w, s, "ArrowRight" if right >= left else "ArrowLeft"))
                name = f"{Path(chapter).stem[:2]} widget {w + 1}"
                worst = max(worst, (max(times), name))
                print(f"  {name:<28} median {statistics.median(times):4.0f} ms, worst {max(times):4.0f} ms"
                      f"  ({len(times)} moves)")
            page.close()
        browser.close()
    verdict = "ok" if worst[0] <= LATENCY_BUDGET_MS else "OVER"
    print(f"  {'worst':<28} {worst[0]:6.0f} ms ({worst[1]})  [{verdict}]"
          f"  (budget {LATENCY_BUDGET_MS:.0f} ms; load average {os.getloadavg()[0]:.1f} at the end)")


def auditing(runs: int = 3) -> None:
    """dm_control's dog (296 geoms, 162 meshes) with four boxes dropped beside it: 300 geoms,
    every check with something to do (rest-penetration settles the boxes)."""
    import labkit

    labkit.setup(quiet=True)
    import mujoco

    source = labkit.corpus.path("dm_control/suite/dog")
    spec = mujoco.MjSpec.from_file(str(source))
    for i in range(4):
        box = spec.worldbody.add_body(pos=[2 + 0.5 * i, 2, 0.3])
        box.add_freejoint()
        box.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.05, 0.05, 0.05])
    for attribute in ("meshdir", "texturedir"):  # absolute, so that the copy loads from /tmp
        folder = getattr(spec.compiler, attribute)
        setattr(spec.compiler, attribute, str(source.parent / folder) if folder else str(source.parent))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dog_and_boxes.xml"
        path.write_text(spec.to_xml())
        times, report = [], None
        for _ in range(runs):
            start = time.perf_counter()
            report = labkit.audit(path)
            times.append(time.perf_counter() - start)
    assert report is not None
    best = min(times)
    verdict = "ok" if best <= AUDIT_BUDGET_S else "OVER"
    print(f"audit of a {report.model.ngeom}-geom model (best of {runs}, load included)")
    print(f"  labkit.audit                 {best:6.2f} s  [{verdict}]  (budget {AUDIT_BUDGET_S:.0f} s; "
          f"{len(report)} findings, {len(report.ran)} checks run; not applicable: "
          f"{', '.join(report.skipped) or 'none'})")


PARTS = {"notebooks": notebooks, "audit": auditing, "imports": imports, "rendering": rendering,
         "recording": recording, "widgets": widgets}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-notebooks", action="store_true", help="skip the notebook runs")
    parser.add_argument("--skip-widgets", action="store_true", help="skip the widget latency in a browser")
    parser.add_argument("--only", choices=sorted(PARTS), action="append", help="run only these parts")
    args = parser.parse_args()
    skip = {name for name, off in (("notebooks", args.skip_notebooks), ("widgets", args.skip_widgets)) if off}
    for name, part in PARTS.items():
        if (name in args.only) if args.only else name not in skip:
            part()


if __name__ == "__main__":
    main()
