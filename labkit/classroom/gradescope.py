"""A Gradescope autograder for the course: ``labkit gradescope CHAPTER.ipynb... --out autograder.zip``.

The zip holds, at its root, Gradescope's two scripts and the course package:

- ``setup.sh`` (run once when the image is built, on Gradescope's Ubuntu base image): the
  software GL libraries and bubblewrap with apt, a Python ≥ 3.11 (Ubuntu 22.04 ships 3.10:
  ``python3.11`` comes from Ubuntu's universe archive, or else from the deadsnakes PPA,
  Ubuntu's documented source of newer Pythons), then a virtual environment with labkit
  and its pinned dependencies, installed from the zip;
- ``run_autograder`` (run per submission): grades one notebook of ``/autograder/submission``
  per chapter of the assignment in the sandbox with :func:`labkit.classroom.grading.grade_one`
  and always writes ``/autograder/results/results.json``.  The notebook graded is the one
  named like the chapter (``05_solver_parameters.ipynb``, ``alice_05_...``), or the upload's
  only notebook; an upload with several notebooks of which none, or more than one, is named
  like the chapter is refused (score 0, a top-level ``output`` saying what to upload): copies
  of one notebook are never summed;
- ``pyproject.toml``, ``README.md``, ``LICENSE``, ``labkit/`` and ``models/``: the
  package.  No chapter notebook is shipped: the checkers in ``labkit.exercises`` are the
  whole grading key, so there are no solutions in the image to find.  ``autograder.json``
  holds the SHA-256 keys of the published solutions' lines (never the lines), with which a
  result names an answer that is the published solution's code, word for word.

With ``--secret FILE`` (the instructor's, with which ``labkit student --roster`` made the
handouts) the zip also holds the secret, readable by root only and outside every folder
the sandbox shows; each submission is then graded on its student's own numbers, derived
from the secret and the submitter's e-mail address in Gradescope's
``submission_metadata.json`` (so the roster's logins are the students' Gradescope e-mail
addresses; case does not matter; in a group submission, the numbers of the member whose
handout it is), never from the numbers in the notebook.  With ``--roster`` too, a
submitter on no roster line is not graded.

``results.json`` has one test per exercise (``name``, ``score``, ``max_score``, the
feedback as ``output``); an exercise with hidden requirements is ``after_published``,
with a visible companion that shows only the visible feedback.  A top-level ``output``
says why a submission could not be run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

from ..exercises import chapter_specs

__all__ = ["add_commands", "build", "results", "run"]

ROOT = Path(os.environ.get("LABKIT_AUTOGRADER_ROOT", "/autograder"))
_PACKAGE = Path(__file__).resolve().parents[2]

SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, on its Ubuntu base image, from /autograder/source.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# software OpenGL (MuJoCo renders on the CPU), the sandbox, and setpriv/unshare (util-linux)
apt-get install -y -q --no-install-recommends ca-certificates bubblewrap util-linux mount \
    libegl1 libopengl0 libgl1-mesa-dri
python=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null &&
     "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    python="$candidate"; break
  fi
done
if [ -z "$python" ]; then
  # Ubuntu 22.04 ships Python 3.10; 3.11 is in its universe archive
  apt-get install -y -q --no-install-recommends python3.11 python3.11-venv || {
    # elsewhere: the deadsnakes PPA, Ubuntu's documented source of newer Pythons
    apt-get install -y -q --no-install-recommends software-properties-common
    add-apt-repository -y ppa:deadsnakes/ppa && apt-get update -q
    apt-get install -y -q --no-install-recommends python3.11 python3.11-venv
  }
  python=python3.11
fi
version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
"$python" -c 'import ensurepip, venv' 2>/dev/null ||
  apt-get install -y -q --no-install-recommends "python$version-venv" || apt-get install -y -q python3-venv
"$python" -m venv /autograder/venv
/autograder/venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
/autograder/venv/bin/python -m pip install -q --disable-pip-version-check -e /autograder/source
/autograder/venv/bin/python -c 'import labkit.classroom.gradescope as g; g.smoke()'
"""

RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission; it always writes /autograder/results/results.json.
cd "$(dirname "$0")"
exec /autograder/venv/bin/python -m labkit.classroom.gradescope run
"""


def _chapter(path: Path) -> int:
    match = re.match(r"^(\d\d)_", path.name)
    if not match or not chapter_specs(int(match.group(1))):
        raise ValueError(
            f"{path}: not a course chapter with exercises (expected e.g. 05_solver_parameters.ipynb)"
        )
    return int(match.group(1))


SECRET = "variant_secret"
"""The secret's name in the zip (next to ``autograder.json``, above the ``labkit`` folder the
sandbox shows)."""


def build(chapters: list[Path | str], out: Path | str, *, sandboxed: bool = True,
          secret: Path | str | None = None, roster: Path | str | None = None) -> Path:
    """Write the autograder zip for ``chapters`` (course notebooks, named ``NN_topic.ipynb``)
    to ``out``; returns its path.  ``sandboxed=False`` grades without bubblewrap (every
    result then says so); ``secret``: the instructor's secret file, with which every
    submission is graded on its student's own numbers; ``roster``: a roster CSV whose
    logins are the students' Gradescope e-mail addresses (others are then not graded)."""
    from ..exercises.variants import instructor_files

    key, logins = instructor_files(secret, roster)
    numbers = sorted({_chapter(Path(c)) for c in chapters})
    names = {n: Path(c).stem for c in chapters for n in [_chapter(Path(c))]}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    import nbformat

    from .student import solution_fingerprints

    # the published solutions' lines as keys (SHA-256), never the lines: see grading._report_copies
    solutions = {str(n): solution_fingerprints(nbformat.read(c, as_version=4))
                 for c in chapters for n in [_chapter(Path(c))]}
    config = {"chapters": numbers, "names": {str(k): v for k, v in names.items()}, "sandbox": sandboxed,
              "variants": key is not None, "roster": logins or [], "solutions": solutions}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in (("setup.sh", SETUP), ("run_autograder", RUN)):
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
        archive.writestr("autograder.json", json.dumps(config, indent=1) + "\n")
        if key is not None:
            info = zipfile.ZipInfo(SECRET)
            info.external_attr = 0o100600 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, key + b"\n")
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            archive.write(_PACKAGE / name, name)
        for folder in ("labkit", "models"):
            for path in sorted((_PACKAGE / folder).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    archive.write(path, str(path.relative_to(_PACKAGE)))
    return out


def results(graded: list[Any], *, output: str = "") -> dict[str, Any]:
    """Gradescope's results.json for graded submissions (one test per exercise)."""
    tests = []
    for g in graded:
        for e in g.exercises:
            name = f"Exercise {e.id} · {e.title}"
            visible = "\n".join(e.messages)
            if e.hidden_messages:
                tests.append(
                    {
                        "name": name,
                        "score": e.score,
                        "max_score": e.points,
                        "output": "\n".join([*e.messages, *e.hidden_messages]),
                        "visibility": "after_published",
                    }
                )
                tests.append(
                    {
                        "name": f"{name} (feedback; hidden tests count after grades are published)",
                        "output": visible,
                        "visibility": "visible",
                    }
                )
            else:
                tests.append(
                    {
                        "name": name,
                        "score": e.score,
                        "max_score": e.points,
                        "output": visible,
                        "visibility": "visible",
                    }
                )
    notes = [output] if output else []
    for g in graded:
        notes += [f"{Path(g.file).name}: {p}" for p in g.problems]
    return {
        "score": round(sum(g.total for g in graded), 2),
        "output": "\n".join(notes),
        "tests": tests,
        "stdout_visibility": "hidden",
    }


def _write(result: dict[str, Any], root: Path) -> None:
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


def _refusal(text: str) -> dict[str, Any]:
    return {"score": 0, "output": text, "tests": []}


def _choose(
    notebooks: list[Path], chapters: list[int], names: dict[str, str]
) -> tuple[dict[int | None, Path], str]:
    """The notebook to grade for each chapter of the assignment (None: the upload's only
    notebook, named like no chapter of it), and a note on the other uploaded notebooks; or
    ``({}, why)`` when the upload is ambiguous."""
    from . import grading

    def named(path: Path, chapter: int) -> bool:
        return grading.named_like(path, chapter) is not None

    expected = ", ".join(f"{names.get(str(c), f'chapter {c:02d}')}.ipynb" for c in chapters)
    listed = ", ".join(p.name for p in notebooks)
    chosen: dict[int | None, Path] = {}
    for chapter in chapters:
        candidates = [p for p in notebooks if named(p, chapter)]
        if len(candidates) > 1:
            return {}, (
                f"Your upload has {len(candidates)} notebooks named like "
                f"{names.get(str(chapter), chapter)}.ipynb ({', '.join(p.name for p in candidates)}), so "
                "the autograder cannot tell which one to grade: upload exactly one notebook of the "
                "chapter. Nothing was graded."
            )
        if candidates:
            chosen[chapter] = candidates[0]
    if not chosen:
        if len(notebooks) > 1:
            return {}, (
                f"Your upload has {len(notebooks)} notebooks ({listed}) and none is named like this "
                f"assignment's chapter ({expected}), so the autograder cannot tell which one to grade: "
                "upload only the chapter's notebook, or name the one to grade like the chapter. "
                "Nothing was graded."
            )
        return {None: notebooks[0]}, ""
    ignored = [p.name for p in notebooks if p not in chosen.values()]
    return chosen, (
        f"Also uploaded, not graded: {', '.join(ignored)} (only the notebook named like the "
        "chapter is graded)."
        if ignored
        else ""
    )


def _submissions(chosen: dict[int | None, Path], chapters: list[int], names: dict[str, str]) -> list[Any]:
    """The :class:`~.grading.Submission` of each chosen notebook (its chapter from its name,
    else forced where the assignment has one chapter, else read from its exercise ids)."""
    from . import grading

    subs = []
    for chapter, path in chosen.items():
        forced = chapter if chapter is not None else chapters[0] if len(chapters) == 1 else None
        sub = grading.find_submissions([path], chapter=forced)[0]
        if sub.chapter in chapters:
            sub.notebook = names.get(str(sub.chapter), sub.notebook)
            subs.append(sub)
    return subs


def _submitters(root: Path) -> list[str]:
    """The submitters' e-mail addresses in Gradescope's ``submission_metadata.json`` (several
    for a group submission; the first is the one who uploaded), or []."""
    try:
        users = json.loads((root / "submission_metadata.json").read_text()).get("users") or []
        emails = [u.get("email") for u in users if isinstance(u, dict)]
    except (OSError, ValueError, AttributeError, TypeError):
        return []
    return [e.strip() for e in emails if isinstance(e, str) and e.strip()]


def run(root: Path = ROOT) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json`` (always)."""
    from ..exercises.variants import normal_login, read_secret
    from . import grading, sandbox
    from .reports import UNSANDBOXED

    source = Path(__file__).resolve().parents[2]
    try:
        config = json.loads((source / "autograder.json").read_text())
    except OSError:
        config = {"chapters": [], "names": {}, "sandbox": True}
    chapters, names = config["chapters"], config["names"]
    try:
        notebooks, skipped = grading.notebooks_under(root / "submission")
        if not notebooks:
            _write(
                _refusal(
                    "No notebook (.ipynb) was found in your submission: upload the chapter's notebook "
                    "file itself."
                ),
                root,
            )
            return 0
        chosen, note = _choose(notebooks, chapters, names)
        if not chosen:
            _write(_refusal(note), root)
            return 0
        warning = "" if config.get("sandbox", True) else UNSANDBOXED
        if config.get("sandbox", True):
            sandbox.check()
        subs = _submissions(chosen, chapters, names)
        secret, submitters = None, []
        if config.get("variants"):
            secret, submitters = read_secret(source / SECRET), _submitters(root)
            roster = {normal_login(r) for r in config.get("roster") or []}
            if not submitters:
                _write(_refusal("The autograder cannot tell who submitted (no e-mail address in "
                                "submission_metadata.json), so it cannot know your numbers; please tell "
                                "your instructor."), root)
                return 0
            if roster and not roster & {normal_login(e) for e in submitters}:
                _write(_refusal(f"{', '.join(submitters)} is not on this course's roster, so the autograder "
                                "does not know your numbers; please tell your instructor."), root)
                return 0
            for sub in subs:
                sub.student = submitters[0]
        if not subs:
            expected = ", ".join(f"{n}.ipynb" for n in names.values())
            _write(
                _refusal(
                    f"None of the uploaded notebooks ({', '.join(p.name for p in notebooks)}) "
                    f"answers this assignment's chapter ({expected})."
                ),
                root,
            )
            return 0
        graded = [
            grading.grade_one(
                sub,
                timeout=900,
                cell_timeout=300,
                max_output=16 << 20,
                use_sandbox=config.get("sandbox", True),
                limits=sandbox.Limits(),
                secret=secret,
                partners=submitters,
                published=config.get("solutions", {}).get(str(sub.chapter), {}),
            )
            for sub in subs
        ]
        _write(results(graded, output="\n".join(n for n in (warning, note, *skipped) if n)), root)
    except sandbox.SandboxUnavailable as exc:
        _write(
            _refusal(
                f"The autograder cannot start its sandbox on this machine, so nothing was graded; "
                f"please tell your instructor.\n{exc}"
            ),
            root,
        )
    except Exception as exc:  # results.json must always be written
        _write(
            _refusal(f"The autograder failed ({type(exc).__name__}: {exc}); please tell your instructor."),
            root,
        )
    return 0


def smoke() -> None:
    """setup.sh's last step: labkit imports, MuJoCo is the pinned one, the sandbox starts."""
    import mujoco

    from ..session import BASELINE_MUJOCO
    from . import sandbox

    assert mujoco.__version__ == BASELINE_MUJOCO, f"MuJoCo {mujoco.__version__}, expected {BASELINE_MUJOCO}"
    try:
        sandbox.check()
        print("labkit autograder: ready (sandbox works)")
    except sandbox.SandboxUnavailable as exc:
        print(f"labkit autograder: WARNING: {exc}")


def _main(args: argparse.Namespace) -> int:
    try:
        path = build(args.chapters, args.out, sandboxed=not args.no_sandbox, secret=args.secret,
                     roster=args.roster)
    except (ValueError, OSError) as exc:
        print(f"labkit gradescope: {exc}")
        return 2
    with zipfile.ZipFile(path) as archive:
        files = len(archive.namelist())
    print(
        f"✔ {path}: Gradescope autograder for chapter(s) "
        f"{', '.join(Path(c).stem for c in args.chapters)} ({files} files; setup.sh and run_autograder at "
        "its root). Upload it as the assignment's autograder (Ubuntu 22.04 base image)."
    )
    return 0


def add_commands(subparsers: Any) -> None:
    """Register ``labkit gradescope`` on labkit's argparse subparsers."""
    parser = subparsers.add_parser(
        "gradescope",
        help="write a Gradescope autograder zip for chapter notebooks",
        description="Write a Gradescope autograder package (setup.sh and run_autograder at the zip root, "
        "the course package and models, no notebooks) that grades uploaded chapter notebooks in the sandbox.",
    )
    parser.add_argument("chapters", nargs="+", metavar="CHAPTER.ipynb", help="the course notebooks to grade")
    parser.add_argument("--out", required=True, help="the zip file to write")
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without bubblewrap (every result then carries a warning)",
    )
    parser.add_argument("--secret", metavar="FILE",
                        help="the instructor's secret the handouts were made with: each submission is graded "
                        "on its student's own numbers (the roster's logins are Gradescope e-mail addresses)")
    parser.add_argument("--roster", metavar="CSV",
                        help="with --secret: the roster the handouts were made from; a submitter not on it "
                        "is not graded")
    parser.set_defaults(run=_main)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["run"]:
        sys.exit(run())
    sys.exit(f"usage: python -m labkit.classroom.gradescope run   (grades {ROOT}/submission)")
