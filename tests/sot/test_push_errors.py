"""`netgen sot push` without a Nautobot: what a user gets for a missing token, a bad URL or a server
that cannot be reached (exit 2, one line naming the fix; the token never printed)."""

from __future__ import annotations

import json
import socket

import pytest

from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render


def test_no_token_names_the_variable(monkeypatch):
    monkeypatch.delenv("NAUTOBOT_TOKEN", raising=False)
    result = run_cli("sot", "push", str(SMALL), "--nautobot", "http://127.0.0.1:9", "--json")
    assert result.exit_code == 2
    assert "set NAUTOBOT_TOKEN" in json.loads(result.stdout)["error"]


def test_an_unreachable_nautobot_is_an_input_error_without_the_token(monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("NAUTOBOT_TOKEN", "0123456789abcdef0123456789abcdef01234567")
    result = run_cli("sot", "push", str(SMALL), "--nautobot", f"http://127.0.0.1:{port}", "--dry-run")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"Nautobot at http://127.0.0.1:{port} cannot be reached" in result.output
    assert "0123456789abcdef" not in result.output


def test_a_url_that_is_not_one(monkeypatch):
    monkeypatch.setenv("NAUTOBOT_TOKEN", "x" * 40)
    result = run_cli("sot", "push", str(SMALL), "--nautobot", "nautobot.example.net", "--json")
    assert result.exit_code == 2 and "give the base URL" in json.loads(result.stdout)["error"]
