"""`netgen sot` against servers that lie, stall, flood or redirect: each ends in exit 2 with one
message naming the configured server, the request and the reason (the same document with
--json), never an internal error, and the token never printed nor sent anywhere but the server
the user named. The servers are real HTTP servers on 127.0.0.0/8 in threads: a small stateful
fake Nautobot (what netgen writes it lists back, page by page) that each test bends, and a second
listener elsewhere that records whatever reaches it.

Deadlines and the size limit are set small through NETGEN_HTTP_* so the slow cases end quickly.
Five tests are controls, which netgen's urllib client passed as well: an honest fake takes a push
and a pull, a same-origin GET redirect is followed, TLS is verified, and names from the server
reach the terminal without escape sequences. Every other test failed on that client."""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

TOKEN = "netgen-test-token-" + "5f1e" * 8
FABRIC = "small-lab"
EMPTY_PAGE = {"count": 0, "next": None, "previous": None, "results": []}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Handler(http.server.BaseHTTPRequestHandler):
    server: FakeServerSocket

    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        fake = self.server.fake
        with fake.lock:
            fake.seen.append(seen)
        try:
            if fake.hook is None or not fake.hook(self, seen):
                fake.nautobot(self, seen)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up on this answer
            pass

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _any

    def log_message(self, *args: object) -> None:
        pass


