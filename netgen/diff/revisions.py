"""Rendered-config diffs between two git revisions of the project, for pull-request review.

Each revision is rendered by *its own* netgen (code, templates, intent and catalog as committed),
in a subprocess with the revision's tree first on PYTHONPATH, so a template change, a view change
and an intent change all show up exactly as they would be deployed. The working tree can stand in
for the head revision.

Per device: config_db.json as a semantic table / key / field diff, frr.conf and EOS configs as
unified diffs. Risk flags call out what a reviewer must not miss.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shutil
import site
import stat
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen.diff.config_db import FieldChange, masked_patch, semantic_diff
from netgen.diff.grouping import DEVICE, ChangeGroup, describe, device_ranges, group_changes, natural_key
from netgen.intent import NetgenInputError, load_fabric
from netgen.intent.secrets import redact
from netgen.platforms.custom import PROVENANCE_FILE
from netgen.platforms.render import MARKER
from netgen.topology import expand

RenderedTree = dict[str, dict[str, str]]  # device -> file name -> content


@dataclass(frozen=True, slots=True)
class Risk:
    """A kind of change a reviewer must not miss: one that reaches every session, every lossless
    queue or every flow's path when it lands on many switches. Found by what it changes of what was
    there: a CONFIG_DB field of an existing key (a table's every field when its set is empty), or a
    whole key removed; a line of frr.conf or an EOS config matching `lines` that goes (a changed
    value is a line that goes and one that comes). What is only added (a new rack's ports and
    sessions, a spare port put into service) is new, not a change, and raises nothing."""

    flag: str  # the key in each device's `risks`
    says: str  # what the flag tells the reviewer
    tables: dict[str, frozenset[str]] = field(default_factory=dict)
    lines: re.Pattern[str] | None = None


_ALL: frozenset[str] = frozenset()  # every field of the table
RISKS = (
    Risk("mtu", "MTU", {"PORT": frozenset({"mtu"}), "PORTCHANNEL": frozenset({"mtu"}), "VLAN": frozenset({"mtu"})},
         re.compile(r"^\s*(ip |ipv6 )?mtu\b")),
    Risk("asn", "BGP AS numbers", {"DEVICE_METADATA": frozenset({"bgp_asn"})},
         re.compile(r"^\s*router bgp \d|\blocal-as\b")),  # and a neighbour whose remote-as changes (_risks_of_lines)
    Risk("bgp-timers", "BGP or BFD timers",
         lines=re.compile(r"^\s*(timers\b|neighbor \S+ timers\b|detect-multiplier\b|receive-interval\b"
                          r"|transmit-interval\b|interval \d|bfd interval\b)")),
    Risk("bgp-policy", "BGP route policy (route maps, prefix lists, path and prefix limits)",
         lines=re.compile(r"\broute-map\b|\bprefix-list\b|\bmaximum-(prefix|paths|routes)\b")),
    Risk("qos", "PFC, queue, buffer or DSCP map settings",
         dict.fromkeys(("PORT_QOS_MAP", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "PFC_WD",
                        "SCHEDULER", "QUEUE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
                        "MAP_PFC_PRIORITY_TO_QUEUE", "CABLE_LENGTH"), _ALL),
         re.compile(r"priority-flow-control|^\s*qos |tx-queue|bandwidth percent|priority strict|service-profile")),
    Risk("ecn", "ECN marking (DCQCN)", {"WRED_PROFILE": _ALL}, re.compile(r"random-detect|\becn\b")),
    Risk("hashing", "ECMP hashing", {"SWITCH_HASH": _ALL},
         re.compile(r"^\s*load-balance\b|\bload-sharing\b|^\s*(ip|ipv6) hardware fib\b|payload bytes")),
)


def _risks_of_fields(changes: Iterable[FieldChange]) -> set[str]:
    found = set()
    for change in changes:
        if not change.field and change.kind == "add":
            continue  # a new key: a new port, a new neighbour
        for risk in RISKS:
            fields = risk.tables.get(change.table)
            if fields is not None and (not fields or not change.field or change.field in fields):
                found.add(risk.flag)
    return found


def _risks_of_lines(body: list[str]) -> set[str]:
    """`body`: the added and removed lines of a unified diff (their +/- first)."""
    gone = [line[1:] for line in body if line.startswith("-")]
    found = {risk.flag for risk in RISKS if risk.lines is not None and any(risk.lines.search(line) for line in gone)}
    # a session added (one more rack) is no ASN change; the same neighbour with another AS is
    peers: dict[str, set[str]] = {"-": set(), "+": set()}
    for line in body:
        match = _REMOTE_AS.search(line[1:])
        if match:
            peers[line[0]].add(match.group(1))
    if peers["-"] & peers["+"]:
        found.add("asn")
    if peers["-"]:
        found.add("bgp-removed")
    return found


_REMOTE_AS = re.compile(r"\bneighbor (\S+) remote-as\b")


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
        try:
            with tarfile.open(fileobj=buffer) as tar:
                extract_tree(tar, dest, ref)
        except tarfile.TarError as exc:
            raise RevisionError(f"{ref}: cannot read the archive of this revision: {exc}") from exc
    return commit.stdout.decode().strip()


# --- extraction -----------------------------------------------------------------------------------
# A revision's tree is the pull request author's, not ours to trust, and Debian 12's Python 3.11.2
# has no tarfile extraction filters (and the filters of later versions decide member by member, in
# archive order, against what is already on disk, which a symlink chain laid out in the right order
# gets past). So netgen checks the archive as a whole before it writes anything, with a rule that
# does not depend on member order:
#   1. only regular files, directories and symbolic links: no hard links (a tar hard link names any
#      path, and writing to the in-tree name would write the linked file; git never makes them), no
#      devices, fifos or other types; no member twice (git never makes that either);
#   2. every member name is relative and has no `..` component;
#   3. no member's path passes through a symlink (or a file) member: every directory a file or
#      link is created in is then a real directory of the tree;
#   4. every symlink target is relative, and resolving it from the link's directory the way the
#      kernel does -- component by component, following the archive's own symlinks (whatever their
#      order in the archive), `..` taken from the directory a link resolved to -- never leaves the
#      tree (nor loops more than 40 times).
# By 3, every path a member is written to is made of real in-tree directories; by 4, every symlink
# that exists afterwards resolves inside the tree, so a path inside the tree that does not itself
# climb with `..` stays inside. Extraction does not rely on the rules alone: it creates directories
# and files first and symlinks last, walks to each member's directory from the tree's root one
# component at a time with O_NOFOLLOW (so no write ever goes through a symlink, whatever the file
# system's case or Unicode folding), creates files with O_EXCL and plain 0644/0755 modes, owned by
# us, and finally checks every symlink on disk with os.path.realpath.
_MAX_SYMLINK_HOPS = 40  # Linux's MAXSYMLINKS


def _parts(name: str) -> tuple[str, ...] | None:
    """A member name's components, or None when the name is absolute or climbs with `..`."""
    if name.startswith("/") or "\x00" in name:
        return None
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    return None if ".." in parts else parts


class _Outside(Exception):
    """A symlink target resolves outside the tree: `why`, and the archive's symlinks it went through."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why, self.via = why, list[str]()

    def __str__(self) -> str:
        return self.why + (f" (through {', '.join(self.via[:3])})" if self.via else "")


def _resolve_link(links: Mapping[tuple[str, ...], str], start: tuple[str, ...], target: str,
                  hops: list[int]) -> tuple[str, ...]:
    """Where `target`, read from directory `start`, ends up, following the archive's own symlinks
    (`links`: path -> target) as the kernel would; raises _Outside when that leaves the tree."""
    if target.startswith("/"):
        raise _Outside("an absolute target")
    here = list(start)
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                raise _Outside("climbs out of the tree")
            here.pop()
            continue
        here.append(part)
        link = links.get(tuple(here))
        if link is not None:
            hops[0] += 1
            if hops[0] > _MAX_SYMLINK_HOPS:
                raise _Outside("a symlink loop")
            try:
                here = list(_resolve_link(links, tuple(here[:-1]), link, hops))
            except _Outside as exc:
                exc.via.insert(0, f"{'/'.join(here)} -> {link}")
                raise
    return tuple(here)


def _safe_members(tar: tarfile.TarFile, ref: str) -> list[tarfile.TarInfo]:
    """The archive's members in the order to create them (directories, files, then symlinks), after
    checking the whole archive against the rules above (which look at the archive alone, never at
    the disk); raises RevisionError naming the revision and the first member refused."""

    def refuse(member: tarfile.TarInfo, why: str) -> RevisionError:
        return RevisionError(f"{ref}: refusing archive member {member.name!r} ({why})")

    nodes: dict[tuple[str, ...], tarfile.TarInfo] = {}
    for member in tar.getmembers():
        parts = _parts(member.name)
        if parts is None:
            raise refuse(member, "outside the tree: an absolute path or a `..` component")
        if member.islnk():
            raise refuse(member, f"a hard link to {member.linkname!r}: not a file, directory or symlink")
        if not (member.isreg() or member.isdir() or member.issym()):
            raise refuse(member, "not a file, directory or symlink: a device, fifo or other special file")
        if not parts:
            if member.isdir():  # the tree's own top directory ("./")
                continue
            raise refuse(member, "outside the tree: names the tree itself")
        if parts in nodes:
            raise refuse(member, f"appears twice in the archive, as a {_kind(nodes[parts])} and as a {_kind(member)}")
        nodes[parts] = member
    links = {parts: member.linkname for parts, member in nodes.items() if member.issym()}
    for parts, member in nodes.items():
        for depth in range(1, len(parts)):
            above = nodes.get(parts[:depth])
            if above is not None and not above.isdir():
                raise refuse(member, f"its path passes through the {_kind(above)} {above.name!r}")
        if member.issym():
            if not member.linkname:
                raise refuse(member, "a symlink with an empty target")
            try:
                _resolve_link(links, parts[:-1], member.linkname, [0])
            except _Outside as exc:
                raise refuse(member, f"symlink to {member.linkname!r} points outside the tree: {exc}") from None
    return sorted(nodes.values(), key=_creation_order)


def _kind(member: tarfile.TarInfo) -> str:
    return "directory" if member.isdir() else "symlink" if member.issym() else "file"


def _creation_order(member: tarfile.TarInfo) -> int:
    """Directories, then files, then symlinks: nothing is written while any symlink exists."""
    return 0 if member.isdir() else 2 if member.issym() else 1


def extract_tree(tar: tarfile.TarFile, dest: Path, ref: str) -> None:
    """Extract a revision's archive into the empty directory `dest`, refusing (RevisionError, naming
    the revision and the member) anything that could make a path in the tree lead outside it."""
    members = _safe_members(tar, ref)
    root = Path(os.path.realpath(dest))
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for member in members:
            parts = _parts(member.name) or ()
            try:
                folder = _open_folder(root_fd, parts if member.isdir() else parts[:-1])
                try:
                    if member.issym():
                        os.symlink(member.linkname, parts[-1], dir_fd=folder)
                    elif not member.isdir():
                        _write_file(tar, member, folder, parts[-1])
                finally:
                    os.close(folder)
            except OSError as exc:
                raise RevisionError(f"{ref}: cannot extract archive member {member.name!r}: {exc}") from exc
    finally:
        os.close(root_fd)
    for folder_name, dirs, files in os.walk(root):
        for name in dirs + files:
            link = os.path.join(folder_name, name)
            if stat.S_ISLNK(os.lstat(link).st_mode) and not Path(os.path.realpath(link)).is_relative_to(root):
                raise RevisionError(f"{ref}: refusing archive member {os.path.relpath(link, root)!r} (symlink to "
                                    f"{os.readlink(link)!r} points outside the tree)")


def _open_folder(root_fd: int, parts: tuple[str, ...]) -> int:
    """A descriptor of the tree's directory `parts`, made as needed and opened one component at a
    time with O_NOFOLLOW: a symlink anywhere on the way is an error, never followed."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, folder: int, name: str) -> None:
    """A new regular file (never an existing one, never through a symlink), mode 0644 or 0755."""
    source = tar.extractfile(member)
    mode = 0o755 if member.mode & 0o111 else 0o644
    descriptor = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=folder)
    with os.fdopen(descriptor, "wb") as target:
        if source is not None:
            shutil.copyfileobj(source, target)


