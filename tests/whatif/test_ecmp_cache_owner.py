"""The ECMP what-if cache is read only where it is the user's own (issue 36, 8): a folder or an
`ecmp-*.json` owned by someone else, writable by others, or a link is a miss, never numbers that
reach `netgen report` (the template cache's rule, resources.owned_by_user)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from netgen.whatif import ecmp
from netgen.whatif.ecmp import simulate

ARGS = (6, 4, 2, 400, 1)
PLANTED = 42.0  # a max/mean no draw gives: the planted entry's


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh cache with one real result in it; the path of its file."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _forget()
    simulate(*ARGS)
    store = ecmp._result_store()
    assert store is not None and store.path.is_file()
    _forget()
    yield store.path
    _forget()


def _forget() -> None:
    ecmp._result_store.cache_clear()
    ecmp._remembered.cache_clear()


def _plant(path: Path) -> None:
    """The file's entries with a mean max/mean no draw gives."""
    doc = json.loads(path.read_text())
    doc = {key: [row[0], PLANTED, *row[2:]] for key, row in doc.items()}
    path.write_text(json.dumps(doc))


def _another_users(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    else:  # not root: this process is made to count as another user, so the file is not its own
        uid = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: uid + 1)


def test_an_untouched_cache_is_read(cache, monkeypatch):
    _plant(cache)  # the user's own file, as the user may change it
    assert simulate(*ARGS).mean_ratio == PLANTED


def test_a_file_of_another_user_writable_by_all_is_a_miss(cache, monkeypatch):
    _plant(cache)
    cache.chmod(0o666)
    _another_users(cache, monkeypatch)
    assert simulate(*ARGS).mean_ratio != PLANTED


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_file_others_can_write_is_a_miss(cache, mode):
    _plant(cache)
    cache.chmod(mode)
    assert simulate(*ARGS).mean_ratio != PLANTED


def test_a_link_is_not_followed(cache, tmp_path):
    planted = tmp_path / "planted.json"
    planted.write_text(cache.read_text())
    _plant(planted)
    cache.unlink()
    cache.symlink_to(planted)
    assert simulate(*ARGS).mean_ratio != PLANTED


def test_a_folder_others_can_write_is_not_used(cache):
    _plant(cache)
    cache.parent.chmod(0o777)
    assert ecmp._result_store() is None
    assert simulate(*ARGS).mean_ratio != PLANTED


def test_new_entries_are_written_private(cache):
    simulate(7, 4, 2, 400, 1)
    assert cache.stat().st_mode & 0o077 == 0
    assert cache.parent.stat().st_mode & 0o077 == 0
