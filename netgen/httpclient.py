"""The one HTTP client netgen talks to servers with (Nautobot today, more later), built on httpx
with every setting explicit, because a server's answer is input like any file a user hands over:
it may be broken, slow, huge or hostile, and it must never get hold of the credentials.

The rules, for every request:
* credentials (the headers the caller marks secret) go only to the origin (scheme, host, port)
  the user named, checked before every request, and never appear in a message;
* redirects are never followed by the library: one to the same origin is followed for a GET (a
  few at most, each checked again); every other redirect is refused, naming where it pointed. A
  write (POST, PATCH, ...) is never repeated elsewhere and never turned into a GET;
* a connect timeout, a read timeout (no byte for that long) and a deadline for the whole request:
  every socket read and write waits at most until the deadline, so a server that sends one byte
  at a time ends the request there, headers or body;
* the body is read as a stream and refused once it passes the size limit (never read whole
  first); answers are asked for uncompressed, so the limit counts what is kept in memory;
* every failure is a `ServerError` naming the server, the request (method and path) and why; what
  the server wrote is shown only as a short excerpt with control characters removed.

The limits can be changed through the environment (NETGEN_HTTP_*, see `HttpLimits`).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import ssl
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from netgen import __version__
from netgen.safe_text import printable

MIB = 1024 * 1024
EXCERPT_CHARS = 200  # what a message shows of a server's own words
ERROR_BODY_BYTES = 64 * 1024  # read of an error answer, for its excerpt; the rest is left unread
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
DEFAULT_PORTS = {"http": 80, "https": 443}
ENVIRONMENT = {"connect_s": "NETGEN_HTTP_CONNECT_TIMEOUT", "read_s": "NETGEN_HTTP_READ_TIMEOUT",
               "deadline_s": "NETGEN_HTTP_DEADLINE", "max_bytes": "NETGEN_HTTP_MAX_BYTES"}


class ServerError(Exception):
    """A server could not be reached, refused, or answered in a way netgen cannot use. The message
    names the server, the request and the reason, never a credential. `status`: the HTTP status
    it answered with, if it answered."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """How long and how much netgen waits for and reads from a server, per request.

    connect_s: to open the connection (a server that is up accepts at once);
    read_s: without a single byte from the server; a bulk write can keep a server thinking for a
        while before it answers, hence generous (netgen's urllib client waited as long);
    deadline_s: the whole request, redirects included: bounds a server that drips its answer;
    max_bytes: one answer; a page of 1,000 devices with their related objects (Nautobot, depth 1)
        is about 10 MB;
    max_redirects: same-origin redirects followed for one GET."""

    connect_s: float = 10.0
    read_s: float = 120.0
    deadline_s: float = 300.0
    max_bytes: int = 32 * MIB
    max_redirects: int = 5

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> HttpLimits:
        """The defaults, each replaced by its NETGEN_HTTP_* variable where that is set."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, variable in ENVIRONMENT.items():
            text = environ.get(variable, "").strip()
            if not text:
                continue
            try:
                value = int(text) if name == "max_bytes" else float(text)
            except ValueError:
                value = 0
            if not 0 < value < float("inf"):
                unit = "a number of bytes" if name == "max_bytes" else "a number of seconds"
                raise ServerError(f"{variable}={printable(text)!r}: give {unit} above 0")
            values[name] = value
        return cls(**values)


def origin(url: httpx.URL) -> tuple[str, str, int]:
    """Scheme, host and port: who receives what is sent to URL. The host as sent (IDNA-encoded,
    never decoded here: a server's URL may hold a name that does not decode)."""
    return url.scheme, url.raw_host.decode("ascii", "replace").lower(), url.port or DEFAULT_PORTS.get(url.scheme, 0)


class _Deadline(threading.local):
    """When the current thread's request must be over (time.monotonic()), or None outside one.
    Thread-local: a client serves requests from several threads at once, each with its own."""

    at: float | None = None

    def bound(self, timeout: float | None, expired: type[Exception]) -> float | None:
        """TIMEOUT, shortened to what is left until the deadline; EXPIRED raised when none is left."""
        if self.at is None:
            return timeout
        left = self.at - time.monotonic()
        if left <= 0:
            raise expired("the request's deadline passed")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write waits at most until the request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._inner, self._deadline = inner, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.bound(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname,
                                      self._deadline.bound(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's own sockets, each wrapped in a `_DeadlineStream`."""

    def __init__(self, deadline: _Deadline) -> None:
        self._inner, self._deadline = httpcore.SyncBackend(), deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, self._deadline.bound(timeout, httpcore.ConnectTimeout),
                                         local_address, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, self._deadline.bound(timeout, httpcore.ConnectTimeout),
                                                 socket_options)
        return _DeadlineStream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    content_type: str
    body: bytes
    url: httpx.URL  # where the answer came from (after same-origin redirects)
    location: str | None = None  # a redirect's Location header, as the server wrote it


class HttpClient:
    """Requests to one server: BASE_URL (scheme, host, port and an optional path prefix) is the
    only origin that ever receives HEADERS or SECRET_HEADERS. SERVER names the server in messages
    ("Nautobot"); OPTION is how the user gave the URL ("--nautobot"), for the advice a refused
    redirect comes with. The values of SECRET_HEADERS and SECRETS (e.g. the bare token) are
    blanked out of every message, whatever a server echoes. Safe to use from several threads."""

    def __init__(self, base_url: str, *, server: str, option: str, headers: Mapping[str, str] | None = None,
                 secret_headers: Mapping[str, str] | None = None, secrets: Iterable[str] = (),
                 limits: HttpLimits | None = None) -> None:
        try:
            base = httpx.URL(base_url)
            _ = base.host  # its name decoded (IDNA), as httpx does for the Host header
        except (httpx.InvalidURL, UnicodeError) as exc:
            raise ServerError(f"{option} {printable(base_url, EXCERPT_CHARS)!r}: not a URL ({printable(str(exc))})") \
                from None
        if base.scheme not in DEFAULT_PORTS or not base.raw_host or base.userinfo or base.query or base.fragment:
            raise ServerError(f"{option}: give the server's base URL (http or https, no user name, password or"
                              " query), e.g. https://nautobot.example.net")
        self.base = base.copy_with(path=base.path.rstrip("/") or "/")
        self.base_text = str(self.base).rstrip("/")
        self.server, self.option = server, option
        self.limits = limits or HttpLimits.from_environment()
        self._secret_headers = dict(secret_headers or {})
        # longest first: a header's value ("Token abc") is blanked whole, not around its token
        self._secrets = sorted({value for value in [*self._secret_headers.values(), *secrets] if value},
                               key=len, reverse=True)
        self._deadline = _Deadline()
        # The system's trust store, as Python's ssl module loads it (and as netgen's urllib client
        # did): an in-house CA installed on the machine keeps working. Verification always on.
        context = ssl.create_default_context()
        pool = httpx.Limits(max_connections=32, max_keepalive_connections=0)
        transport = httpx.HTTPTransport(verify=context, trust_env=False, limits=pool, retries=0)
        # httpx offers no hook for its sockets; its transport drives an httpcore pool, which takes a
        # network backend: the same pool, with sockets that keep to the deadline (see _DeadlineStream)
        if not isinstance(getattr(transport, "_pool", None), httpcore.ConnectionPool):
            raise RuntimeError("httpx.HTTPTransport no longer keeps an httpcore pool in _pool")
        transport._pool = httpcore.ConnectionPool(
            ssl_context=context, max_connections=pool.max_connections, max_keepalive_connections=0,
            retries=0, network_backend=_DeadlineBackend(self._deadline))
        self._client = httpx.Client(
            transport=transport,
            # trust_env=False: no proxy from HTTP(S)_PROXY/ALL_PROXY, no ~/.netrc credentials, no CA
            # bundle swapped in through httpx: the credentials go straight to the host the user
            # named and to nothing else (a proxy would see them, and could answer as the server).
            trust_env=False,
            follow_redirects=False,  # redirects are judged here, one by one (_redirect)
            # one connection per request, closed after it (as urllib did): no idle connection a
            # server may have dropped is ever reused for a write
            headers={"User-Agent": f"netgen/{__version__}", "Accept-Encoding": "identity", "Connection": "close",
                     **(headers or {})},
            # no cookie is kept between requests: a server's Set-Cookie changes nothing netgen sends
            cookies=http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(allowed_domains=[])),
            timeout=httpx.Timeout(connect=self.limits.connect_s, read=self.limits.read_s,
                                  write=self.limits.read_s, pool=self.limits.deadline_s),
        )

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    # --- naming things in messages ----------------------------------------------------------------
    def say(self, text: str) -> str:
        """TEXT with every secret blanked out and no control character left."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return printable(text)

    def shown(self, url: httpx.URL) -> str:
        """URL as a message shows it: the path and query on the configured server, else whole."""
        text = url.raw_path.decode("ascii", "replace") if self.same_origin(url) else str(url)
        return self.say(text)[:EXCERPT_CHARS]

    def failure(self, method: str, url: httpx.URL, reason: str, status: int | None = None) -> ServerError:
        return ServerError(self.say(f"{self.server} at {self.base_text}: {method} {self.shown(url)}: {reason}"), status)

    def excerpt(self, body: bytes) -> str:
        """The server's own words, short and safe to print: a JSON list of per-object errors keeps
        only the objects that have one (Nautobot's bulk answers list every object)."""
        text = body.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            if isinstance(data, list):
                data = {str(index): item for index, item in enumerate(data) if item}
            text = json.dumps(data, ensure_ascii=False)
        return printable(self.say(text), EXCERPT_CHARS) or "(no text)"

    # --- where requests may go --------------------------------------------------------------------
    def same_origin(self, url: httpx.URL) -> bool:
        return origin(url) == origin(self.base) and not url.userinfo

    def url_of(self, target: str, relative_to: httpx.URL | None = None) -> httpx.URL:
        """TARGET (a path under the base URL, or a URL a server gave, resolved against RELATIVE_TO)
        as an absolute URL; any URL off the configured server is refused here, before a request."""
        try:
            if relative_to is None and target.startswith("/"):
                prefix = self.base.raw_path.decode("ascii").rstrip("/")
                url = self.base.copy_with(raw_path=(prefix + target).encode("ascii"))
            else:
                url = (relative_to or self.base).join(target)
        except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
            raise ServerError(self.say(f"{self.server} at {self.base_text}: {target[:EXCERPT_CHARS]!r} is not a"
                                       f" URL ({exc})")) from None
        return url

    # --- requests ---------------------------------------------------------------------------------
    def request(self, method: str, target: str | httpx.URL, content: bytes | None = None,
                headers: Mapping[str, str] | None = None) -> Answer:
        """One request, its answer read whole within the limits; a status other than 2xx, a refused
        redirect or any failure on the way is a `ServerError`."""
        url = target if isinstance(target, httpx.URL) else self.url_of(target)
        self._deadline.at = time.monotonic() + self.limits.deadline_s
        try:
            seen = [url]
            while True:
                answer = self._send(method, url, content, headers)
                if answer.status not in REDIRECT_STATUSES:
                    return answer
                url = self._redirect(method, seen, answer)
        finally:
            self._deadline.at = None

    def request_json(self, method: str, target: str | httpx.URL, body: object = None) -> tuple[Any, httpx.URL]:
        """REQUEST with BODY as JSON; the answer's JSON document (None for an empty answer) and
        the URL it came from."""
        content = None if body is None else json.dumps(body).encode()
        answer = self.request(method, target, content, {"Content-Type": "application/json"})
        return self.decode_json(method, answer), answer.url

    def decode_json(self, method: str, answer: Answer) -> Any:
        if not answer.body.strip():
            return None
        if "json" not in answer.content_type.lower():
            kind = printable(answer.content_type, 60) or "no content type"
            raise self.failure(method, answer.url, f"answered {kind}, not JSON (is {self.base_text} the server's"
                                                   f" base URL?): {self.excerpt(answer.body)}", answer.status)
        try:
            text = answer.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.failure(method, answer.url, f"the answer is not UTF-8 (byte {answer.body[exc.start]:#04x} at"
                                                   f" offset {exc.start})", answer.status) from None
        try:
            return json.loads(text, parse_constant=_no_constant)
        except RecursionError:
            raise self.failure(method, answer.url, "the answer's JSON is nested too deep", answer.status) from None
        except json.JSONDecodeError as exc:
            raise self.failure(method, answer.url, f"the answer is not JSON ({printable(exc.msg, 80)} at line"
                                                   f" {exc.lineno} column {exc.colno})", answer.status) from None
        except ValueError:  # an integer of more digits than Python converts, or NaN / Infinity
            raise self.failure(method, answer.url, "the answer is not JSON netgen reads (a number too long, or"
                                                   " not a number)", answer.status) from None

    def _send(self, method: str, url: httpx.URL, content: bytes | None, headers: Mapping[str, str] | None) -> Answer:
        if not self.same_origin(url):  # the one check every request passes before its credentials go out
            raise self.failure(method, url, f"netgen sends requests only to {self.base_text}")
        request = self._client.build_request(method, url, content=content,
                                             headers={**(headers or {}), **self._secret_headers})
        started = time.monotonic()
        try:
            response = self._client.send(request, stream=True, follow_redirects=False)
            try:
                return self._read(method, url, response)
            finally:
                response.close()
        except httpx.TimeoutException as exc:
            raise self.failure(method, url, self._timed_out(exc, started)) from None
        except httpx.ConnectError as exc:
            raise ServerError(self.say(f"{self.server} at {self.base_text} cannot be reached ({method}"
                                       f" {self.shown(url)}): {_reason(exc)}")) from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
            raise self.failure(method, url, f"the connection failed: {_reason(exc)}") from None

    def _timed_out(self, exc: httpx.TimeoutException, started: float) -> str:
        if self._deadline.at is not None and time.monotonic() >= self._deadline.at - 0.05:
            return (f"no complete answer within {self.limits.deadline_s:g} s (the deadline of one request,"
                    f" {ENVIRONMENT['deadline_s']})")
        if isinstance(exc, httpx.ConnectTimeout):
            return f"no connection within {self.limits.connect_s:g} s ({ENVIRONMENT['connect_s']})"
        if isinstance(exc, httpx.PoolTimeout):
            return f"no free connection after {time.monotonic() - started:.0f} s"
        return f"the server sent nothing for {self.limits.read_s:g} s ({ENVIRONMENT['read_s']})"

    def _read(self, method: str, url: httpx.URL, response: httpx.Response) -> Answer:
        status = response.status_code
        content_type = response.headers.get("content-type", "")
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        ok = 200 <= status < 300
        if ok and encoding not in ("", "identity"):
            raise self.failure(method, url, f"the answer is compressed ({printable(encoding, 40)}) though netgen"
                                            " asked for it uncompressed", status)
        if status in REDIRECT_STATUSES:
            return Answer(status, content_type, b"", url, response.headers.get("location"))
        declared = response.headers.get("content-length", "")
        if ok and declared.isdigit() and int(declared) > self.limits.max_bytes:
            raise self.failure(method, url, self._too_big(int(declared)), status)
        cap = self.limits.max_bytes if ok else ERROR_BODY_BYTES
        body = bytearray()
        for chunk in response.iter_raw():
            body += chunk
            if len(body) > cap:
                if not ok:  # enough of an error answer for its excerpt
                    break
                raise self.failure(method, url, self._too_big(), status)
            if self._deadline.at is not None and time.monotonic() > self._deadline.at:
                raise httpx.ReadTimeout("the request's deadline passed")
        if not ok:
            phrase = printable(response.reason_phrase, 60)
            raise self.failure(method, url, f"answered {status}{' ' + phrase if phrase else ''}:"
                                            f" {self.excerpt(bytes(body))}", status)
        return Answer(status, content_type, bytes(body), url)

    def _too_big(self, declared: int | None = None) -> str:
        size = f" ({_size(declared)})" if declared else ""
        return (f"the answer{size} is larger than netgen reads ({_size(self.limits.max_bytes)},"
                f" {ENVIRONMENT['max_bytes']}): refused")

    def _redirect(self, method: str, seen: list[httpx.URL], answer: Answer) -> httpx.URL:
        """Where a redirect may be followed to: only a GET, only on the configured server, only a
        few times and never back to a URL of the chain; else why not, as a ServerError."""
        current = seen[-1]
        where = (answer.location or "").strip()
        try:
            target = current.join(where) if where else None
        except (httpx.InvalidURL, UnicodeError, ValueError):
            target = None
        said = self.say(str(target) if target is not None else where)[:EXCERPT_CHARS] or "nowhere"
        answered = f"answered {answer.status} with a redirect to {said}"
        if target is None:
            raise self.failure(method, current, f"{answered}, which is not a URL", answer.status)
        if not self.same_origin(target):
            suggestion = self._suggested_base(current, target)
            raise self.failure(method, current, f"{answered}: netgen sends its credentials only to {self.base_text}"
                                                f"; if the server is at {suggestion}, give {self.option} {suggestion}",
                               answer.status)
        if method != "GET":
            raise self.failure(method, current, f"{answered}: netgen does not send a {method} again elsewhere (nor"
                                                f" turn it into a GET); give {self.option} the URL the server wants",
                               answer.status)
        if target in seen:
            raise self.failure(method, current, f"{answered}, a redirect loop", answer.status)
        if len(seen) > self.limits.max_redirects:
            raise self.failure(method, seen[0], f"more than {self.limits.max_redirects} redirects", answer.status)
        seen.append(target)
        return target

    def _suggested_base(self, current: httpx.URL, target: httpx.URL) -> str:
        """The base URL the redirect implies: the target less the part of the path the request
        added to the base (an http -> https redirect suggests the https base)."""
        added = current.raw_path.decode("ascii", "replace")[len(self.base.raw_path.rstrip(b"/")):]
        text = str(target)
        suggested = text[: -len(added)] if added and text.endswith(added) else str(target.copy_with(raw_path=b"/"))
        return self.say(suggested.rstrip("/"))[:EXCERPT_CHARS]


def _size(count: int) -> str:
    return f"{count / MIB:.0f} MiB" if count >= MIB else f"{count:,} bytes"


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return printable(text, EXCERPT_CHARS)


__all__ = ["Answer", "HttpClient", "HttpLimits", "ServerError", "origin", "printable"]