# --- rendering ------------------------------------------------------------------------------------
# A revision's netgen is code from whoever wrote the revision (for a pull request: its author), and
# `netgen diff` runs it. It gets an environment built from an allow-list, not the caller's: the
# caller's environment is where deploy credentials (NETGEN_USERNAME / NETGEN_PASSWORD /
# NETGEN_SSH_KEY), cloud and CI tokens (AWS_*, GITHUB_TOKEN, GH_TOKEN, ...), SSH_AUTH_SOCK and
# whatever else the shell or CI runner exported live, and a deny-list would always miss the next
# such name. A render needs only: PATH; the locale (LANG, LANGUAGE, LC_*), TZ and SOURCE_DATE_EPOCH,
# which may shape text and timestamps; the interpreter settings that change how Python itself runs
# or decodes (PYTHONHOME, PYTHONUTF8, PYTHONIOENCODING, PYTHONHASHSEED); and what netgen sets
# itself: PYTHONPATH (the revision's tree), a fresh empty HOME and TMPDIR that are removed
# afterwards (so ~/.netrc, ~/.aws, ~/.ssh, ~/.config are not found through HOME), and
# PYTHONUSERBASE / PYTHONNOUSERSITE so that the per-user site-packages this interpreter uses (if
# any) is still found with the fake HOME. The child's stdin is /dev/null.
# This is not a sandbox: the revision's code still runs as the caller, and can read what the caller
# can read (files, and on Linux the environment of the caller's own processes under /proc). Do not
# diff an untrusted revision where secrets are within reach.
CHILD_ENV_NAMES = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "SOURCE_DATE_EPOCH",
    "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
    "LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE",
    "PYTHONHOME", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONHASHSEED",
})


