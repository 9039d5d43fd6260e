"""The report's HTML as netgen writes it, read without a browser: the device table (every switch,
the columns the fabric has values for), netgen's version and build info with nothing that changes
from one build to the next, one inline script allowed by the page's own policy and nothing fetched,
every table in its own scroll box, and untrusted text (names, descriptions) kept as text."""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field, replace
from datetime import date
from html.parser import HTMLParser
from typing import Any

import pytest

import netgen
from netgen.checks import DesignContext, run_checks
from netgen.intent import load_fabric
from netgen.report.build import render_report
from netgen.topology import expand
from netgen.topology.model import Role
from tests.conftest import SMALL, record_drains, run_cli

pytestmark = pytest.mark.render
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
HOSTILE = "<script>document.title='owned'</script><img src=x onerror=alert(1)>&amp;"
SMALL_HEADINGS = ["name", "tier", "zone", "model", "NOS", "ASN", "loopback IPv4", "loopback IPv6", "management",
                  "host ports", "downlinks", "uplinks"]


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    parent: Element | None = None
    children: list[Element | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag: str | None = None) -> list[Element]:
        found = []
        for child in self.children:
            if isinstance(child, Element):
                if tag is None or child.tag == tag:
                    found.append(child)
                found += child.iter(tag)
        return found

    def ancestors(self) -> list[Element]:
        chain, at = [], self.parent
        while at is not None:
            chain.append(at)
            at = at.parent
        return chain

    def by_id(self, id_: str) -> Element:
        (found,) = [e for e in self.iter() if e.attrs.get("id") == id_]
        return found


