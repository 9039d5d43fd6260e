"""Files netgen writes at a path the user names (`-o FILE`) get the mode the umask gives a new file,
and a replaced file keeps its mode, owner and group: a daemon running as its own user (Debian's
slurmctld as `slurm`) can read what netgen wrote as root, before and after a re-export. A symbolic
link or a non-regular file at FILE is refused and left as it was (netgen/cli/common.py,
write_replacing)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

# Every command writing one file at a user-named path (sot pull's deploy.sot.yaml goes through the same
# helper; it needs a Nautobot, in tests/sot).
COMMANDS = {
    "scheduler": ("scheduler", str(SMALL), "--format", "slurm", "-o"),
    "cabling": ("cabling", str(SMALL), "-o"),
    "report": ("report", str(SMALL), "-o"),
    "schema": ("schema", "-o"),
}


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _write(command: str, target: Path, mask: int = 0o022) -> None:
    with _umask(mask):
        result = run_cli(*COMMANDS[command], str(target))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path, command, mask, mode):
    target = tmp_path / "out"
    _write(command, target, mask)
    assert _mode(target) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary file left


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("before", "mask"), [(0o644, 0o077), (0o640, 0o022), (0o600, 0o000), (0o604, 0o022)])
def test_a_replaced_file_keeps_its_mode_whatever_the_umask(tmp_path, command, before, mask):
    target = tmp_path / "out"
    target.write_text("old\n")
    target.chmod(before)
    _write(command, target, mask)
    assert _mode(target) == before
    assert target.read_text() != "old\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user (CI runs as root)")
def test_a_replaced_file_keeps_its_owner_and_group(tmp_path):
    """topology.conf given to the scheduler's user (here nobody:nogroup, 65534) stays theirs."""
    target = tmp_path / "topology.conf"
    target.write_text("old\n")
    os.chown(target, 65534, 65534)
    target.chmod(0o640)
    _write("scheduler", target)
    info = target.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (65534, 65534, 0o640)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_symbolic_link_is_refused_and_what_it_points_to_is_untouched(tmp_path, command):
    """As root, writing through a link planted at FILE would overwrite whatever it names."""
    victim = tmp_path / "shadow"
    victim.write_text("keep me\n")
    victim.chmod(0o600)
    link = tmp_path / "topology.conf"
    link.symlink_to(victim)
    result = run_cli(*COMMANDS[command], str(link))
    assert result.exit_code == 2, result.output
    assert "symbolic link" in result.output
    assert link.is_symlink() and os.readlink(link) == str(victim)
    assert victim.read_text() == "keep me\n" and _mode(victim) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shadow", "topology.conf"]


def test_a_dangling_symbolic_link_is_refused_too(tmp_path):
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    result = run_cli(*COMMANDS["cabling"], str(link))
    assert result.exit_code == 2
    assert not (tmp_path / "elsewhere.csv").exists() and link.is_symlink()


def test_a_fifo_is_refused_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run_cli(*COMMANDS["scheduler"], str(fifo), "--json")
    assert result.exit_code == 2, result.output
    assert "not a regular file" in json.loads(result.stdout)["error"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