class FakeServerSocket(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a dripping answer in its thread never holds up the end of a test
    fake: FakeServer


Hook = Callable[[Handler, Seen], bool]  # True: it answered the request


@dataclass
class FakeServer:
    """A Nautobot enough like the real one for `netgen sot push` and `pull`: it keeps what is
    posted per endpoint, lists it back (filtered by name, `page_size` records a page, absolute
    `next` links) with related objects and choices shaped as Nautobot shapes them. `hook` bends
    it: it sees each request first and answers it when it wants to."""

    host: str = "127.0.0.1"
    page_size: int = 1000
    hook: Hook | None = None
    bgp: bool = True
    seen: list[Seen] = field(default_factory=list)
    store: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    httpd: FakeServerSocket | None = None

    @property
    def url(self) -> str:
        assert self.httpd is not None
        return f"http://{self.host}:{self.httpd.server_address[1]}"

    def nautobot(self, handler: Handler, seen: Seen) -> None:
        parts = urllib.parse.urlsplit(seen.path)
        path, query = parts.path, urllib.parse.parse_qs(parts.query)
        if not path.startswith("/api/") or (path.startswith("/api/plugins/bgp/") and not self.bgp):
            reply(handler, 404, {"detail": "Not found."})
        elif seen.method == "GET":
            with self.lock:
                records = [shaped(r) for r in self.store.get(path, [])
                           if "name" not in query or r.get("name") in query["name"]]
            offset = int(query.get("offset", ["0"])[0])
            size = min(int(query.get("limit", ["1000"])[0]), self.page_size)
            following = None
            if offset + size < len(records):
                following = f"http://{handler.headers['Host']}{path}?" + urllib.parse.urlencode(
                    {**{k: v[0] for k, v in query.items()}, "offset": offset + size})
            reply(handler, 200, {"count": len(records), "next": following, "previous": None,
                                 "results": records[offset:offset + size]})
        elif seen.method == "POST":
            body = json.loads(seen.body)
            made = [{"id": str(uuid.uuid4()), **item} for item in (body if isinstance(body, list) else [body])]
            with self.lock:
                self.store.setdefault(path, []).extend(made)
            reply(handler, 201, made if isinstance(body, list) else made[0])
        elif seen.method == "PATCH":
            with self.lock:
                held = {r["id"]: r for r in self.store.get(path, [])}
                for change in json.loads(seen.body):
                    held[change["id"]].update(change)
            reply(handler, 200, json.loads(seen.body))
        else:
            reply(handler, 405, {"detail": "Method not allowed."})


def shaped(record: dict[str, Any]) -> dict[str, Any]:
    """A record as Nautobot lists it: related objects as objects, choices as {value, label}."""
    out = dict(record)
    for key in ("device", "ip_address", "interface"):
        if isinstance(out.get(key), str):
            out[key] = {"id": out[key], "object_type": f"x.{key}", "url": f"/api/x/{out[key]}/"}
    if isinstance(out.get("status"), str):
        out["status"] = {"id": "s1", "name": out["status"]}
    if isinstance(out.get("type"), str):
        out["type"] = {"value": out["type"], "label": out["type"].title()}
    return out


def reply(handler: Handler, status: int, document: object = None, *, raw: bytes | None = None,
          content_type: str = "application/json", headers: dict[str, str] | None = None) -> None:
    body = raw if raw is not None else (b"" if document is None else json.dumps(document).encode())
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def redirect(handler: Handler, status: int, location: str) -> None:
    reply(handler, status, raw=b"", content_type="text/html", headers={"Location": location})


def start(fake: FakeServer) -> FakeServer:
    httpd = FakeServerSocket((fake.host, 0), Handler)
    httpd.fake, fake.httpd = fake, httpd
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return fake


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    started: list[FakeServer] = []
    yield started
    for fake in started:
        fake.stop.set()
        assert fake.httpd is not None
        fake.httpd.shutdown()
        fake.httpd.server_close()


@pytest.fixture
def nautobot(servers, monkeypatch) -> FakeServer:
    monkeypatch.setenv("NAUTOBOT_TOKEN", TOKEN)
    monkeypatch.setenv("NETGEN_HTTP_DEADLINE", "1.5")
    monkeypatch.setenv("NETGEN_HTTP_READ_TIMEOUT", "5")
    servers.append(start(FakeServer()))
    return servers[-1]


@pytest.fixture
def elsewhere(servers) -> FakeServer:
    """Another origin (port) on loopback: answers like an empty Nautobot and records who called."""
    servers.append(start(FakeServer()))
    return servers[-1]


def sot(command: str, fabric: Path | str, nautobot: FakeServer, *args: str, as_json: bool = False):
    return run_cli("sot", command, str(fabric), "--nautobot", nautobot.url, *args, *(["--json"] if as_json else []))


def refused(result, nautobot: FakeServer, as_json: bool) -> str:
    """The one error message of an exit-2 run, after the checks every refusal must pass."""
    assert result.exit_code == 2, result.output
    everything = result.output + (result.stderr or "")
    assert TOKEN not in everything
    assert "internal error" not in everything and "Traceback" not in everything
    assert "\x1b" not in everything and "\x07" not in everything
    if as_json:
        document = json.loads(result.stdout)
        assert set(document) == {"ok", "exit_code", "error"}
        assert document["ok"] is False and document["exit_code"] == 2
        message = str(document["error"])
    else:
        message = result.stderr
    assert f"Nautobot at {nautobot.url}" in message or "Nautobot refused the token" in message
    assert nautobot.url in message
    return message


def tokens_received(fake: FakeServer) -> list[str]:
    return [s.path for s in fake.seen if TOKEN in " ".join(s.headers.values())]


both = pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])


# --- controls -------------------------------------------------------------------------------------
def test_an_honest_fake_nautobot_takes_the_push_and_a_second_push_changes_nothing(nautobot):
    """What netgen sends stays as it was: the token, Nautobot's API version, JSON bodies in
    batches of at most 50; pages are followed through their absolute `next` links."""
    nautobot.page_size = 150
    first = sot("push", SMALL, nautobot, as_json=True)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["changes"] > 1500
    again = sot("push", SMALL, nautobot, as_json=True)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["changes"] == 0
    assert TOKEN not in first.output + again.output
    assert any("offset=150" in s.path for s in nautobot.seen)  # more than one page was read
    for seen in nautobot.seen:
        assert seen.headers["authorization"] == f"Token {TOKEN}"
        assert seen.headers["accept"] == "application/json; version=3.2"
        assert seen.method in ("GET", "POST", "PATCH")
        if seen.method != "GET":
            assert seen.headers["content-type"] == "application/json"
            body = json.loads(seen.body)
            assert isinstance(body, dict) or 1 <= len(body) <= 50


