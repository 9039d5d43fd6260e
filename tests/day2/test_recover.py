"""What `netgen recover` makes of a drain's journal (netgen/day2/recover.py): which switches and links
are in flight, which way they go back, and journals it refuses (not a drain's, a link, a FIFO)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from netgen import api
from netgen.day2.recover import read_drain_journal, recovery_request
from netgen.deploy.journal import JournalError, kind
from tests.conftest import SMALL

LINK = ("z02-rtsw001", "z02-ctsw01")


def context_of(path: Path):
    return api.check(path).ctx


def _journal(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "drain-x.jsonl"
    path.write_text("".join(json.dumps({"change_id": "drain-x", **r}) + "\n" for r in records))
    return path


def test_in_flight_is_what_was_announced_and_never_read_back_as_asked(tmp_path):
    path = _journal(tmp_path,
                    {"device": None, "state": "drain", "fabric": "small", "forced": "line cards tonight"},
                    {"device": "z01-ctsw01", "state": "draining"}, {"device": "z01-ctsw01", "state": "drained"},
                    {"device": "z01-ctsw02", "state": "draining"}, {"device": "z01-ctsw02", "state": "failed"},
                    {"device": "z01-ctsw03", "state": "draining"},
                    {"device": "z01-ctsw04", "state": "already drained"})
    assert kind(path) == "drain"
    view = read_drain_journal(path)
    assert view.undrain is False and view.forced == "line cards tonight"
    assert view.in_flight == {"z01-ctsw02": (), "z01-ctsw03": ()}
    ctx = context_of(SMALL)
    back = recovery_request(ctx, view, confirm=False)
    assert back.targets == ("z01-ctsw02", "z01-ctsw03") and back.undrain is True and back.force is None
    assert back.recovering and back.change_id == "drain-x" and back.journal == path
    on = recovery_request(ctx, view, confirm=True)
    assert on.undrain is False and on.force == "line cards tonight"  # carried through as it was forced


def test_a_recovery_interrupted_in_turn_goes_back_the_same_way_and_a_link_is_both_ends(tmp_path):
    ctx = context_of(SMALL)
    link = next(k for k in (lk.key for lk in ctx.topology.links) if LINK[0] in k and LINK[1] in k)
    peer = next(str(end.ipv4.ip) for lk in ctx.topology.links if lk.key == link
                for end in (lk.lower, lk.upper) if end.device == LINK[0])
    path = _journal(tmp_path,
                    {"device": None, "state": "drain"},
                    {"device": LINK[1], "state": "sessions draining", "sessions": [peer]},
                    {"device": None, "state": "recover", "undrain": True},
                    {"device": LINK[1], "state": "sessions undraining", "sessions": [peer]})
    view = read_drain_journal(path)
    assert view.in_flight == {LINK[1]: (peer,)}
    request = recovery_request(ctx, view, confirm=False)
    assert request.undrain is True and request.targets == (link,)  # the link: both its ends


def test_journals_that_are_no_drain_s_or_no_file_are_refused(tmp_path):
    deploy = _journal(tmp_path, {"device": None, "state": "rollout", "fabric": "small"})
    assert kind(deploy) == "deploy"
    with pytest.raises(JournalError, match="not a drain's"):
        read_drain_journal(deploy)
    link = tmp_path / "link.jsonl"
    link.symlink_to(deploy)
    with pytest.raises(JournalError, match="a link"):
        kind(link)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(JournalError, match="not a regular file"):
        read_drain_journal(fifo)  # and it does not hang


def test_a_switch_the_fabric_does_not_have_is_refused(tmp_path):
    path = _journal(tmp_path, {"device": None, "state": "undrain"}, {"device": "z09-ctsw07", "state": "undraining"})
    with pytest.raises(JournalError, match="no switch of fabric"):
        recovery_request(context_of(SMALL), read_drain_journal(path), confirm=False)
