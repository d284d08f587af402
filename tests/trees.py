"""A folder's files by content, to show that a command changed none of them."""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree_hashes(folder: Path) -> dict[str, str]:
    """``{relative path: SHA-256 of its bytes}`` for every file under ``folder``."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}
