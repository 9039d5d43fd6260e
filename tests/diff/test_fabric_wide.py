"""Issue 33: a fabric-wide one-line change on meta-24k (1,692 switches) reads as one: the intent's
own change (YAML path, old -> new, file and line), a risk flag with its reach by tier, the effect
as patterns with counts, and device detail folded below, all in at most 80 lines of markdown; the
JSON has every pattern and device with the same counts, without a copy per port.

Each revision of a scratch repository (netgen, its templates and meta-24k as shipped; one commit per
change) is rendered once, by its own netgen, two at a time, and shared by the tests: the base, an MTU
change, a DSCP-map change and a buffer-threshold change (the RTSWs' lossless alpha)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from netgen.diff.device_diff import RevisionDiff, compare
from netgen.diff.format import as_markdown, as_text
from netgen.diff.git_export import export_revision
from netgen.diff.intent_diff import intent_changes
from netgen.diff.revisions import _whole_trees
from tests.conftest import ROOT

pytestmark = pytest.mark.render
FABRIC = "inventory/meta-24k/fabric.yaml"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.net", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.net"}
# each a one-line edit of meta-24k's fabric file, as a pull request would make it
CHANGES = {
    "mtu": ("mtu: 9100\n", "mtu: 9000\n"),
    "dscp": ("qos:\n", "qos:\n  lossless: {dscp: [24]}\n"),
    "buffer": ("  rtsw: {mode: shared}", "  rtsw: {mode: shared, dynamic_th: -1}"),
}
EVERY_TIER = "(rtsw 1,536, ctsw 128, atsw 28)"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, env={**os.environ, **GIT_ENV})


@dataclass(frozen=True)
class Case:
    diff: RevisionDiff
    markdown: str
    doc: dict  # the JSON form, as `netgen diff --json` writes it (less `ok` and `exit_code`)
    size: int  # its bytes


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Case]:
    top = tmp_path_factory.mktemp("fabric-wide")
    repo = top / "repo"
    for part in ("netgen", "templates"):
        shutil.copytree(ROOT / part, repo / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "inventory" / "meta-24k", repo / "inventory" / "meta-24k")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "tag", "base")
    text = (repo / FABRIC).read_text()
    for name, (old, new) in CHANGES.items():  # each commit: the base with one line changed
        assert text.count(old) == 1, name
        (repo / FABRIC).write_text(text.replace(old, new))
        git(repo, "commit", "-q", "-am", name)
        git(repo, "tag", name)
    roots = {}
    for name in ("base", *CHANGES):
        roots[name] = top / name
        roots[name].mkdir()
        export_revision(repo, name, roots[name])
    (top / "one").mkdir()
    (top / "two").mkdir()
    base, mtu, _, (roles, zones) = _whole_trees(roots["base"], roots["mtu"], FABRIC, top / "one")
    dscp, buffer, _, _ = _whole_trees(roots["dscp"], roots["buffer"], FABRIC, top / "two")
    out = {}
    for name, head in (("mtu", mtu), ("dscp", dscp), ("buffer", buffer)):
        intent = intent_changes(repo, roots["base"], roots[name], FABRIC, "base", name)
        diff = compare(base, head, "base", name, FABRIC, roles, zones, None, intent)
        text = json.dumps(diff.as_dict())
        out[name] = Case(diff, as_markdown(diff), json.loads(text), len(text.encode()))
    return out


def _row(markdown: str, starts: str) -> str:
    (row,) = [line for line in markdown.splitlines() if line.startswith(starts)]
    return row


def _pattern(doc: dict, summary: str) -> dict:
    (found,) = [p for p in doc["patterns"] if p["summary"] == summary]
    return found


def test_an_mtu_change_on_every_switch_reads_in_80_lines_with_its_risk(cases):
    case = cases["mtu"]
    markdown = case.markdown
    assert len(markdown.splitlines()) <= 80, len(markdown.splitlines())
    assert markdown.startswith(f"### netgen: 1,692 device(s) change {EVERY_TIER}")
    assert "| `inventory/meta-24k/fabric.yaml:9` | `mtu` | `9100` | `9000` |" in markdown
    # every SONiC port and VLAN, every EOS interface: 1,536 x 131 + 128 x 220 + 28 x 128
    assert f"> **Risk:** MTU change on 1,692 device(s) {EVERY_TIER}: 232,960 place(s)" in markdown
    row = _row(markdown, "| `mtu` `9100` → `9000` |")
    assert "| 232,960 | 1,692: every switch |" in row
    assert "`CONFIG_DB PORT.mtu: Ethernet0..Ethernet512 step 4, Ethernet513` (199,680)" in row
    assert "`EOS interface: Ethernet3/1/1..Ethernet3/36/1," in row and "(31,744)" in row
    # the device detail: one block per distinct change (every ATSW, every CTSW, every RTSW)
    assert markdown.count("<details>") == 3
    assert "<summary>1,536 devices (1,536 rtsw in zones 1-8): changed, +131 -131 each</summary>" in markdown
    assert "~ PORT|*.mtu: 9100 -> 9000  (130 keys: Ethernet0..Ethernet512 step 4, Ethernet513)" in markdown


def test_the_mtu_changes_json_has_every_place_once_with_the_same_counts(cases):
    doc, size = cases["mtu"].doc, cases["mtu"].size
    assert size < 2_000_000, size  # 54 MB before: each port's change, once in its device's diff and once as a patch
    (flag,) = doc["risk_flags"]
    assert flag == {"flag": "mtu", "says": "MTU", "devices": 1692, "tiers": {"rtsw": 1536, "ctsw": 128, "atsw": 28},
                    "places": 232960, "device_names": flag["device_names"]}
    port = _pattern(doc, "CONFIG_DB PORT.mtu")
    assert (port["count"], port["device_count"], port["old"], port["new"]) == (199_680, 1536, ["9100"], ["9000"])
    every_rtsw = ", ".join(f"z0{z}-rtsw001..z0{z}-rtsw192" for z in range(1, 9))
    assert port["places"] == [{"devices": every_rtsw, "device_count": 1536, "count": 130,
                               "names": "Ethernet0..Ethernet512 step 4, Ethernet513"}]
    assert sum(p["count"] for p in doc["patterns"]) == 232_960
    assert len(doc["devices"]) == 1692 and {d["tier"] for d in doc["devices"]} == {"rtsw", "ctsw", "atsw"}
    assert sum(row["added"] for row in doc["summary"].values()) == 232_960
    atsw = next(d for d in doc["devices"] if d["device"] == "atsw01")
    assert atsw["files"]["atsw01.cfg"][1:] == ["-   mtu 9100", "+   mtu 9000"]
    assert atsw["files"]["atsw01.cfg"][0].startswith("@@ 128 x interface: Ethernet3/1/1..Ethernet3/36/1, ")
    assert doc["intent"]["changes"] == [{"file": FABRIC, "path": "mtu", "kind": "change", "old": "9100",
                                         "new": "9000", "line": 9, "paths": 1}]


def test_a_dscp_map_change_reads_in_80_lines_with_the_qos_flag(cases):
    case = cases["dscp"]
    markdown, doc = case.markdown, case.doc
    assert len(markdown.splitlines()) <= 80, len(markdown.splitlines())
    assert "| `qos.lossless` | — | `{\"dscp\": [24]}` |" in markdown  # the fabric had no lossless: section
    says = f"QoS maps and scheduling (DSCP, traffic class, queue, DWRR) change on 1,692 device(s) {EVERY_TIER}"
    assert f"> **Risk:** {says}: 3,384 place(s)" in markdown  # two DSCP entries or lines on each switch
    assert "| `DSCP_TO_TC_MAP.24` `0` → `3` | 1,536 | 1,536: every rtsw |" in markdown
    assert "| `qos map dscp …` `26` → `24` | 156 | 156: every ctsw and atsw |" in markdown
    (flag,) = doc["risk_flags"]
    assert (flag["flag"], flag["devices"], flag["places"]) == ("qos-maps", 1692, 3384)
    field = _pattern(doc, "CONFIG_DB DSCP_TO_TC_MAP.26")
    assert (field["old"], field["new"], field["count"], field["places"][0]["names"]) == (["3"], ["0"], 1536, "AZURE")
    assert case.size < 1_000_000


def test_a_buffer_threshold_change_reads_in_80_lines_with_the_buffer_flag(cases):
    case = cases["buffer"]
    markdown, doc = case.markdown, case.doc
    assert len(markdown.splitlines()) <= 80, len(markdown.splitlines())
    assert re.search(r"\| `inventory/meta-24k/fabric.yaml:60` \| `buffers.rtsw.dynamic_th` \| — \| `-1` \|", markdown)
    assert "> **Risk:** buffer pools, profiles or thresholds change on 1,536 device(s) (rtsw 1,536): 3,072 place(s)" \
        in markdown
    assert "| `dynamic_th` `0` → `-1` | 3,072 | 1,536: every rtsw |" in markdown
    (flag,) = doc["risk_flags"]
    assert (flag["flag"], flag["devices"], flag["tiers"], flag["places"]) == ("buffers", 1536, {"rtsw": 1536}, 3072)
    (pattern,) = doc["patterns"]
    assert pattern["summary"] == "CONFIG_DB BUFFER_PROFILE.dynamic_th" and pattern["count"] == 3072
    assert [len(g["devices"]) for g in doc["groups"]] == [1536]


def test_the_text_form_leads_with_the_same_summary(cases):
    text = as_text(cases["mtu"].diff)
    assert len(text.splitlines()) <= 80
    assert "  inventory/meta-24k/fabric.yaml:9  mtu: 9100 -> 9000" in text
    assert f"RISK: MTU change on 1,692 device(s) {EVERY_TIER}: 232,960 place(s)" in text