def test_a_same_origin_redirect_of_a_get_is_followed(nautobot, elsewhere):
    def moved(handler: Handler, seen: Seen) -> bool:
        if seen.path.startswith("/api/extras/custom-fields/?limit=1000") and "moved" not in seen.path:
            redirect(handler, 301, seen.path + "&moved=1")
            return True
        return False

    nautobot.hook = moved
    result = sot("push", SMALL, nautobot, "--dry-run")
    assert result.exit_code == 0, result.output
    assert any("moved=1" in s.path for s in nautobot.seen)


def test_a_proxy_named_in_the_environment_is_not_used(nautobot, elsewhere, monkeypatch):
    """The token goes straight to the server the user named, never through a proxy that
    HTTP_PROXY names (it would see the token, and could answer for the server)."""
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    for variable in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(variable, elsewhere.url)
    # a client that read the environment once already (urllib keeps its opener) reads it afresh
    monkeypatch.setattr(urllib.request, "_opener", None, raising=False)
    result = sot("push", SMALL, nautobot, "--dry-run")
    assert result.exit_code == 0, result.output
    assert elsewhere.seen == [] and nautobot.seen


def test_tls_is_verified(servers, monkeypatch, tmp_path):
    """A server whose certificate nothing vouches for is refused before any request is sent."""
    import datetime  # noqa: PLC0415
    import ipaddress  # noqa: PLC0415
    import ssl  # noqa: PLC0415

    from cryptography import x509  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.x509.oid import NameOID  # noqa: PLC0415

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    fake = FakeServer()
    httpd = FakeServerSocket(("127.0.0.1", 0), Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    httpd.handle_error = lambda *args: None  # type: ignore[method-assign]  # the refused handshake
    httpd.fake, fake.httpd = fake, httpd
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    servers.append(fake)
    monkeypatch.setenv("NAUTOBOT_TOKEN", TOKEN)
    url = f"https://127.0.0.1:{httpd.server_address[1]}"
    result = run_cli("sot", "push", str(SMALL), "--nautobot", url, "--dry-run", "--json")
    assert result.exit_code == 2, result.output
    assert "CERTIFICATE_VERIFY_FAILED" in json.loads(result.stdout)["error"] and fake.seen == []


# --- redirects ------------------------------------------------------------------------------------
@both
@pytest.mark.parametrize("status", [302, 308])
@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_a_redirect_to_another_host_or_port_is_refused_and_the_token_stays(servers, nautobot, status, host,
                                                                             as_json):
    other = start(FakeServer(host=host))
    servers.append(other)

    def away(handler: Handler, seen: Seen) -> bool:
        redirect(handler, status, other.url + seen.path)
        return True

    nautobot.hook = away
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert f"redirect to {other.url}/api/" in message and f"give --nautobot {other.url}" in message
    assert tokens_received(other) == [] and other.seen == []
    assert len(tokens_received(nautobot)) == len(nautobot.seen) == 1


@both
def test_a_redirect_loop_is_refused(nautobot, as_json):
    def loop(handler: Handler, seen: Seen) -> bool:
        there = "/api/loop/a/" if not seen.path.startswith("/api/loop/a/") else "/api/loop/b/"
        redirect(handler, 302, there)
        return True

    nautobot.hook = loop
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert "redirect" in message and "loop" in message
    assert len(nautobot.seen) <= 6


@both
@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_post_answered_by_a_redirect_is_not_repeated_as_a_get(nautobot, elsewhere, status, as_json):
    def moved(handler: Handler, seen: Seen) -> bool:
        if seen.method == "POST":
            redirect(handler, status, "/api/extras/custom-fields-moved/")
            return True
        return False

    nautobot.hook = moved
    message = refused(sot("push", SMALL, nautobot, as_json=as_json), nautobot, as_json)
    assert "POST /api/extras/custom-fields/" in message and "redirect" in message
    assert not any("moved" in s.path for s in nautobot.seen)
    assert [s.method for s in nautobot.seen].count("POST") == 1


# --- pagination -----------------------------------------------------------------------------------
@both
def test_a_next_link_back_to_the_same_page_is_a_loop(nautobot, as_json):
    def again(handler: Handler, seen: Seen) -> bool:
        if not seen.path.startswith("/api/extras/custom-fields/"):
            return False
        # a bound of its own, so that a client without loop detection also ends (and fails the test)
        looped = sum(1 for s in nautobot.seen if s.path == seen.path) < 30
        reply(handler, 200, {**EMPTY_PAGE, "next": f"{nautobot.url}{seen.path}" if looped else None})
        return True

    nautobot.hook = again
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert "loop" in message and "GET /api/extras/custom-fields/" in message
    assert sum(1 for s in nautobot.seen if s.path.startswith("/api/extras/custom-fields/")) == 1


@both
def test_a_next_link_to_another_origin_is_not_followed(nautobot, elsewhere, as_json):
    def away(handler: Handler, seen: Seen) -> bool:
        if seen.path.startswith("/api/extras/custom-fields/") and "offset" not in seen.path:
            reply(handler, 200, {**EMPTY_PAGE, "next": f"{elsewhere.url}/api/extras/custom-fields/?offset=1000"})
            return True
        return False

    nautobot.hook = away
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert f"points to {elsewhere.url}/api/extras/custom-fields/" in message
    assert elsewhere.seen == []
    assert not any("offset" in s.path for s in nautobot.seen)


# --- slow and big answers -------------------------------------------------------------------------
def drip(handler: Handler, data: bytes, fake: FakeServer) -> None:
    for byte in data:
        if fake.stop.is_set():
            return
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.1)


