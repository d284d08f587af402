"""Score answers in a fresh process that runs no student code.

``python -s -m labkit.classroom.scorer`` reads one JSON object on standard input,
``{"answers": {"N.M": {name: data, ...}, ...}, "hidden": true, "seed": 123, "values": {"N.M":
{name: number}}}``, scores each
exercise with the instructor's labkit (:meth:`labkit.exercises.Spec.grade`, which validates
every answer with its kind first: the data came from a student's kernel and may be forged)
and writes one JSON line per exercise, in the order given, as soon as it is scored.
``seed`` is the grader's draw for the unseen inputs of code answers (the same one the
notebook's probes were given); ``values`` the student's own numbers of each exercise with
parameters, which the grader derived from the login and the instructor's secret (absent:
the published numbers).  The grader starts it (in the
sandbox, with no network), and restarts it past an exercise whose answer crashed or hung
the checker, so one bad answer costs only its own exercise.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    request = json.loads(sys.stdin.read())
    from ..exercises import spec

    hidden = bool(request.get("hidden", True))
    seed = request.get("seed")
    seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
    values = request.get("values") if isinstance(request.get("values"), dict) else {}
    for number, answers in request["answers"].items():
        try:
            found = spec(number)
        except KeyError:
            record = {"exercise": number, "error": f"there is no exercise {str(number)[:20]!r} to score"}
        else:
            record = found.grade(answers, hidden=hidden, seed=seed, values=values.get(number)).record()
        sys.stdout.write(json.dumps(record, allow_nan=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