def child_environment(root: Path, scratch: Path, parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment a revision's netgen runs with (see above): the allow-listed variables
    of `parent` (default: ours), PYTHONPATH = `root`, HOME and TMPDIR fresh directories in `scratch`."""
    given = os.environ if parent is None else parent
    env = {name: value for name, value in given.items() if name in CHILD_ENV_NAMES}
    env.setdefault("PATH", os.defpath)
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env |= {"PYTHONPATH": str(root), "HOME": str(home), "TMPDIR": str(tmp), "PYTHONUSERBASE": site.getuserbase()}
    if not site.ENABLE_USER_SITE:
        env["PYTHONNOUSERSITE"] = "1"
    return env


@dataclass(frozen=True)
class _Child:
    process: subprocess.Popen[str]
    scratch: Path  # its HOME and TMPDIR, removed when it ends


def _netgen(root: Path, *args: str, state: Path | None = None) -> _Child:
    """`netgen ARGS` as the revision in `root` runs it, in a scrubbed environment (child_environment).
    `state`: its XDG_STATE_HOME (default: under its fresh HOME)."""
    scratch = Path(tempfile.mkdtemp(prefix="netgen-render-"))
    try:
        env = child_environment(root, scratch) | ({"XDG_STATE_HOME": str(state)} if state is not None else {})
        return _Child(subprocess.Popen([sys.executable, "-m", "netgen.cli", *args], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, cwd=root, stdin=subprocess.DEVNULL,
                                       env=env), scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _finish(child: _Child) -> subprocess.CompletedProcess[str]:
    try:
        stdout, stderr = child.process.communicate()
    finally:
        shutil.rmtree(child.scratch, ignore_errors=True)
    return subprocess.CompletedProcess(child.process.args, child.process.returncode, stdout, stderr)


def _finish_all(children: list[_Child]) -> list[subprocess.CompletedProcess[str]]:
    """Wait for each; on an interrupt, the ones still running are stopped (and their scratch goes)."""
    try:
        return [_finish(child) for child in children]
    finally:
        for child in children:
            if child.process.poll() is None:
                child.process.kill()
                _finish(child)


def _render_args(root: Path, fabric: str, out: Path, devices: Sequence[str] | None = None) -> list[str]:
    selected = [arg for name in devices or () for arg in ("--device", name)]
    return ["render", str(root / fabric), "-o", str(out), "--json", *selected]


def render_tree(root: Path, fabric: str, out: Path) -> RenderedTree:
    """Render `fabric` (a path inside `root`) with the netgen found in `root`, in a scrubbed
    environment (child_environment). Renders into one folder share a state directory there, so the
    key that authenticates render manifests (platforms/render.py) is the same for the base's render
    and the head's render into it (which keeps the base's files), and is never the user's."""
    state = out.parent / ".netgen-diff-state"
    return _rendered(_finish(_netgen(root, *_render_args(root, fabric, out), state=state)), root, fabric, out)


