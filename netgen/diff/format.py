"""A revision diff laid out for people: plain text for a terminal (as_text) and a pull-request
comment in Markdown (as_markdown). Both lead with the summary: what changed in the intent (YAML
path, old -> new, file and line), the risk flags with the devices they reach by tier, and the
effect as patterns (the same edit on many places is one row, with counts and name ranges); then
each distinct change once, with the devices it reaches, limited (the JSON form has everything).

Everything taken from a revision (values, file names, device names, config lines) is untrusted:
control characters are escaped (safe_text.visible) so that nothing can add a line, table cells
and names are escaped for Markdown and HTML, and code blocks are fenced longer than any run of
backticks they hold.
"""

from __future__ import annotations

import html
import re

from netgen.diff.device_diff import RevisionDiff
from netgen.diff.grouping import device_ranges, name_ranges
from netgen.diff.intent_diff import IntentChange, IntentDiff
from netgen.diff.patterns import ChangeGroup, Row, file_label, rows_of, tier_counts
from netgen.safe_text import visible

GITHUB_COMMENT_LIMIT = 65536
MAX_INTENT_ROWS = 12
MAX_EFFECT_ROWS = 12
MAX_PLACES_PER_ROW = 3  # pattern places named in an effect row
MAX_NAME_RUNS = 4  # runs of names in a place list
MAX_VALUE = 60  # characters of a value in a table cell
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|#<>&~])")


# --- escaping ---------------------------------------------------------------------------------
def _plain(text: str, limit: int | None = None) -> str:
    """Untrusted text as Markdown text: one line, no markup, no HTML."""
    return _MARKDOWN_SPECIAL.sub(lambda m: html.escape(m.group()) if m.group() in "<>&" else "\\" + m.group(),
                                 visible(text, limit))


def _code(text: str, limit: int | None = MAX_VALUE) -> str:
    """Untrusted text as an inline code span that stays inside a table cell."""
    shown = visible(text, limit).replace("|", "\\|")
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", shown)), default=0) + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def _fenced(lines: list[str], kind: str) -> list[str]:
    shown = [visible(line) for line in lines]
    fence = "`" * max(3, 1 + max((len(run) for line in shown for run in re.findall(r"`+", line)), default=0))
    return [f"{fence}{kind}", *shown, fence]


# --- summary ----------------------------------------------------------------------------------
def _value(value: str | None) -> str:
    return "—" if value is None else _code(value)


def _intent_rows(intent: IntentDiff, markdown: bool) -> list[str]:
    changes = intent.changes
    out: list[str] = []
    if changes and markdown:
        out += ["**What changed in the intent**", "", "| file:line | YAML path | old | new |", "|---|---|---|---|"]
    elif changes:
        out.append("intent:")
    for change in changes[:MAX_INTENT_ROWS]:
        out.append(_intent_row(change, markdown))
    if len(changes) > MAX_INTENT_ROWS:
        left = f"… {len(changes) - MAX_INTENT_ROWS} more intent change(s) (`netgen diff --json` lists them all)"
        out.append(f"| {left} | | | |" if markdown else f"  {left}")
    others = ""
    if intent.other_count:
        named = ", ".join(intent.others[:5]) + (", …" if intent.other_count > 5 else "")
        others = f"{intent.other_count} other file(s) differ (code, templates): {named}"
    if not changes and not others:
        others = "no change in the fabric's files or anything else tracked"
    if others:
        out += (["", _plain(others, 400)] if markdown else [f"  {visible(others, 400)}"])
    for problem in intent.problems[:3]:
        out += ["", f"Not compared: {_plain(problem, 300)}"] if markdown else [f"  not compared: {visible(problem)}"]
    return out


def _intent_row(change: IntentChange, markdown: bool) -> str:
    where = f"{change.file}:{change.line}" if change.line else change.file
    path = change.path + (f" ({change.paths} places)" if change.paths > 1 else "")
    if markdown:
        return f"| {_code(where, 120)} | {_code(path, 120)} | {_value(change.old)} | {_value(change.new)} |"
    old, new = (visible(v, MAX_VALUE) if v is not None else "(none)" for v in (change.old, change.new))
    return f"  {visible(where)}  {visible(path)}: {old} -> {new}"


