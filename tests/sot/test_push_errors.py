"""`netgen sot push` without a Nautobot: what a user gets for a missing token, a bad URL or a server
that cannot be reached (exit 2, one line naming the fix; the token never printed)."""

from __future__ import annotations

import http.server
import json
import socket
import threading

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


class _Answer(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the status and body the test gives the server."""

    def do_GET(self) -> None:
        status, body = self.server.answer  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stub_nautobot():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_the_bgp_app_is_missing_only_when_its_endpoint_is_not_found(stub_nautobot):
    """The BGP models app is taken as absent on a 404 from its endpoint, by the status code: a 500
    whose text happens to hold ' 404 ' is an error, named with its status."""
    from netgen.sot.base import SotError  # noqa: PLC0415
    from netgen.sot.nautobot import Nautobot  # noqa: PLC0415

    url = f"http://127.0.0.1:{stub_nautobot.server_address[1]}"
    stub_nautobot.answer = (404, '{"detail": "Not found."}')
    assert Nautobot(url, "x" * 40).bgp() is False
    stub_nautobot.answer = (200, '{"count": 0, "results": []}')
    assert Nautobot(url, "x" * 40).bgp() is True
    stub_nautobot.answer = (500, '{"detail": "upstream answered 404 Not Found"}')
    with pytest.raises(SotError, match="500") as exc:
        Nautobot(url, "x" * 40).bgp()
    assert exc.value.status == 500