def _rendered(done: subprocess.CompletedProcess[str], root: Path, fabric: str, out: Path) -> RenderedTree:
    if done.returncode != 0:
        raise RevisionError(f"rendering {fabric} at {root} failed (exit {done.returncode}): {_why(done)}")
    tree: RenderedTree = {}
    try:  # what the revision's code wrote: real directories and files only, never followed out
        for folder in sorted(p for p in out.iterdir() if p.is_dir() and not p.is_symlink()):
            tree[folder.name] = {f.name: f.read_text(encoding="utf-8") for f in sorted(folder.iterdir())
                                 if f.is_file() and not f.is_symlink()}
    except (OSError, UnicodeDecodeError) as exc:
        raise RevisionError(f"rendering {fabric} at {root}: cannot read what it rendered: {exc}") from exc
    return tree


def _render_head(root: Path, fabric: str, work: Path) -> RenderedTree:
    """The head's render, into the base's output when the base's netgen wrote render keys: the
    head's netgen then keeps every device whose key (inputs, code, templates) is the base's, so an
    intent change renders only the devices it reaches. A head whose netgen cannot take that
    directory over is rendered afresh."""
    if _has_render_keys(work / "base-out"):
        with contextlib.suppress(RevisionError):
            return render_tree(root, fabric, work / "base-out")
    return render_tree(root, fabric, work / "head-out")


