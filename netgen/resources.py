"""Where netgen's run-time files are: the Jinja2 templates and the Ansible roles and playbook.

The repository keeps them at its top level (`templates/`, `roles/`: the layout the project asked
for). A wheel carries copies inside the package (`netgen/_data/`, written by setup.py's build step),
so an install without the checkout (pip, pipx) finds them too; an editable install reads the
checkout's own.
"""

from __future__ import annotations

import os
import stat
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


def user_state_dir() -> Path | None:
    """Where netgen keeps what it cannot recompute and must not share (the key that authenticates
    render manifests): $XDG_STATE_HOME/netgen, else ~/.local/state/netgen (None: no home directory)."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    try:
        return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state") / "netgen"
    except RuntimeError:
        return None


def owned_by_user(st: os.stat_result, kind: int, *, private: bool) -> bool:
    """Whether what `st` describes (never followed through a link) may be trusted as this user's own:
    of `kind` (stat.S_IFDIR, stat.S_IFREG), owned by this user, and writable by no one else;
    `private`: not readable or searchable by anyone else either. A cache or key that someone else
    could have written would let them choose what netgen reads back (Jinja's rule for its own
    cache folder)."""
    forbidden = 0o077 if private else 0o022
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.geteuid() and not st.st_mode & forbidden


def user_owned_dir(folder: Path, *, private: bool = True) -> Path | None:
    """`folder`, made if missing (mode 0700, its parents with the umask's), when it is a directory of
    this user's own (owned_by_user, not a link); None when it is not or cannot be made. Only
    `folder` itself is checked: someone who can write its parent can move it away, not put a
    directory of this user's in its place."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return None
    return folder if owned_by_user(st, stat.S_IFDIR, private=private) else None


TEMPLATES = data_dir("templates")
ROLES = data_dir("roles")

__all__ = ["ROLES", "TEMPLATES", "data_dir", "owned_by_user", "user_cache_dir", "user_owned_dir", "user_state_dir"]
