"""Rendered-config diffs between two git revisions of the project, for pull-request review.

Each revision is rendered by *its own* netgen (code, templates, intent and catalog as committed),
in a subprocess with the revision's tree first on PYTHONPATH, so a template change, a view change
and an intent change all show up exactly as they would be deployed. The working tree can stand in
for the head revision.

Per device: config_db.json as a semantic table / key / field diff, frr.conf and EOS configs as
unified diffs. Risk flags call out what a reviewer must not miss.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen.diff.config_db import semantic_diff
from netgen.intent import NetgenInputError, load_fabric
from netgen.topology import expand

RenderedTree = dict[str, dict[str, str]]  # device -> file name -> content
QOS_TABLES = {"PORT_QOS_MAP", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "PFC_WD", "WRED_PROFILE",
              "SCHEDULER", "QUEUE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
              "MAP_PFC_PRIORITY_TO_QUEUE", "CABLE_LENGTH"}
QOS_WORDS = ("priority-flow-control", "qos ", "tx-queue", "random-detect", "bandwidth percent", "priority strict",
             "service-profile")


class RevisionError(Exception):
    """A revision cannot be read or rendered; the message says which and why."""


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)


def export_revision(repo: Path, ref: str, dest: Path) -> str:
    """Write the tree of `ref` into `dest` (git archive); returns the full commit id."""
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if commit.returncode != 0:
        raise RevisionError(f"{ref!r} is not a commit in {repo}")
    archive = _git(repo, "archive", "--format=tar", commit.stdout.decode().strip())
    if archive.returncode != 0:
        raise RevisionError(f"git archive {ref}: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryFile() as buffer:
        buffer.write(archive.stdout)
        buffer.seek(0)
        with tarfile.open(fileobj=buffer) as tar:
            members = _safe_members(tar, dest, ref)
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4; Debian 12's 3.11.2 has no filters
                tar.extractall(dest, members=members, filter="data")
            else:
                tar.extractall(dest, members=members)  # members checked by _safe_members
    return commit.stdout.decode().strip()


def _safe_members(tar: tarfile.TarFile, dest: Path, ref: str) -> list[tarfile.TarInfo]:
    """Files, directories and in-tree symlinks only, every path inside `dest`: a revision's tree is
    the pull request author's, not ours to trust."""
    root = dest.resolve()
    members = []
    for member in tar.getmembers():
        target = (root / member.name).resolve()
        if not (member.isfile() or member.isdir() or member.issym()) or not target.is_relative_to(root):
            raise RevisionError(f"{ref}: refusing archive member {member.name!r} (outside the tree or not a file)")
        if member.issym() and not (target.parent / member.linkname).resolve().is_relative_to(root):
            raise RevisionError(f"{ref}: refusing symlink {member.name!r} -> {member.linkname!r} (points outside)")
        members.append(member)
    return members


def render_tree(root: Path, fabric: str, out: Path) -> RenderedTree:
    """Render `fabric` (a path inside `root`) with the netgen found in `root`."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "netgen.cli", "render", str(root / fabric), "-o", str(out),
                           "--json"], capture_output=True, text=True, cwd=root, env=env, check=False)
    if done.returncode != 0:
        raise RevisionError(f"rendering {fabric} at {root} failed (exit {done.returncode}): {_why(done)}")
    tree: RenderedTree = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        tree[folder.name] = {f.name: f.read_text(encoding="utf-8") for f in sorted(folder.iterdir()) if f.is_file()}
    return tree


def _why(done: subprocess.CompletedProcess[str]) -> str:
    """The design or input errors from `netgen render --json`, else the output's tail."""
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        return (done.stdout + done.stderr).strip()[-800:]
    problems = [f"{f['code']} {f['subject']}: {f['message']}" for f in payload.get("findings", [])
                if f.get("severity") == "error"]
    problems += [str(p.get("message", p)) for p in payload.get("input_errors", [])]
    problems += [str(payload["render_error"])] if "render_error" in payload else []
    return "; ".join(problems[:5]) or done.stdout.strip()[-800:]