def _has_render_keys(out: Path) -> bool:
    try:
        doc = json.loads((out / MARKER).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("devices"), dict)


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
    patches: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # CONFIG_DB file -> RFC 6902 ops

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "kind": self.kind, "added": self.added, "removed": self.removed,
                "risks": sorted(self.risks), "files": self.files, "patches": self.patches}


def _unified(name: str, old: str, new: str) -> list[str]:
    """A unified diff, secrets masked (a local user's hash: a PR comment is no place for it)."""
    return [redact(line.rstrip("\n")) for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                                       f"a/{name}", f"b/{name}")]


def _config_db(text: str) -> dict[str, Any] | None:
    """`text` as a CONFIG_DB document (tables of keys of fields), or None when it is not one (a
    revision's output is not trusted to be well formed; such a file gets a plain unified diff)."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return None
    if not isinstance(data, dict) or not all(
            isinstance(table, dict) and all(isinstance(entry, dict) for entry in table.values())
            for table in data.values()):
        return None
    return data


def _custom_rows(files: dict[str, str]) -> dict[str, str]:
    """`TABLE|key.field` -> custom_config block name, from a SONiC device's custom-config.json."""
    try:
        data = json.loads(files.get(PROVENANCE_FILE, "{}"))
        rows = data.get("config_db", {}) if isinstance(data, dict) else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in rows.items()} if isinstance(rows, dict) else {}


def _marked(change: FieldChange, line: str, origin: dict[str, str]) -> str:
    """A CONFIG_DB change line, marked when a custom_config block (not netgen) wrote the field."""
    fields = [change.field] if change.field else list((change.new or change.old or {}).keys())
    names = sorted({origin[f"{change.table}|{change.key}.{name}"] for name in fields
                    if f"{change.table}|{change.key}.{name}" in origin})
    return line + (f"  [custom_config {', '.join(names)}]" if names else "")


