"""Two renders into the same new folder at once (issue 36, 10d): the one that swaps its directory in
second finds DIR there, a complete render by then, and replaces it as it replaces any earlier
render; neither ends in exit 2. The race is made deterministic: the other render runs, in a process
of its own, exactly between this render's look at DIR and its swap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from netgen.output import staging as output_staging
from netgen.output.manifest import MARKER
from tests.conftest import SMALL, run_cli


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != MARKER}


def _other_render(out: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "netgen.cli", "render", str(SMALL), "-o", str(out)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_later_of_two_first_renders_replaces_the_earlier(tmp_path, monkeypatch):
    out, cold = tmp_path / "out", tmp_path / "cold"
    real = output_staging._swap
    raced = []

    def other_render_first(staging, output, replacing, *args, **kwargs):
        if not raced:  # DIR was missing at this render's look; the other render finishes now
            raced.append(replacing)
            _other_render(output)
            assert (output / MARKER).is_file()
        return real(staging, output, replacing, *args, **kwargs)

    monkeypatch.setattr(output_staging, "_swap", other_render_first)
    result = run_cli("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert raced == [False]
    assert run_cli("render", str(SMALL), "-o", str(cold)).exit_code == 0
    assert _tree(out) == _tree(cold)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cold", "out"]  # no staging or set-aside left


def test_a_parent_folder_made_meanwhile_is_used(tmp_path, monkeypatch):
    """-o new/deeper/out: the other render makes `new` between this one's look and its mkdir."""
    out = tmp_path / "new" / "deeper" / "out"
    real = os.mkdir

    def made_meanwhile(path, *args, **kwargs):
        if Path(path) == tmp_path / "new" and not (tmp_path / "new").exists():
            real(path)  # the other render's
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", made_meanwhile)
    result = run_cli("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert (out / MARKER).is_file()