@dataclass
class DeviceDiff:
    device: str
    kind: str  # added | removed | changed
    files: dict[str, list[str]] = field(default_factory=dict)  # file -> diff lines
    added: int = 0
    removed: int = 0
    risks: set[str] = field(default_factory=set)

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "kind": self.kind, "added": self.added, "removed": self.removed,
                "risks": sorted(self.risks), "files": self.files}


def _unified(name: str, old: str, new: str) -> list[str]:
    return [line.rstrip("\n") for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                               f"a/{name}", f"b/{name}")]


def diff_device(device: str, old: dict[str, str] | None, new: dict[str, str] | None) -> DeviceDiff | None:
    kind = "added" if old is None else "removed" if new is None else "changed"
    result = DeviceDiff(device, kind)
    old, new = old or {}, new or {}
    for name in sorted(old.keys() | new.keys()):
        before, after = old.get(name, ""), new.get(name, "")
        if before == after:
            continue
        if name.endswith(".json"):
            changes = semantic_diff(json.loads(before or "{}"), json.loads(after or "{}"))
            lines = [c.render() for c in changes]
            result.added += sum(1 for c in changes if c.kind != "remove")
            result.removed += sum(1 for c in changes if c.kind != "add")
            if any(c.table in QOS_TABLES for c in changes):
                result.risks.add("qos")
        else:
            lines = _unified(f"{device}/{name}", before, after)
            body = [line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            result.added += sum(1 for line in body if line.startswith("+"))
            result.removed += sum(1 for line in body if line.startswith("-"))
            if any(word in line for line in body for word in QOS_WORDS):
                result.risks.add("qos")
            if any(line.startswith("-") and "remote-as" in line for line in body):
                result.risks.add("bgp-removed")
        result.files[name] = lines
    if kind == "removed":
        result.risks.add("device-removed")
    return result if result.files or kind != "changed" else None


@dataclass
class RevisionDiff:
    base: str
    head: str
    fabric: str
    devices: list[DeviceDiff]
    roles: dict[str, str]  # device -> tier

    @property
    def changed(self) -> bool:
        return bool(self.devices)

    def per_tier(self) -> dict[str, dict[str, int]]:
        tiers: dict[str, dict[str, int]] = {}
        for d in self.devices:
            row = tiers.setdefault(self.roles.get(d.device, "unknown"), {"devices": 0, "added": 0, "removed": 0})
            row["devices"] += 1
            row["added"] += d.added
            row["removed"] += d.removed
        return dict(sorted(tiers.items()))

    def risks(self) -> list[str]:
        flags = []
        qos = [d.device for d in self.devices if "qos" in d.risks]
        if qos:
            flags.append(f"PFC, queue or buffer settings change on {len(qos)} device(s)")
        bgp = [d.device for d in self.devices if "bgp-removed" in d.risks]
        if bgp:
            flags.append(f"BGP sessions removed or changed on {len(bgp)} device(s)")
        gone = [d.device for d in self.devices if d.kind == "removed"]
        if gone:
            flags.append(f"{len(gone)} device(s) removed: {', '.join(gone[:5])}")
        return flags

    def as_dict(self) -> dict[str, Any]:
        return {"base": self.base, "head": self.head, "fabric": self.fabric, "changed": self.changed,
                "summary": self.per_tier(), "risks": self.risks(), "devices": [d.as_dict() for d in self.devices]}


def tiers_of(root: Path, fabric: str) -> dict[str, str]:
    """Device -> tier, by loading the revision's fabric with this netgen (best effort: a fabric this
    version cannot read gives no tiers, and its devices count as "unknown")."""
    try:
        loaded = load_fabric(root / fabric)
        topology = expand(loaded.fabric, loaded.catalog)
    except NetgenInputError:
        return {}
    return {name: device.role.value for name, device in topology.devices.items()}


def compare(base: RenderedTree, head: RenderedTree, base_name: str, head_name: str, fabric: str,
            roles: dict[str, str] | None = None) -> RevisionDiff:
    devices = []
    for name in sorted(base.keys() | head.keys()):
        diff = diff_device(name, base.get(name), head.get(name))
        if diff is not None:
            devices.append(diff)
    return RevisionDiff(base_name, head_name, fabric, devices, roles or {})


def diff_revisions(repo: Path, fabric: str, base: str, head: str | None) -> RevisionDiff:
    """Render `fabric` at `base` and at `head` (None: the working tree) and compare."""
    with tempfile.TemporaryDirectory(prefix="netgen-diff-") as folder:
        work = Path(folder)
        base_root = work / "base"
        base_root.mkdir()
        base_id = export_revision(repo, base, base_root)
        old = render_tree(base_root, fabric, work / "base-out")
        roles = tiers_of(base_root, fabric)
        if head is None:
            head_root, head_id = repo, "working tree"
        else:
            head_root = work / "head"
            head_root.mkdir()
            head_id = export_revision(repo, head, head_root)
        new = render_tree(head_root, fabric, work / "head-out")
        roles |= tiers_of(head_root, fabric)
    return compare(old, new, f"{base} ({base_id[:12]})",
                   head_id if head is None else f"{head} ({head_id[:12]})", fabric, roles)


# --- output ---------------------------------------------------------------------------------------


def as_text(diff: RevisionDiff, max_lines: int = 400) -> str:
    if not diff.changed:
        return f"no changes: {diff.fabric} renders identically at {diff.base} and {diff.head}\n"
    out = [f"{diff.fabric}: {diff.base} -> {diff.head}: {len(diff.devices)} device(s) change"]
    out += [f"  {tier}: {row['devices']} device(s), +{row['added']} -{row['removed']}"
            for tier, row in diff.per_tier().items()]
    out += [f"RISK: {flag}" for flag in diff.risks()]
    for device in diff.devices:
        out.append(f"=== {device.device} ({device.kind}, +{device.added} -{device.removed})")
        for name, lines in device.files.items():
            out.append(f"--- {name}")
            out += lines[:max_lines]
            if len(lines) > max_lines:
                out.append(f"... {len(lines) - max_lines} more lines")
    return "\n".join(out) + "\n"


GITHUB_COMMENT_LIMIT = 65536


def as_markdown(diff: RevisionDiff, max_lines: int = 150, budget: int = 60000) -> str:
    """A pull-request comment: summary table, risk flags, then one collapsible diff per device,
    truncated so the whole comment stays under GitHub's size limit."""
    if not diff.changed:
        return f"### netgen: no config changes\n`{diff.fabric}` renders identically at {diff.base} and {diff.head}.\n"
    head = [f"### netgen: {len(diff.devices)} device(s) change", "",
            f"`{diff.fabric}`: {diff.base} → {diff.head}", "",
            "| tier | devices changed | lines/fields added | removed |", "|---|---:|---:|---:|"]
    head += [f"| {tier} | {row['devices']} | {row['added']} | {row['removed']} |"
             for tier, row in diff.per_tier().items()]
    head.append("")
    head += [f"> **Risk:** {flag}" for flag in diff.risks()] + ([""] if diff.risks() else [])
    text = "\n".join(head)
    for shown, device in enumerate(diff.devices):
        body = []
        for name, lines in device.files.items():
            fence = "diff" if not name.endswith(".json") else "text"
            kept = lines[:max_lines]
            extra = len(lines) - max_lines
            more = [f"... {extra} more lines (run `netgen diff` locally)"] if extra > 0 else []
            body += [f"`{name}`", "", f"```{fence}", *kept, *more, "```", ""]
        block = (f"<details><summary>{device.device}: {device.kind}, +{device.added} -{device.removed}</summary>\n\n"
                 + "\n".join(body) + "\n</details>\n")
        if len(text) + len(block) > budget:
            left = len(diff.devices) - shown
            text += f"\n… {left} more device(s) not shown (comment size limit); run `netgen diff` locally.\n"
            break
        text += block
    return text