def _reach(devices: list[str], diff: RevisionDiff, every: dict[str, int]) -> str:
    """`1,692: every switch`, `1,536: rtsw` (every RTSW), or `14: rtsw 4, ctsw 8, atsw 2`."""
    counts = tier_counts(devices, diff.roles)
    if counts == every:
        return f"{len(devices):,}: every switch"
    if all(count == every.get(tier) for tier, count in counts.items()):
        return f"{len(devices):,}: every " + " and ".join(counts)
    return f"{len(devices):,}: " + ", ".join(f"{tier} {count:,}" for tier, count in counts.items())


def _row_change(row: Row, markdown: bool) -> str:
    """What a row changes: `name` `old` → `new`, or the first line that goes and the first that
    comes (how many more)."""
    def quote(text: str) -> str:
        return _code(text) if markdown else visible(text, MAX_VALUE)

    if row.what is not None:
        name, old, new = row.what
        return f"{quote(name)} {quote(old)} → {quote(new)}"
    shape = row.patterns[0].shape
    old, new = (lines[0].strip() + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "") if lines else ""
                for lines in (shape.old, shape.new))
    if shape.kind == "add":
        return f"+ {quote(new)}"
    if shape.kind == "remove":
        return f"- {quote(old)}"
    return f"{quote(old)} → {quote(new)}"


def _row_where(row: Row, markdown: bool) -> str:
    """Where a row's edits are, file and section by file and section: the places' names (a few
    runs of them) and how many."""
    places: dict[str, tuple[list[str], int]] = {}
    for pattern in row.patterns:
        shape = pattern.shape
        label = file_label(shape) + (f" [custom_config {shape.note}]" if shape.note else "")
        names, count = places.get(label, ([], 0))
        places[label] = (names + [n for n in pattern.names() if n], count + pattern.count)
    parts = []
    for label, (names, count) in list(places.items())[:MAX_PLACES_PER_ROW]:
        listed = label + (f": {name_ranges(names, MAX_NAME_RUNS)}" if names else "")
        parts.append(f"{_code(listed, 240) if markdown else visible(listed, 240)} ({count:,})")
    if len(places) > MAX_PLACES_PER_ROW:
        parts.append(f"{len(places) - MAX_PLACES_PER_ROW} more")
    return "; ".join(parts)


def _effect_rows(diff: RevisionDiff, markdown: bool) -> list[str]:
    patterns = diff.patterns()
    rows = rows_of(patterns)
    every = tier_counts(diff.roles, diff.roles)
    out = ([f"**Effect**: {len(patterns):,} distinct edit(s)", "", "| change | places | devices | where |",
            "|---|---:|---|---|"] if markdown else [f"effect: {len(patterns):,} distinct edit(s)"])
    for row in rows[:MAX_EFFECT_ROWS]:
        reach = _reach(row.devices, diff, every)
        if markdown:
            out.append(f"| {_row_change(row, True)} | {row.count:,} | {reach} | {_row_where(row, True)} |")
        else:
            out.append(f"  {_row_change(row, False)}: {row.count:,} place(s) on {reach}; {_row_where(row, False)}")
    if len(rows) > MAX_EFFECT_ROWS:
        left = f"… {len(rows) - MAX_EFFECT_ROWS} more row(s) (`netgen diff --json` has every pattern)"
        out.append(f"| {left} | | | |" if markdown else f"  {left}")
    return out


def _risk_lines(diff: RevisionDiff, markdown: bool) -> list[str]:
    return [f"> **Risk:** {_plain(flag)}" if markdown else f"RISK: {flag}" for flag in diff.risks()]


# --- the forms --------------------------------------------------------------------------------
def _each(group: ChangeGroup) -> str:
    return f"+{group.added:,} -{group.removed:,}" + (" each" if len(group.devices) > 1 else "")


