"""The pieces of issue 33's review comment, each on its own: the line diff, the config sections an
edit sits in, name ranges, the intent's own changes read from two revisions' trees, and a comment
that nothing taken from a revision can add a line, a table cell or markup to."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.diff.device_diff import compare
from netgen.diff.edits import _opener, _sections
from netgen.diff.format import as_markdown, as_text
from netgen.diff.grouping import name_ranges
from netgen.diff.intent_diff import intent_changes
from netgen.diff.linediff import opcodes

pytestmark = pytest.mark.render

lines = st.lists(st.sampled_from(["!", "! c", "", "a", " b", "  c", "   d", " ! x", "x 1", "mtu 9100"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(a=lines, b=lines)
def test_opcodes_turn_a_into_b_and_keep_as_many_lines_as_difflib_nearly(a, b):
    codes = opcodes(a, b)
    rebuilt, i, j = [], 0, 0
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        rebuilt += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b)) and rebuilt == b
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag == "equal")
    assert (kept == len(a) == len(b)) == (a == b)


def test_a_change_in_every_interface_is_one_replaced_line_per_interface():
    old = [line for n in range(300) for line in (f"interface Ethernet{n}", f"   description peer{n}", "   mtu 9100",
                                                 "   no switchport", "!")]
    new = [line.replace("9100", "9000") for line in old]
    codes = [code for code in opcodes(old, new) if code[0] != "equal"]
    assert len(codes) == 300 and all(tag == "replace" and i2 - i1 == 1 for tag, i1, i2, _, _ in codes)
    reference = [c for c in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if c[0] != "equal"]
    assert codes == reference


@settings(max_examples=300, deadline=None)
@given(text=lines)
def test_walking_up_finds_the_section_the_one_pass_finds(text):
    parents = _sections(text)
    for index in range(len(text)):
        found = _opener(text, index)
        assert found is None or found == parents[index]


def test_name_ranges():
    assert name_ranges([f"Ethernet{n}" for n in range(0, 513, 4)] + ["Ethernet513"]) == \
        "Ethernet0..Ethernet512 step 4, Ethernet513"
    assert name_ranges([f"Ethernet{p}|{q}" for p in range(0, 64, 8) for q in (0, 3)]) == \
        "Ethernet0|0..Ethernet56|0 step 8, Ethernet0|3..Ethernet56|3 step 8"
    assert name_ranges(["x9", "x010", "x011", "x012"]) == "x9, x010..x012"  # another width, another series
    assert name_ranges(["a1", "a2", "b", "c"], limit=2) == "a1, a2, … 2 more"
    assert name_ranges(["x1", "x2", "x4", "x6", "x8"]) == "x1, x2..x8 step 2"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_intent_diff_names_path_values_file_and_line_and_reads_nothing_outside(tmp_path):
    (tmp_path / "outside.yaml").write_text("models: {secret-model: {port_count: 1}}\n")
    zone = "zones:\n  - &z {id: 1, racks: 4}\n  - {<<: *z, id: 2}\n  - {<<: *z, id: 3}\n"
    base = _tree(tmp_path / "base", {"f/fabric.yaml": f"name: a\nmtu: 9100\n{zone}catalog: ../../outside.yaml\n"})
    head = _tree(tmp_path / "head", {"f/fabric.yaml": "name: a\nmtu: 9000\n" + zone.replace("racks: 4", "racks: 5")
                                     + "bgp: {password: {file: pw}}\ncatalog: ../../outside.yaml\n"})
    found = intent_changes(tmp_path, base, head, "f", "HEAD", None)  # not a repository: no other files
    assert found.files == ["f/fabric.yaml"]  # its catalog is outside the tree (and neither has a built-in one)
    assert found.problems == [f"../outside.yaml at the {side}: outside the revision's tree, not read"
                              for side in ("base", "head")]
    rows = [(c.path, c.kind, c.old, c.new, c.line, c.paths) for c in found.changes]
    assert rows == [("mtu", "change", "9100", "9000", 2, 1),
                    ("zones[0..2].racks", "change", "4", "5", 4, 3),  # the anchor's line, for every alias
                    ("bgp", "add", None, '{"password": "***"}', 7, 1)]  # what a key calls a password: not shown


def _outside_code(markdown: str) -> list[str]:
    """The lines of `markdown` outside fenced code blocks (CommonMark: a fence of N backticks ends
    at a line of N or more backticks alone)."""
    outside, fence = [], ""
    for line in markdown.splitlines():
        if fence:
            if line.strip() and set(line.strip()) == {"`"} and len(line.strip()) >= len(fence):
                fence = ""
            continue
        if line.startswith("```"):
            fence = line[:len(line) - len(line.lstrip("`"))]
            continue
        outside.append(line)
    assert not fence, "a code block left open"
    return outside


def test_nothing_from_a_revision_adds_a_line_or_markup_to_the_comment():
    evil = "z01-rtsw001</summary>|`x`"
    line = "description ```\n</details>\x1b[31m| injected |"  # two lines of the file: the fence, then markup
    base = {evil: {"a.cfg": "hostname x\n"}, "b": {"b.cfg": "mtu 9100\n"}}
    head = {evil: {"a.cfg": f"hostname x\n{line}\n"}, "b": {"b.cfg": "mtu 9000\n"}}
    diff = compare(base, head, "base", "head", "f.yaml")
    markdown = as_markdown(diff)
    assert "\x1b" not in markdown
    outside = _outside_code(markdown)
    assert [x for x in outside if "details>" in x or "summary>" in x] == [
        "<details><summary>b: changed, +1 -1</summary>", "</details>",
        "<details><summary>z01-rtsw001&lt;/summary&gt;|`x`: changed, +2 -0</summary>", "</details>"]
    assert not any("injected" in x for x in outside)
    text = as_text(diff)
    assert "\x1b" not in text and "\\x1b[31m" in text
    json.dumps(diff.as_dict())