class _Tree(HTMLParser):
    """The page as an element tree (netgen closes every non-void element it opens)."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.current = Element("#document", {})
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs), self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Element(tag, dict(attrs), self.current))

    def handle_endtag(self, tag: str) -> None:
        assert self.current.tag == tag, f"</{tag}> closes <{self.current.tag}>"
        assert self.current.parent is not None
        self.current = self.current.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


@pytest.fixture(scope="module")
def small() -> tuple[DesignContext, list[Any]]:
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    return ctx, run_checks(ctx)


def _devices(page: Element) -> tuple[list[str], list[list[str]]]:
    table = page.by_id("devices")
    (head,) = table.iter("thead")
    (body,) = table.iter("tbody")
    return [th.text() for th in head.iter("th")], [[td.text() for td in tr.iter("td")] for tr in body.iter("tr")]


def test_every_switch_is_a_row_of_the_device_table_with_a_search_box(small):
    ctx, findings = small
    page = _Tree(render_report(ctx, findings)).root
    headings, rows = _devices(page)
    topology = ctx.topology
    assert headings == SMALL_HEADINGS
    assert [row[0] for row in rows] == list(topology.devices)  # every switch, in the topology's order
    assert page.by_id("devices").attrs["data-rows"] == str(len(topology.devices))
    by_name = {row[0]: dict(zip(headings, row, strict=True)) for row in rows}
    atsw, ctsw, rtsw = (topology.by_role(role)[0] for role in (Role.ATSW, Role.CTSW, Role.RTSW))
    for device in (atsw, ctsw, rtsw):
        assert by_name[device.name] | {"model": "", "NOS": ""} == {
            "name": device.name, "tier": device.role.value, "zone": "-" if device.zone is None else str(device.zone),
            "model": "", "NOS": "", "ASN": str(device.asn), "loopback IPv4": str(device.loopback_ipv4),
            "loopback IPv6": str(device.loopback_ipv6), "management": str(device.mgmt_ipv4),
            "host ports": "16 x 400G" if device is rtsw else "-",
            "downlinks": {"atsw": "8 x 400G", "ctsw": "16 x 400G", "rtsw": "-"}[device.role.value],
            "uplinks": {"atsw": "-", "ctsw": "2 x 400G", "rtsw": "16 x 400G"}[device.role.value]}
        assert (by_name[device.name]["model"], by_name[device.name]["NOS"]) == (device.model, device.nos)

    # the search box: hidden until the script shows it (a page without script still has every row)
    search = page.by_id("device-search")
    assert "hidden" in search.attrs
    (box,) = search.iter("input")
    assert box.attrs["type"] == "search" and box.attrs["aria-controls"] == "devices"
    assert page.by_id("device-count").text() == f"{len(topology.devices)} switches"


def test_a_column_no_switch_has_a_value_for_is_left_out(small):
    from netgen.report.devices import device_table  # noqa: PLC0415  (new in this change: the other tests run without it)

    ctx, _ = small
    topology = replace(ctx.topology, devices={name: replace(d, loopback_ipv6=None, mgmt_ipv4=None)
                                              for name, d in ctx.topology.devices.items()})
    headings = [c.heading for c in device_table(topology).columns]
    assert headings == [h for h in SMALL_HEADINGS if h not in {"loopback IPv6", "management"}]
    some = dict(topology.devices)
    first = next(iter(some))
    some[first] = replace(some[first], mgmt_ipv4=ctx.topology.devices[first].mgmt_ipv4)
    table = device_table(replace(topology, devices=some))
    assert "management" in [c.heading for c in table.columns]
    assert [row[7] for row in table.rows[:2]] == [str(ctx.topology.devices[first].mgmt_ipv4), "-"]


def test_the_page_names_netgens_version_and_holds_nothing_that_changes_between_builds(small):
    ctx, findings = small
    first, second = render_report(ctx, findings), render_report(ctx, findings)
    assert first == second
    page = _Tree(first).root
    version = f"netgen {netgen.__version__}"
    (header,) = page.iter("header")
    (footer,) = page.iter("footer")
    assert [e.text() for e in header.iter("span") if e.attrs.get("class") == "netgen-version"] == [version]
    assert version in footer.text() and ctx.fabric.name in footer.text()
    assert {"name": "generator", "content": version} in [m.attrs for m in page.iter("meta")]
    today = date.today()
    stamps = (today.isoformat(), f"{today:%d %b %Y}", f"{today:%b %d, %Y}", f"{today:%d/%m/%Y}")
    assert not [s for s in stamps if s in first]  # no build date (a finding may quote a revision's date)
    assert str(SMALL.parent) not in first  # nor where the fabric was read from


def test_one_inline_script_runs_by_the_pages_policy_and_nothing_is_fetched(small):
    ctx, findings = small
    html = render_report(ctx, findings)
    page = _Tree(html).root
    (script,) = page.iter("script")
    assert script.attrs == {} and script.parent is not None and script.parent.tag == "body"
    code = script.text()
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|Function\(", code)
    (policy,) = [m.attrs["content"] for m in page.iter("meta") if m.attrs.get("http-equiv") ==
                 "Content-Security-Policy"]
    assert policy is not None
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    assert directives == {"default-src": "'none'", "style-src": "'unsafe-inline'", "script-src": f"'sha256-{digest}'",
                          "base-uri": "'none'", "form-action": "'none'"}
    (head,) = page.iter("head")
    assert [m.tag for m in head.iter()][:2] == ["meta", "meta"]  # the policy right after the charset
    assert not [e for e in page.iter() if {"src", "href", "srcset", "action"} & set(e.attrs)]
    assert not re.search(r"url\(|@import", html)


def test_every_table_scrolls_in_its_own_box_and_the_picture_keeps_readable_text(small):
    ctx, findings = small
    html = render_report(ctx, findings)
    page = _Tree(html).root
    assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in [m.attrs for m in
                                                                                      page.iter("meta")]
    assert re.search(r"@media \(max-width: \d+px\)", html)  # narrow screens: tighter padding
    scrolling = {"scroll", "device-list", "whatif"}  # class, the device list's id, the what-if section's id
    for table in page.iter("table"):
        boxes = {a.attrs.get("class") for a in table.ancestors()} | {a.attrs.get("id") for a in table.ancestors()}
        assert boxes & scrolling, f"table {table.attrs} has no scroll box"
    (svg,) = page.by_id("picture").iter("svg")
    assert svg.parent is not None and svg.parent.attrs.get("class") == "scroll"
    width = int((svg.attrs["viewbox"] or "").split()[2])  # the parser lowercases attribute names
    assert f"min-width: {-(-width * 10 // 12)}px" in (svg.attrs["style"] or "")


def test_untrusted_text_in_the_page_stays_text(small):
    ctx, findings = small
    renamed = next(iter(ctx.topology.devices))
    topology = replace(ctx.topology, devices={**ctx.topology.devices,
                                              renamed: replace(ctx.topology.devices[renamed], name=HOSTILE)})
    hostile = DesignContext(ctx.fabric.model_copy(update={"description": HOSTILE}), ctx.catalog, topology)
    html = render_report(hostile, findings)
    assert HOSTILE not in html and "<img" not in html
    assert ("&lt;script&gt;document.title=&#39;owned&#39;&lt;/script&gt;"
            "&lt;img src=x onerror=alert(1)&gt;&amp;amp;") in html
    page = _Tree(html).root
    assert len(page.iter("script")) == 1 and not page.iter("img")
    assert [p.text() for p in page.iter("p") if p.attrs.get("class") == "description"] == [HOSTILE]
    _, rows = _devices(page)
    assert rows[0][0] == HOSTILE


def test_switches_drained_now_get_a_maintenance_panel_and_lower_the_placement_capacity(small, state_dir):
    """With z01-ctsw01 and z02-ctsw01 drained (the shared drain state's map), the page lists them with
    tier, zone and since when, and its placement panel divides by the ATSW capacity left: each
    zone's load figure 4/3 of the one without drains. Without drains there is no such panel."""
    ctx, findings = small
    plain = _Tree(render_report(ctx, findings)).root
    assert not [s for s in plain.iter("section") if s.attrs.get("id") == "maintenance"]
    page = _Tree(render_report(ctx, findings, {"z01-ctsw01": 0.0, "z02-ctsw01": 60.0})).root
    (panel,) = [s for s in page.iter("section") if s.attrs.get("id") == "maintenance"]
    rows = [[td.text() for td in tr.iter("td")] for tr in panel.iter("tr") if tr.attrs.get("class") == "drained"]
    assert rows == [["z01-ctsw01", "ctsw", "1", "1970-01-01 00:00 UTC"],
                    ["z02-ctsw01", "ctsw", "2", "1970-01-01 00:01 UTC"]]

    def loads(root: Element) -> list[float]:
        (placement,) = [s for s in root.iter("section") if s.attrs.get("id") == "placement"]
        return [float(tr_cells[-1]) for tr_cells in ([td.text() for td in tr.iter("td")] for tr in placement.iter("tr"))
                if len(tr_cells) == 6]

    assert [round(d / p, 3) for d, p in zip(loads(page), loads(plain), strict=True) if p] == [
        round(4 / 3, 3)] * len([p for p in loads(plain) if p])
    # the command reads the fabric's shared drain state; --ignore-drains leaves it out
    record_drains(SMALL, ["z01-ctsw01"])
    assert 'id="maintenance"' in run_cli("report", str(SMALL)).stdout
    assert 'id="maintenance"' not in run_cli("report", str(SMALL), "--ignore-drains").stdout
