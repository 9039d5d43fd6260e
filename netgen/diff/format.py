"""A revision diff laid out for people: plain text for a terminal (as_text) and a pull-request
comment in Markdown that stays under GitHub's size limit (as_markdown); the summary per tier and
the risk flags first, then each distinct change once, with the devices it reaches."""

from __future__ import annotations

from netgen.diff.device_diff import RevisionDiff
from netgen.diff.grouping import DEVICE, ChangeGroup, device_ranges


def _each(group: ChangeGroup) -> str:
    return f"+{group.added} -{group.removed}" + (" each" if len(group.devices) > 1 else "")


def as_text(diff: RevisionDiff, max_lines: int = 400) -> str:
    """Summary per tier and risks first, then each distinct change once with the devices it reaches
    (file names show the device as {device} where a group has several)."""
    if not diff.changed:
        return f"no changes: {diff.fabric} renders identically at {diff.base} and {diff.head}\n"
    groups = diff.groups()
    out = [f"{diff.fabric}: {diff.base} -> {diff.head}: {len(diff.devices)} device(s) change"
           f" ({len(groups)} distinct change(s))"]
    out += [f"  {tier}: {row['devices']} device(s), +{row['added']} -{row['removed']}"
            for tier, row in diff.per_tier().items()]
    out += [f"RISK: {flag}" for flag in diff.risks()]
    for group in groups:
        label = diff.label(group)
        names = "" if len(group.devices) == 1 else f": {device_ranges(group.devices)}"
        out.append(f"=== {label} ({group.kind}, {_each(group)}){names}")
        for name, lines in group.files.items():
            out.append(f"--- {name if len(group.devices) > 1 else name.replace(DEVICE, group.devices[0])}")
            out += lines[:max_lines]
            if len(lines) > max_lines:
                out.append(f"... {len(lines) - max_lines} more lines")
    return "\n".join(out) + "\n"


GITHUB_COMMENT_LIMIT = 65536


def as_markdown(diff: RevisionDiff, max_lines: int = 150, budget: int = 60000) -> str:
    """A pull-request comment: summary table, risk flags, then each distinct change once, folded,
    with the devices it reaches; truncated so the comment stays under GitHub's size limit."""
    if not diff.changed:
        return f"### netgen: no config changes\n`{diff.fabric}` renders identically at {diff.base} and {diff.head}.\n"
    groups = diff.groups()
    head = [f"### netgen: {len(diff.devices)} device(s) change ({len(groups)} distinct change(s))", "",
            f"`{diff.fabric}`: {diff.base} → {diff.head}", "",
            "| tier | devices changed | lines/fields added | removed |", "|---|---:|---:|---:|"]
    head += [f"| {tier} | {row['devices']} | {row['added']} | {row['removed']} |"
             for tier, row in diff.per_tier().items()]
    head.append("")
    head += [f"> **Risk:** {flag}" for flag in diff.risks()] + ([""] if diff.risks() else [])
    text = "\n".join(head)
    for shown, group in enumerate(groups):
        body = [f"Devices: {device_ranges(group.devices)}", ""] if len(group.devices) > 1 else []
        for name, lines in group.files.items():
            fence = "diff" if not name.endswith(".json") else "text"
            kept = lines[:max_lines]
            extra = len(lines) - max_lines
            more = [f"... {extra} more lines (run `netgen diff` locally)"] if extra > 0 else []
            shown_name = name if len(group.devices) > 1 else name.replace(DEVICE, group.devices[0])
            body += [f"`{shown_name}`", "", f"```{fence}", *kept, *more, "```", ""]
        block = (f"<details><summary>{diff.label(group)}: {group.kind}, {_each(group)}</summary>\n\n"
                 + "\n".join(body) + "\n</details>\n")
        if len(text) + len(block) > budget:
            left = len(groups) - shown
            text += f"\n… {left} more change(s) not shown (comment size limit); run `netgen diff` locally.\n"
            break
        text += block
    return text