@both
@pytest.mark.parametrize("part", ["body", "headers"])
def test_an_answer_dripping_a_byte_at_a_time_ends_at_the_deadline(nautobot, part, as_json):
    """Each byte comes well within the read timeout: only the request's deadline ends it."""
    body = json.dumps(EMPTY_PAGE).encode()
    head = f"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()

    def slow(handler: Handler, seen: Seen) -> bool:
        if not seen.path.startswith("/api/extras/custom-fields/"):
            return False
        if part == "body":
            handler.wfile.write(head)
            drip(handler, body, nautobot)
        else:
            drip(handler, head, nautobot)
            handler.wfile.write(body)
        return True

    nautobot.hook = slow
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert "no complete answer within 1.5 s" in message and "GET /api/extras/custom-fields/" in message


@both
@pytest.mark.parametrize("length", ["declared", "streamed"])
def test_an_answer_over_the_size_limit_is_refused_without_reading_it_whole(nautobot, monkeypatch, length, as_json):
    monkeypatch.setenv("NETGEN_HTTP_MAX_BYTES", "100000")
    total = 40 * 1024 * 1024
    sent = []

    def flood(handler: Handler, seen: Seen) -> bool:
        if not seen.path.startswith("/api/extras/custom-fields/"):
            return False
        # a valid page whose one record carries 40 MiB of padding
        start_, end = b'{"count": 1, "next": null, "previous": null, "results": [{"id": "1", "key": "', b'"}]}'
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if length == "declared":
            handler.send_header("Content-Length", str(total))
        handler.end_headers()
        handler.wfile.write(start_)
        chunk, written = b"x" * 65536, len(start_)
        try:
            while written < total - len(end) - len(chunk):
                handler.wfile.write(chunk)
                written += len(chunk)
            handler.wfile.write(b"x" * (total - len(end) - written) + end)
            written = total
        finally:
            sent.append(written)
        return True

    nautobot.hook = flood
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert "larger than" in message and "GET /api/extras/custom-fields/" in message
    for _ in range(50):  # the server's thread notices the closed connection
        if sent:
            break
        time.sleep(0.1)
    assert sent and sent[0] < total


