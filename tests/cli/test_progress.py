"""The CLI's one progress display: bars per stage on an interactive stderr, nothing otherwise."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from netgen.cli import common

pytestmark = pytest.mark.render


def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    buffer = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=buffer, force_terminal=True, width=100))
    return buffer


def test_bars_per_stage_with_notes_on_a_terminal(monkeypatch):
    buffer = terminal(monkeypatch)
    with common.ProgressBars() as bars:
        bars.update("devices", total=3, advance=1, note="z01-rtsw001 changed")
        bars.update("devices", total=3, advance=1, note="z01-ctsw01 [red]x[/]")  # a note is text, not markup
        bars.update("BGP sessions", total=8, done=5)
        assert bars._bar is not None
        tasks = {t.description.split(":")[0]: t for t in bars._bar.tasks}
        assert (tasks["devices"].completed, tasks["devices"].total) == (2, 3)
        assert (tasks["BGP sessions"].completed, tasks["BGP sessions"].total) == (5, 8)
        # shown as the literal text: user strings never become rich markup
        assert Text.from_markup(tasks["devices"].description).plain == "devices: z01-ctsw01 [red]x[/]"
    assert "devices" in buffer.getvalue()


@pytest.mark.parametrize("enabled", [True, False])
def test_silent_without_a_terminal_or_when_disabled(monkeypatch, enabled):
    buffer = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=buffer, force_terminal=False))
    with common.ProgressBars(enabled) as bars:
        bars.update("devices", total=2, advance=1, note="x")
        assert bars._bar is None
    with common.progress(2, "rendering") as advance:
        advance()
    assert buffer.getvalue() == ""
