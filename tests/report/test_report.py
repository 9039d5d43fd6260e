"""`netgen report` opened in Debian's headless Chromium: the page loads with no console message,
nothing is fetched, a screenshot is taken, and what the page shows (zones, switches per tier, link
matrices, findings) is read from the DOM Chromium built. Then, driven over the DevTools protocol
at a desktop's 1,600 x 1,000 and a phone's 390 x 844: no horizontal page scroll, the device table
and its search, netgen's version, screenshots of both widths."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

import netgen
from netgen.topology.model import Role
from tests.conftest import ROOT, SMALL, run_cli, topology_of
from tests.report import chromium
from tests.report.chromium import DevToolsTab, png_size

pytestmark = pytest.mark.browser
META = ROOT / "inventory" / "meta-24k"
MAX_BYTES = 5 * 1024 * 1024
DESKTOP, PHONE = (1600, 1000), (390, 844)


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
    # nothing fetched, and one inline script (the device search), which the page's policy names
    assert re.findall(r"<script\b[^>]*>", html) == ["<script>"] and "<link" not in html
    assert "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;;" in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", html)

    shot = tmp_path / "report.png"
    done = chromium.run(page, "--window-size=1400,2400", f"--screenshot={shot}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

    dumped = chromium.run(page, "--dump-dom")
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


# Read in the page: the names in the device table's visible rows; the layout at the current width.
VISIBLE_ROWS = "Array.from(document.querySelectorAll('#devices tbody tr:not([hidden])'), r => r.cells[0].textContent)"
LAYOUT = """(() => {
  const svg = document.querySelector('#picture svg');
  const version = document.querySelector('header .netgen-version');
  const box = version.getBoundingClientRect();
  const text = Array.from(document.querySelectorAll('p, td, th, summary, label, input, output'))
    .filter(e => !e.closest('table.matrix'));  // the link matrices: a dense grid by design, small print
  const fonts = text.map(e => parseFloat(getComputedStyle(e).fontSize));
  return {inner: window.innerWidth, scroll: document.documentElement.scrollWidth,
          rows: document.querySelectorAll('#devices tbody tr').length,
          header_version: version.textContent, version_visible: box.width > 0 && box.bottom <= window.innerHeight,
          footer: document.querySelector('footer').textContent,
          smallest_font: Math.min(...fonts),
          svg_text: 12 * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width,
          boxes_inside: Array.from(document.querySelectorAll('.scroll, #device-list'),
                                   e => e.getBoundingClientRect().right <= window.innerWidth).every(Boolean)};
})()"""


@pytest.fixture(scope="module")
def tab():
    with DevToolsTab() as opened:
        yield opened


@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_the_report_reads_at_desktop_and_phone_width_and_its_device_search_filters(fabric, tab, tmp_path):
    page = tmp_path / "report.html"
    assert run_cli("report", str(fabric), "-o", str(page)).exit_code == 0
    topology = topology_of(fabric)
    names = list(topology.devices)
    ctsws = [d.name for d in topology.by_role(Role.CTSW)]
    rtsw = topology.by_role(Role.RTSW)[-1].name
    version = f"netgen {netgen.__version__}"
    tab.events.clear()

    for (width, height), mobile in ((DESKTOP, False), (PHONE, True)):
        tab.viewport(width, height, mobile=mobile)
        tab.open(page)
        layout = tab.evaluate(LAYOUT)
        assert layout["inner"] == width  # laid out at the phone's width: nothing wider made it zoom out
        assert layout["scroll"] <= layout["inner"], f"the page scrolls sideways at {width} px"
        assert layout["boxes_inside"]  # wide tables scroll inside their own box, which fits the screen
        assert layout["smallest_font"] >= 12 and layout["svg_text"] >= 9.9
        assert layout["rows"] == len(names)
        assert layout["header_version"] == version and layout["version_visible"] and version in layout["footer"]
        assert tab.evaluate(VISIBLE_ROWS) == names

        top = tab.screenshot(tmp_path / f"report-{width}.png")
        assert png_size(top) == (width, height)
        tab.evaluate("document.getElementById('switches').scrollIntoView()")
        tab.wait_until("Math.abs(document.getElementById('switches').getBoundingClientRect().top) < 1")
        assert png_size(tab.screenshot(tmp_path / f"switches-{width}.png")) == (width, height)

        # typing narrows the rows (any case, every word must match); clearing brings them all back
        for typed, expected in (("CTSW", ctsws), (rtsw, [rtsw]), (f"{rtsw} ctsw", []), ("no-such-switch", []),
                                ("", names)):
            tab.type_text("#device-filter", typed)
            tab.wait_until(f"{VISIBLE_ROWS}.length === {len(expected)}")
            assert tab.evaluate(VISIBLE_ROWS) == expected
            if typed == "CTSW":
                tab.screenshot(tmp_path / f"switches-{width}-searched.png")
            shown = f"{len(names):,} switches" if not typed else f"{len(expected):,} of {len(names):,} switches"
            assert tab.evaluate("document.getElementById('device-count').textContent") == shown

        # markup typed into the search stays text: nothing is added to the page, nothing runs
        elements = tab.evaluate("document.getElementsByTagName('*').length")
        tab.type_text("#device-filter", "<img src=x onerror=document.title='owned'>")
        tab.wait_until(f"{VISIBLE_ROWS}.length === 0")
        assert tab.evaluate("document.getElementsByTagName('*').length") == elements
        assert tab.evaluate("document.title") == f"netgen report: {topology.fabric}"
        tab.type_text("#device-filter", "")
        tab.wait_until(f"{VISIBLE_ROWS}.length === {len(names)}")

    assert tab.console() == []  # no message of any level: no script error, no policy violation
    assert set(tab.requests()) == {page.as_uri()}  # the page itself, nothing else
