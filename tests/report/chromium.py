"""Debian's headless Chromium for the browser tier: one-shot runs (`run`: --dump-dom, --screenshot)
and a tab driven over the DevTools protocol (`DevToolsTab`: viewport, JS evaluation, typing,
screenshots). The protocol goes over a pipe (--remote-debugging-pipe: Chromium reads commands on
its fd 3 and writes replies and events on its fd 4, each one JSON text ended by a NUL byte), so no
port is opened and no client library is needed.

Nothing here waits a fixed time: a reply or event is read when Chromium writes it, and a page
condition is awaited in the page (a promise that resolves when it holds); DEADLINE_S only bounds
a browser that stopped answering."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

DEADLINE_S = 120.0
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-background-networking",
         "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium (Debian: apt-get install chromium)")
    raise AssertionError  # pragma: no cover


def run(page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One headless run on `page` (e.g. --dump-dom, --screenshot=FILE), its log on stderr."""
    return subprocess.run([chromium(), *FLAGS, "--enable-logging=stderr", "--v=0", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=DEADLINE_S, check=False)


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", "not a PNG"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


class DevToolsError(AssertionError):
    pass


class DevToolsTab:
    """One Chromium page over the DevTools protocol. Use as a context manager; `events` keeps every
    event of the page's session (console messages, exceptions, log entries, network requests)."""

    def __init__(self, profile: Path | None = None) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-") if profile is None else None
        profile_dir = Path(self._profile.name) if self._profile else profile
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()
        # the pipe ends must be fd 3 and 4 in Chromium: moved above both first, so that one of them
        # being 3 or 4 already cannot be overwritten by the other's dup2
        high = max(commands_read, replies_write, 4) + 1
        commands_high = fcntl.fcntl(commands_read, fcntl.F_DUPFD_CLOEXEC, high)
        replies_high = fcntl.fcntl(replies_write, fcntl.F_DUPFD_CLOEXEC, high)
        os.close(commands_read)
        os.close(replies_write)

        def as_fds_3_and_4() -> None:
            os.dup2(commands_high, 3)
            os.dup2(replies_high, 4)

        self._log = profile_dir / "chromium.log"
        with self._log.open("wb") as log:
            self.process = subprocess.Popen(
                [chromium(), *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile_dir}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                pass_fds=(3, 4), preexec_fn=as_fds_3_and_4)  # noqa: PLW1509  (no threads start Chromium here)
        os.close(commands_high)
        os.close(replies_high)
        self._buffer = b""
        self._next_id = 0
        self._backlog: list[dict[str, Any]] = []  # events read while waiting for a reply
        self.events: list[dict[str, Any]] = []
        try:
            targets = self._call("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            self.session = self._call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable")
        except BaseException:
            self.close()
            raise

    # --- protocol ---

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._replies], [], [], DEADLINE_S)
            if not ready:
                raise DevToolsError(f"Chromium wrote nothing for {DEADLINE_S:.0f} s")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise DevToolsError(f"Chromium closed the pipe: {self._log.read_text(errors='replace')[-2000:]}")
            self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(text)
        return message

    def _call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            command["sessionId"] = session
        os.write(self._commands, json.dumps(command).encode() + b"\0")
        while True:
            message = self._read()
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message and message.get("sessionId") == getattr(self, "session", None):
                self._backlog.append(message)
                self.events.append(message)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """A command to the page's session."""
        return self._call(method, self.session, **params)

    def wait_for_event(self, method: str) -> dict[str, Any]:
        for index, event in enumerate(self._backlog):
            if event["method"] == method:
                del self._backlog[: index + 1]
                return event
        self._backlog.clear()
        while True:
            message = self._read()
            if message.get("sessionId") == self.session and "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message

    # --- what a test does ---

    def viewport(self, width: int, height: int, *, mobile: bool) -> None:
        """The window's CSS size; `mobile` also honours the page's viewport meta, as a phone does."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=mobile)

    def open(self, page: Path) -> None:
        """Navigate and return once the load event fired (every inline script has run)."""
        self._backlog.clear()
        self.call("Page.navigate", url=page.as_uri())
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """A JS expression's value (a promise is awaited), or DevToolsError with the page's exception."""
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True,
                          userGesture=True)
        if "exceptionDetails" in reply:
            raise DevToolsError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_until(self, condition: str) -> None:
        """Resolve in the page once the JS expression `condition` is truthy (checked every frame)."""
        self.evaluate(f"new Promise((resolve) => {{ const check = () => ({condition}) ? resolve(true)"
                      " : requestAnimationFrame(check); check(); })")

    def type_text(self, selector: str, text: str) -> None:
        """Focus the element, select what is in it, and type `text` over it as a user would
        (an input event per insertion, as a keyboard's)."""
        self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.focus();"
                      " e.select(); })()")
        if text:
            self.call("Input.insertText", text=text)
        else:
            for kind in ("rawKeyDown", "keyUp"):
                self.call("Input.dispatchKeyEvent", type=kind, key="Backspace", code="Backspace",
                          windowsVirtualKeyCode=8)

    def screenshot(self, path: Path) -> bytes:
        """The viewport as a PNG, written to `path`."""
        png = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path.write_bytes(png)
        return png

    def console(self) -> list[dict[str, Any]]:
        """Every console message, uncaught exception and browser log entry (CSP, network) so far."""
        kinds = {"Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded"}
        return [e for e in self.events if e["method"] in kinds]

    def requests(self) -> list[str]:
        """URLs the page asked for, in order."""
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    # --- lifetime ---

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                os.write(self._commands, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                self.process.wait(timeout=DEADLINE_S)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        os.close(self._commands)
        os.close(self._replies)
        if self._profile:
            self._profile.cleanup()

    def __enter__(self) -> DevToolsTab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