# --- answers of the wrong kind or shape -----------------------------------------------------------
BAD_ANSWERS = {
    "html": (b"<!DOCTYPE html><html><title>Log in</title></html>", "text/html; charset=utf-8", "not JSON"),
    "not-json": (b'{"count": 0, "results": [', "application/json", "not JSON"),
    "not-utf8": (b'{"count": 0, "next": null, "previous": null, "results": [], "x": "\xff\xfe"}', "application/json",
                 "not UTF-8"),
    "a-list": (b'[{"id": "1", "key": "netgen_fabric"}]', "application/json", "an object expected, not a list"),
    "results-an-object": (b'{"count": 1, "next": null, "previous": null, "results": {"key": "netgen_fabric"}}',
                          "application/json", "results"),
    "results-not-objects": (b'{"count": 2, "next": null, "previous": null, "results": [1, 2]}', "application/json",
                            "results[0]"),
    "nested-too-deep": (b"[" * 100_000, "application/json", "nested too deep"),
    "a-number-too-long": (b'{"count": ' + b"9" * 5000 + b', "results": []}', "application/json", "not JSON"),
}


@both
@pytest.mark.parametrize("answer", list(BAD_ANSWERS))
def test_an_answer_that_is_not_a_nautobot_page_is_refused(nautobot, answer, as_json):
    body, content_type, reason = BAD_ANSWERS[answer]

    def wrong(handler: Handler, seen: Seen) -> bool:
        if seen.path.startswith("/api/extras/custom-fields/"):
            reply(handler, 200, raw=body, content_type=content_type)
            return True
        return False

    nautobot.hook = wrong
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert reason in message and "GET /api/extras/custom-fields/" in message


@both
@pytest.mark.parametrize("record", [{"id": "l1"}, {"id": "l1", "name": ["small-lab"]}, {"name": "small-lab"}],
                         ids=["no-name", "name-a-list", "no-id"])
def test_a_record_without_the_fields_netgen_reads_is_refused(nautobot, record, as_json):
    def wrong(handler: Handler, seen: Seen) -> bool:
        if seen.path.startswith("/api/dcim/locations/"):
            reply(handler, 200, {**EMPTY_PAGE, "count": 1, "results": [record]})
            return True
        return False

    nautobot.hook = wrong
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert "GET /api/dcim/locations/" in message and "results[0]." in message


