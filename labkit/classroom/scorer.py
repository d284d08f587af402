"""Score answers in a fresh process that runs no student code.

``python -s -m labkit.classroom.scorer`` reads one JSON object on standard input,
``{"answers": {"N.M": {name: data, ...}, ...}, "hidden": true}``, scores each exercise with
the instructor's labkit (:meth:`labkit.exercises.Spec.grade`) and writes one JSON line per
exercise, in the order given, as soon as it is scored.  The grader starts it (in the
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
    for number, answers in request["answers"].items():
        graded = spec(number).grade(answers if isinstance(answers, dict) else {}, hidden=hidden)
        sys.stdout.write(json.dumps(graded.record()) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
