"""How a result leaves a cell: shown in the notebook and appended to the run's log.

Claims and exercises are both shown as rich output (``text/html`` for JupyterLab,
``text/plain`` for nbval and terminals) and, when an environment variable names a file,
appended to it as one JSON object per line (``LABKIT_CLAIMS``: the claims log).
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["append", "notebook_name", "publish"]


def notebook_name() -> str:
    """The running notebook's name: ``$LABKIT_NOTEBOOK`` (set by labkit's runners and the
    grader) or the session name JupyterLab gives the kernel; "" when unknown."""
    return os.environ.get("LABKIT_NOTEBOOK") or os.environ.get("JPY_SESSION_NAME", "")


def append(variable: str, record: dict[str, Any]) -> None:
    """Append ``record`` as a JSON line to the file named by environment ``variable``, if set."""
    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def publish(text: str, html: str) -> None:
    """Display a result: rich in IPython (both representations), printed elsewhere."""
    if _in_ipython():
        from IPython.display import display

        display({"text/plain": text, "text/html": html}, raw=True)
    else:
        print(text)
