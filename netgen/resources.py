"""Where netgen's run-time files are: the Jinja2 templates and the Ansible roles and playbook.

The repository keeps them at its top level (`templates/`, `roles/`: the layout the project asked
for). A wheel carries copies inside the package (`netgen/_data/`, written by setup.py's build step),
so an install without the checkout (pip, pipx) finds them too; an editable install reads the
checkout's own.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """`templates` or `roles`: the packaged copy where there is one, else the checkout's."""
    packaged = PACKAGE / "_data" / name
    return packaged if packaged.is_dir() else PACKAGE.parent / name


def user_cache_dir() -> Path | None:
    """Where netgen keeps what it can recompute (ECMP what-if results, compiled templates):
    $XDG_CACHE_HOME/netgen, else ~/.cache/netgen (None: no home directory to put it in)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    try:
        return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "netgen"
    except RuntimeError:
        return None


TEMPLATES = data_dir("templates")
ROLES = data_dir("roles")

__all__ = ["ROLES", "TEMPLATES", "data_dir", "user_cache_dir"]
