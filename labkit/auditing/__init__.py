"""``labkit.audit``: the course's lessons, applied to any MuJoCo model.

``labkit.audit(model)`` runs every check in :data:`CHECKS` (one small function per lesson, in
labkit/auditing/checks.py, each threshold justified beside it) and returns a
:class:`Report`; ``labkit audit MODEL [--json]`` does the same on the command line.

Example::

    report = labkit.audit(labkit.corpus.path("dm_control/suite/dog"))
    report                      # in a notebook: a table and a picture of the flagged geoms
    print(report)               # a text report
    report.of("overlap-at-start")
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .checks import CHECKS, Skip, Subject
from .report import SEVERITIES, Finding, Report

if TYPE_CHECKING:
    import mujoco

__all__ = ["CHECKS", "SEVERITIES", "Finding", "Report", "Subject", "audit"]


def audit(
    source: str | os.PathLike[str] | mujoco.MjSpec | mujoco.MjModel,
    *,
    keyframe: str | int | None = None,
    checks: list[str] | None = None,
) -> Report:
    """Check a model against the course's lessons.

    source: a file (MJCF or URDF), an MJCF string, a course model name, an ``MjSpec`` or a
        compiled ``MjModel`` (whose angle unit is then unknown: ``angles-degrees`` says so).
    keyframe: the start pose (name or index of a ``<key>``); default qpos0.
    checks: the check ids to run (default: all of :data:`CHECKS`).

    Raises :class:`labkit.ModelError` for a model that does not compile and ``ValueError``
    for an unknown check id.

    Example: ``labkit.audit(labkit.corpus.path("dm_control/kinova/jaco_arm")).of("overlap-at-start")``
    lists the arm's start overlaps; ``print(labkit.audit("my_robot.xml"))`` reports everything.
    """
    __tracebackhide__ = True
    import mujoco

    from ..models import load, spec

    chosen = list(CHECKS) if checks is None else list(checks)
    unknown = [c for c in chosen if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown audit check(s) {unknown}; the checks: {', '.join(CHECKS)}")
    start = time.perf_counter()
    degree: bool | None = None
    if isinstance(source, mujoco.MjModel):
        model, name = source, _model_name(source, "the compiled model")
        data = mujoco.MjData(model)
    elif isinstance(source, mujoco.MjSpec):
        degree = bool(source.compiler.degree)
        model, data = load(source)
        name = _model_name(model, "the MjSpec")
    else:  # compiled from the file or string itself (its errors then name it), parsed for units
        model, data = load(source)
        degree = bool(spec(source).compiler.degree)
        name = _model_name(model, Path(str(source)).name if _is_path(source) else "the model")
    key = _key(model, keyframe)
    if key is not None:
        mujoco.mj_resetDataKeyframe(model, data, key)
    mujoco.mj_forward(model, data)
    subject = Subject(model, data, degree, key)
    findings: list[Finding] = []
    ran, skipped = [], {}
    for check_id in chosen:
        try:
            findings.extend(CHECKS[check_id](subject))
        except Skip as reason:
            skipped[check_id] = str(reason)
            continue
        ran.append(check_id)
    return Report(name, findings, ran, skipped, time.perf_counter() - start, model, data)


def _is_path(source: object) -> bool:
    return isinstance(source, os.PathLike) or (isinstance(source, str)
                                                and not source.lstrip().startswith("<"))


def _model_name(model: mujoco.MjModel, fallback: str) -> str:
    """The <mujoco model="..."> name (the first entry of ``model.names``), else ``fallback``."""
    own = bytes(model.names).split(b"\0", 1)[0].decode(errors="replace")
    return own if own and own != "MuJoCo Model" else fallback


def _key(model: mujoco.MjModel, keyframe: str | int | None) -> int | None:
    import mujoco
    import numpy as np

    from ..errors import ModelError

    if keyframe is None:
        return None
    if isinstance(keyframe, bool) or not isinstance(keyframe, (int, np.integer, str)):
        raise ModelError(f"keyframe is a <key>'s name or index, not {keyframe!r}")
    key = int(keyframe) if not isinstance(keyframe, str) else mujoco.mj_name2id(
        model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
    if not 0 <= key < model.nkey:
        keys = [model.key(i).name for i in range(model.nkey)]
        raise ModelError(f"the model has no keyframe {keyframe!r}; it has: {keys or 'none'}")
    return int(key)