def diff_device(device: str, old: dict[str, str] | None, new: dict[str, str] | None) -> DeviceDiff | None:
    kind = "added" if old is None else "removed" if new is None else "changed"
    result = DeviceDiff(device, kind)
    old, new = old or {}, new or {}
    origin = {**_custom_rows(old), **_custom_rows(new)}
    for name in sorted(old.keys() | new.keys()):
        before, after = old.get(name, ""), new.get(name, "")
        if before == after:
            continue
        old_db = _config_db(before) if name.endswith(".json") else None
        new_db = _config_db(after) if old_db is not None else None
        if old_db is not None and new_db is not None:
            # ports and keys in natural order (Ethernet44 before Ethernet448)
            changes = sorted(semantic_diff(old_db, new_db), key=lambda c: (c.table, natural_key(c.key), c.field))
            lines = [_marked(c, c.render(), origin) for c in changes]
            result.patches[name] = masked_patch(old_db, new_db)
            result.added += sum(1 for c in changes if c.kind != "remove")
            result.removed += sum(1 for c in changes if c.kind != "add")
            result.risks |= _risks_of_fields(changes)
        else:
            lines = _unified(f"{device}/{name}", before, after)
            body = [line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            result.added += sum(1 for line in body if line.startswith("+"))
            result.removed += sum(1 for line in body if line.startswith("-"))
            result.risks |= _risks_of_lines(body)
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
    zones: dict[str, int | None] = field(default_factory=dict)  # device -> zone (None: the ATSW layer)
    # devices rendered at each revision, of how many ({"base", "head", "of"}); None: both rendered whole
    rendered: dict[str, int] | None = None

    @property
    def changed(self) -> bool:
        return bool(self.devices)

    def groups(self) -> list[ChangeGroup]:
        return group_changes(self.devices)

    def label(self, group: ChangeGroup) -> str:
        return describe(group, self.roles, self.zones)

    def per_tier(self) -> dict[str, dict[str, int]]:
        tiers: dict[str, dict[str, int]] = {}
        for d in self.devices:
            row = tiers.setdefault(self.roles.get(d.device, "unknown"), {"devices": 0, "added": 0, "removed": 0})
            row["devices"] += 1
            row["added"] += d.added
            row["removed"] += d.removed
        return dict(sorted(tiers.items()))

    def _reach(self, devices: list[str]) -> str:
        """How many devices and which tiers: `on 1,692 device(s) (rtsw 1,536, ctsw 128, atsw 28)`."""
        tiers: dict[str, int] = {}
        for device in devices:
            tier = self.roles.get(device, "unknown")
            tiers[tier] = tiers.get(tier, 0) + 1
        order = {tier: index for index, tier in enumerate(("rtsw", "ctsw", "atsw"))}
        parts = ", ".join(f"{tier} {count:,}" for tier, count in sorted(tiers.items(),
                                                                         key=lambda t: (order.get(t[0], 9), t[0])))
        return f"on {len(devices):,} device(s) ({parts})"

    def risks(self) -> list[str]:
        flags = []
        for risk in RISKS:
            hit = [d.device for d in self.devices if risk.flag in d.risks]
            if hit:
                flags.append(f"{risk.says} change {self._reach(hit)}")
        bgp = [d.device for d in self.devices if "bgp-removed" in d.risks]
        if bgp:
            flags.append(f"BGP sessions removed or changed {self._reach(bgp)}")
        gone = [d.device for d in self.devices if d.kind == "removed"]
        if gone:
            flags.append(f"{len(gone)} device(s) removed: {', '.join(gone[:5])}")
        return flags

    def as_dict(self) -> dict[str, Any]:
        return {"base": self.base, "head": self.head, "fabric": self.fabric, "changed": self.changed,
                "summary": self.per_tier(), "risks": self.risks(),
                "groups": [{"devices": g.devices, "label": self.label(g), "kind": g.kind, "added": g.added,
                            "removed": g.removed, "files": g.files} for g in self.groups()],
                "devices": [d.as_dict() for d in self.devices], "rendered": self.rendered}


def placement_of(root: Path, fabric: str) -> tuple[dict[str, str], dict[str, int | None]]:
    """Device -> tier and device -> zone, by loading the revision's fabric with this netgen (best
    effort: a fabric this version cannot read gives none, and its devices count as "unknown")."""
    try:
        loaded = load_fabric(root / fabric)
        topology = expand(loaded.fabric, loaded.catalog)
    except NetgenInputError:
        return {}, {}
    devices = topology.devices
    return {n: d.role.value for n, d in devices.items()}, {n: d.zone for n, d in devices.items()}


def compare(base: RenderedTree, head: RenderedTree, base_name: str, head_name: str, fabric: str,
            roles: dict[str, str] | None = None, zones: dict[str, int | None] | None = None,
            rendered: dict[str, int] | None = None) -> RevisionDiff:
    devices = []
    for name in sorted(base.keys() | head.keys(), key=natural_key):
        diff = diff_device(name, base.get(name), head.get(name))
        if diff is not None:
            devices.append(diff)
    return RevisionDiff(base_name, head_name, fabric, devices, roles or {}, zones or {}, rendered)


@dataclass(frozen=True)
class RenderPlan:
    """What `netgen render --keys-only` said of a revision: each device's render key (None: always
    rendered), tier and zone."""

    keys: dict[str, str | None]
    tiers: dict[str, str]
    zones: dict[str, int | None]


def _plan(done: subprocess.CompletedProcess[str]) -> RenderPlan | None:
    """The revision's plan; None where its netgen has no --keys-only (older than this one) or it
    failed: the revisions are then rendered whole, which reports any error in full."""
    if done.returncode != 0:
        return None
    try:
        doc = json.loads(done.stdout)
        devices = doc["devices"]
        return RenderPlan({n: d["key"] for n, d in devices.items()}, {n: str(d["tier"]) for n, d in devices.items()},
                          {n: d["zone"] for n, d in devices.items()})
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def changed_devices(base: RenderPlan, head: RenderPlan) -> tuple[list[str], list[str]]:
    """The devices to render at the base and at the head: every device whose key differs, is
    missing on one side, or has none (not cacheable). The others render to the very same files."""
    def differs(name: str) -> bool:
        key = base.keys.get(name)
        return key is None or key != head.keys.get(name)
    return ([n for n in base.keys if differs(n)],
            [n for n in head.keys if n not in base.keys or differs(n)])


def _planned_trees(base_root: Path, head_root: Path, fabric: str,
                   work: Path) -> tuple[RenderedTree, RenderedTree, RenderPlan, RenderPlan, dict[str, int]] | None:
    """Both revisions keyed side by side (one process each, both cores), then only the devices whose
    keys differ rendered side by side. None: a revision's netgen cannot key (see _plan)."""
    keying = [_netgen(root, "render", str(root / fabric), "--keys-only") for root in (base_root, head_root)]
    plans = [_plan(done) for done in _finish_all(keying)]
    base_plan, head_plan = plans
    if base_plan is None or head_plan is None:
        return None
    base_names, head_names = changed_devices(base_plan, head_plan)
    outs = (work / "base-out", work / "head-out")
    rendering = [_netgen(root, *_render_args(root, fabric, out, names))
                 for root, out, names in zip((base_root, head_root), outs, (base_names, head_names), strict=True)
                 if names]
    done = _finish_all(rendering)
    trees: list[RenderedTree] = []
    for root, out, names in zip((base_root, head_root), outs, (base_names, head_names), strict=True):
        trees.append(_rendered(done.pop(0), root, fabric, out) if names else {})
    rendered = {"base": len(base_names), "head": len(head_names),
                "of": len(base_plan.keys.keys() | head_plan.keys.keys())}
    return trees[0], trees[1], base_plan, head_plan, rendered


def diff_revisions(repo: Path, fabric: str, base: str, head: str | None) -> RevisionDiff:
    """Render `fabric` at `base` and at `head` (None: the working tree) and compare. Where both
    revisions' netgen can key their devices, only the devices whose keys differ are rendered."""
    with tempfile.TemporaryDirectory(prefix="netgen-diff-") as folder:
        work = Path(folder)
        base_root = work / "base"
        base_root.mkdir()
        base_id = export_revision(repo, base, base_root)
        if head is None:
            head_root, head_id = repo, "working tree"
        else:
            head_root = work / "head"
            head_root.mkdir()
            head_id = export_revision(repo, head, head_root)
        base_name, head_name = f"{base} ({base_id[:12]})", head_id if head is None else f"{head} ({head_id[:12]})"
        planned = _planned_trees(base_root, head_root, fabric, work)
        if planned is not None:
            old, new, base_plan, head_plan, rendered = planned
            return compare(old, new, base_name, head_name, fabric, base_plan.tiers | head_plan.tiers,
                           base_plan.zones | head_plan.zones, rendered)
        old = render_tree(base_root, fabric, work / "base-out")
        roles, zones = placement_of(base_root, fabric)
        new = _render_head(head_root, fabric, work)
        head_roles, head_zones = placement_of(head_root, fabric)
    return compare(old, new, base_name, head_name, fabric, roles | head_roles, zones | head_zones)


# --- output ---------------------------------------------------------------------------------------


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