def test_names_from_the_server_are_printed_without_control_characters(nautobot):
    """A device netgen made that the fabric no longer has is reported by the name Nautobot gives
    it: that name reaches the terminal without its escape sequences."""
    nautobot.store["/api/dcim/locations/"] = [{"id": "l1", "name": FABRIC}]
    nautobot.store["/api/dcim/devices/"] = [{"id": "d9", "name": "z09\x1b]0;owned\x07\x1b[2J-rtsw001",
                                             "custom_fields": {"netgen_fabric": FABRIC}}]
    result = sot("push", SMALL, nautobot, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "no longer in the fabric" in result.output and "z09" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output


# --- the server's own refusals --------------------------------------------------------------------
@both
@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_names_the_server_and_the_variable(nautobot, status, as_json):
    def no(handler: Handler, seen: Seen) -> bool:
        reply(handler, status, {"detail": f"Invalid token {seen.headers.get('authorization')}"})
        return True

    nautobot.hook = no
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert f"Nautobot refused the token ({status}) at {nautobot.url}" in message and "NAUTOBOT_TOKEN" in message


@both
def test_a_server_error_is_shown_as_a_short_clean_excerpt_without_the_token(nautobot, as_json):
    noise = f"\x1b[2J\x1b]0;owned\x07\u202e token={TOKEN}; Authorization: Token {TOKEN} " + "A" * 5000

    def broken(handler: Handler, seen: Seen) -> bool:
        reply(handler, 500, raw=noise.encode(), content_type="text/plain")
        return True

    nautobot.hook = broken
    message = refused(sot("push", SMALL, nautobot, "--dry-run", as_json=as_json), nautobot, as_json)
    assert "500" in message and "GET /api/extras/custom-fields/" in message
    assert "\u202e" not in message and "A" * 250 not in message and len(message) < 500


@both
def test_a_failed_batch_ends_the_push_cleanly(nautobot, as_json):
    """Interfaces go in batches of 50, four at a time; the second batch is answered by a login
    page (200, HTML): the push stops there with exit 2, batches not yet sent are not sent."""
    posts = []

    def login_page(handler: Handler, seen: Seen) -> bool:
        if seen.method == "POST" and seen.path == "/api/dcim/interfaces/":
            with nautobot.lock:
                posts.append(seen)
                second = len(posts) == 2
            if second:
                reply(handler, 200, raw=b"<html>Log in</html>", content_type="text/html")
                return True
            time.sleep(0.3)  # the others take their time: the failure is known while batches still wait
        return False

    nautobot.hook = login_page
    message = refused(sot("push", SMALL, nautobot, as_json=as_json), nautobot, as_json)
    assert "POST /api/dcim/interfaces/" in message and "not JSON" in message
    assert len(posts) < 12  # of 12 batches: those queued after the failure were dropped


# --- pull -----------------------------------------------------------------------------------------
@both
@pytest.mark.parametrize("device", [
    {"id": "d1", "name": "z01-rtsw001", "primary_ip4": {"id": "i1", "address": "$(reboot)/32"}},
    "z01-rtsw001",
], ids=["address-not-an-address", "record-a-string"])
def test_pull_refuses_devices_of_the_wrong_shape_and_writes_nothing(nautobot, write_fabric, small_data, device,
                                                                    as_json):
    fabric = write_fabric(small_data)
    nautobot.store["/api/dcim/locations/"] = [{"id": "l1", "name": FABRIC}]

    def devices(handler: Handler, seen: Seen) -> bool:
        if seen.path.startswith("/api/dcim/devices/"):
            reply(handler, 200, {**EMPTY_PAGE, "count": 1, "results": [device]})
            return True
        return False

    nautobot.hook = devices
    message = refused(sot("pull", fabric, nautobot, as_json=as_json), nautobot, as_json)
    assert "z01-rtsw001" in message or "results[0]" in message
    assert not (fabric.parent / "deploy.sot.yaml").exists()


def test_pull_from_an_honest_fake_writes_what_it_holds(nautobot, write_fabric, small_data):
    fabric = write_fabric(small_data)
    nautobot.store["/api/dcim/locations/"] = [{"id": "l1", "name": FABRIC}]
    nautobot.store["/api/dcim/devices/"] = [{"id": "d1", "name": "z01-rtsw001", "serial": "JPE1",
                                             "status": "Active", "primary_ip4": {"id": "i1",
                                                                                 "address": "10.9.0.1/24"}}]
    result = sot("pull", fabric, nautobot, as_json=True)
    assert result.exit_code == 0, result.output
    written = yaml.safe_load((fabric.parent / "deploy.sot.yaml").read_text())
    assert written["devices"] == {"z01-rtsw001": {"host": "10.9.0.1", "serial": "JPE1", "status": "Active"}}


def test_the_limits_in_the_environment_must_be_numbers(nautobot, monkeypatch):
    monkeypatch.setenv("NETGEN_HTTP_DEADLINE", "soon")
    result = sot("push", SMALL, nautobot, "--dry-run", as_json=True)
    assert result.exit_code == 2 and "NETGEN_HTTP_DEADLINE" in json.loads(result.stdout)["error"]
    assert nautobot.seen == []

