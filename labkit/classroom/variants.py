"""``labkit variants``: the instructor's secret, and who has which numbers.

``labkit variants secret FILE`` makes a new secret (never replacing one: the handouts were
made with it); ``labkit variants show --roster roster.csv --secret FILE [--chapter N]``
prints every student's numbers, the key to the handouts :mod:`.student` writes and the
grader's reports name.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..exercises import chapter_specs
from ..exercises.variants import RosterError, SecretError, derive, new_secret, read_roster, read_secret

__all__ = ["add_commands", "table"]


def table(roster: list[str], secret: bytes, chapters: list[int]) -> list[str]:
    """One line per student and exercise with parameters: ``login  N.M  name = value ...``."""
    lines = []
    for login in roster:
        for chapter in chapters:
            for found in chapter_specs(chapter):
                if found.params:
                    values = derive(secret, login, found.id, found.params, found.valid)
                    shown = ", ".join(f"{n} = {found.params[n].show(v)}" for n, v in values.items())
                    lines.append(f"{login}\t{found.id}\t{shown}")
    return lines


def _main(args: argparse.Namespace) -> int:
    try:
        if args.action == "secret":
            path = new_secret(args.file)
            print(f"✔ a new secret in {path} (readable by you only). Keep it outside the course folder and "
                  "keep it safe: every student's numbers are derived from it, so the same file must "
                  "make the handouts and grade them.")
            return 0
        roster, secret = read_roster(args.roster), read_secret(args.secret)
    except (SecretError, RosterError) as exc:
        print(f"labkit variants: {exc}")
        return 2
    chapters = [args.chapter] if args.chapter is not None else list(range(100))
    print("\n".join(table(roster, secret, chapters)))
    return 0


def add_commands(subparsers: Any) -> None:
    """Register ``labkit variants`` on labkit's argparse subparsers."""
    parser = subparsers.add_parser(
        "variants", help="the instructor's secret and each student's own exercise numbers",
        description="Each student's numbers are derived from the instructor's secret and their login. "
        "`secret FILE` writes a new secret; `show --roster CSV --secret FILE` lists every student's numbers.")
    actions = parser.add_subparsers(dest="action", required=True)
    made = actions.add_parser("secret", help="write a new secret to FILE (never replaces a file)")
    made.add_argument("file", metavar="FILE")
    shown = actions.add_parser("show", help="list each student's numbers")
    shown.add_argument("--roster", required=True, metavar="CSV", help="a roster with a `login` column")
    shown.add_argument("--secret", required=True, metavar="FILE", help="the instructor's secret")
    shown.add_argument("--chapter", type=int, help="one chapter only")
    parser.set_defaults(run=_main)