def as_text(diff: RevisionDiff, max_lines: int = 400) -> str:
    """Summary (intent, risks, effect, tiers) first, then each distinct change once with the
    devices it reaches (file names show the device as {device} where a group has several)."""
    if not diff.changed:
        return f"no changes: {visible(diff.fabric)} renders identically at {diff.base} and {diff.head}\n"
    groups = diff.groups()
    out = [f"{visible(diff.fabric)}: {diff.base} -> {diff.head}: {len(diff.devices):,} device(s) change"
           f" ({len(groups):,} distinct change(s))"]
    out += _intent_rows(diff.intent, False) if diff.intent is not None else []
    out += [f"  {visible(tier)}: {row['devices']:,} device(s), +{row['added']:,} -{row['removed']:,}"
            for tier, row in diff.per_tier().items()]
    out += _risk_lines(diff, False)
    out += _effect_rows(diff, False)
    for group in groups:
        names = "" if len(group.devices) == 1 else f": {visible(device_ranges(group.devices))}"
        out.append(f"=== {visible(diff.label(group))} ({group.kind}, {_each(group)}){names}")
        for name, lines in group.files(MAX_NAME_RUNS * 4).items():
            out.append(f"--- {visible(name)}")
            out += [visible(line) for line in lines[:max_lines]]
            if len(lines) > max_lines:
                out.append(f"... {len(lines) - max_lines} more lines (netgen diff --json has them all)")
    return "\n".join(out) + "\n"


def as_markdown(diff: RevisionDiff, max_lines: int = 20, budget: int = 60000, max_detail_lines: int = 150) -> str:
    """A pull-request comment: the summary (intent changes, risk flags, effect patterns, tiers),
    then each distinct change once, folded, with the devices it reaches: at most `max_lines` lines
    of each file, `max_detail_lines` in all and `budget` characters (GitHub's comment limit is
    65,536), what is cut said, the JSON form having everything."""
    if not diff.changed:
        return (f"### netgen: no config changes\n{_code(diff.fabric, 200)} renders identically at "
                f"{_plain(diff.base)} and {_plain(diff.head)}.\n")
    groups = diff.groups()
    tiers = ", ".join(f"{_plain(tier)} {count:,}" for tier, count in
                      tier_counts((d.device for d in diff.devices), diff.roles).items())
    head = [f"### netgen: {len(diff.devices):,} device(s) change ({tiers}), {len(groups):,} distinct change(s)", "",
            f"{_code(diff.fabric, 200)}: {_plain(diff.base)} → {_plain(diff.head)}", ""]
    if diff.intent is not None:
        head += [*_intent_rows(diff.intent, True), ""]
    risks = _risk_lines(diff, True)
    head += [*risks, ""] if risks else []
    head += [*_effect_rows(diff, True), "", "**By device**: each distinct change once, with the devices it reaches", ""]
    text = "\n".join(head) + "\n"
    detail = 0
    for shown, group in enumerate(groups):
        block = _group_block(diff, group, max_lines)
        lines = block.count("\n")
        if len(text) + len(block) > budget or (detail + lines > max_detail_lines and shown):
            text += (f"\n… {len(groups) - shown:,} more distinct change(s) not shown here; "
                     "`netgen diff --json` has every device and place.\n")
            break
        text += block
        detail += lines
    return text


def _group_block(diff: RevisionDiff, group: ChangeGroup, max_lines: int) -> str:
    body = [f"Devices: {_plain(device_ranges(group.devices), 1000)}", ""] if len(group.devices) > 1 else []
    for name, lines in group.files(MAX_NAME_RUNS).items():
        kept = lines[:max_lines]
        cut = len(lines) - max_lines
        more = [f"... {cut} more lines (netgen diff --json has them all)"] if cut > 0 else []
        kind = "text" if name.endswith(".json") else "diff"
        body += [_code(name, 200), "", *_fenced(kept + more, kind), ""]
    summary = html.escape(visible(f"{diff.label(group)}: {group.kind}, {_each(group)}", 300))
    return f"<details><summary>{summary}</summary>\n\n" + "\n".join(body) + "\n</details>\n"
