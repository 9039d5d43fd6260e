"""`netgen report` opened in Debian's headless Chromium: the page loads with no console message,
nothing is fetched, a screenshot is taken, and what the page shows (zones, switches per tier, link
matrices, findings) is read from the DOM Chromium built."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import ROOT, SMALL, run_cli

pytestmark = pytest.mark.browser
META = ROOT / "inventory" / "meta-24k"
MAX_BYTES = 5 * 1024 * 1024


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium (Debian: apt-get install chromium)")
    raise AssertionError  # pragma: no cover


def _browser(page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", "--disable-background-networking",
                           "--no-first-run", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == tag and all(a.get(k.replace("_", "-")) == v
                                                                 for k, v in attrs.items())]


@pytest.mark.parametrize(("fabric", "zones", "tiers", "rows"),
                         [(SMALL, 2, {"rtsw": 8, "ctsw": 8, "atsw": 2}, 4),
                          (META, 8, {"rtsw": 1536, "ctsw": 128, "atsw": 28}, 192)], ids=["small", "meta-24k"])
def test_the_report_loads_in_chromium_and_shows_the_fabric(fabric, zones, tiers, rows, tmp_path):
    page = tmp_path / "report.html"
    result = run_cli("report", str(fabric), "-o", str(page), "--json")
    assert result.exit_code == 0, result.output
    size = json.loads(result.stdout)["bytes"]
    assert size == page.stat().st_size < MAX_BYTES
    html = page.read_text()
    assert "<script" not in html and "<link" not in html  # nothing to run, nothing to fetch
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", html)

    shot = tmp_path / "report.png"
    done = _browser(page, "--window-size=1400,2400", f"--screenshot={shot}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

    dumped = _browser(page, "--dump-dom")
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    assert "CONSOLE" not in dumped.stderr, dumped.stderr  # no console message of any level
    dom = _Dom()
    dom.feed(dumped.stdout)
    (main,) = dom.find("main", id="report")
    assert main["data-zones"] == str(zones) and main["data-errors"] == "0"
    assert main["data-devices"] == str(sum(tiers.values()))
    assert len(dom.find("g", **{"class": "zone"})) == zones
    assert {a["data-tier"]: int(a["data-devices"] or 0) for a in dom.find("tr") if "data-tier" in a} == tiers
    matrices = [a for t, a in dom.elements if t == "details" and a.get("class") == "matrix-zone"]
    assert len(matrices) == zones and {m["data-rows"] for m in matrices} == {str(rows)}
    assert {m["data-off"] for m in matrices} == {"0"}  # every RTSW-CTSW pair has the intent's link count
    findings = [a for t, a in dom.elements if t == "tr" and a.get("class") == "finding"]
    assert len(findings) == int(main["data-warnings"] or 0)


def test_a_fabric_with_design_errors_gets_its_report_and_exit_1(small_data, write_fabric, tmp_path):
    small_data["zones"][0]["links_per_rtsw_ctsw"] = 2  # uplinks 3.2T < NICs 6.4T: NG101
    page = tmp_path / "report.html"
    result = run_cli("report", str(write_fabric(small_data)), "-o", str(page))
    assert result.exit_code == 1
    html = page.read_text()
    assert 'data-code="NG101"' in html and "uplinks 3.2T &lt; NICs 6.4T" in html  # escaped, not markup
