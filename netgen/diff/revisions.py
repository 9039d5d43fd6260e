"""Rendered-config diffs between two git revisions of the project, for pull-request review.

Each revision is rendered by *its own* netgen (code, templates, intent and catalog as committed),
in a subprocess with the revision's tree first on PYTHONPATH, so a template change, a view change
and an intent change all show up exactly as they would be deployed. The working tree can stand in
for the head revision. Where both revisions' netgen can key their devices, only the devices whose
keys differ are rendered; a change to a setting every switch carries (EVERY_DEVICE) renders both
whole without keying them first.

The revision's tree comes out of git through git_export.py; the intent's own changes are read from
the two trees by intent_diff.py; the renders are compared device by device in device_diff.py (edits:
edits.py, risk flags: risks.py, patterns and groups: patterns.py) and laid out by format.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from netgen.diff.device_diff import RenderedTree, RevisionDiff, compare
from netgen.diff.git_export import RevisionError, export_revision
from netgen.diff.intent_diff import IntentDiff, intent_changes
from netgen.intent import NetgenInputError, load_fabric
from netgen.output.manifest import MARKER
from netgen.resources import user_owned_dir, user_state_dir
from netgen.topology import expand

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


def _netgen(root: Path, *args: str, state: Path | None = None, cache: Path | None = None) -> _Child:
    """`netgen ARGS` as the revision in `root` runs it, in a scrubbed environment (child_environment).
    `state`, `cache`: its XDG_STATE_HOME and XDG_CACHE_HOME (default: under its fresh HOME)."""
    scratch = Path(tempfile.mkdtemp(prefix="netgen-render-"))
    try:
        env = child_environment(root, scratch) | ({"XDG_STATE_HOME": str(state)} if state is not None else {})
        env |= {"XDG_CACHE_HOME": str(cache)} if cache is not None else {}
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
    key that authenticates render manifests (netgen/output/manifest_mac.py) is the same for the
    base's render and the head's render into it (which keeps the base's files), and is never the
    user's."""
    state = out.parent / ".netgen-diff-state"
    return _rendered(_finish(_netgen(root, *_render_args(root, fabric, out), state=state)), root, fabric, out)


class _Files(Mapping[str, str]):
    """A rendered device's files, each read when first asked for: by whichever process compares the
    device (device_diff compares on two cores), so that each file is read once, by one of them."""

    def __init__(self, folder: Path, names: list[str], why: str) -> None:
        self._folder, self._names, self._why = folder, names, why
        self._texts: dict[str, str] = {}

    def __getitem__(self, name: str) -> str:
        if name not in self._texts:
            if name not in self._names:
                raise KeyError(name)
            try:
                self._texts[name] = (self._folder / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise RevisionError(f"{self._why}: {exc}") from exc
        return self._texts[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _rendered(done: subprocess.CompletedProcess[str], root: Path, fabric: str, out: Path,
              *, lazy: bool = False) -> RenderedTree:
    """What the revision's netgen rendered into `out`: each device's files, read now, or when
    compared (`lazy`: `out` must then stay until the comparison is done)."""
    if done.returncode != 0:
        raise RevisionError(f"rendering {fabric} at {root} failed (exit {done.returncode}): {_why(done)}")
    why = f"rendering {fabric} at {root}: cannot read what it rendered"
    tree: RenderedTree = {}
    try:  # what the revision's code wrote: real directories and files only, never followed out
        for folder in sorted(p for p in out.iterdir() if p.is_dir() and not p.is_symlink()):
            files = _Files(folder, sorted(f.name for f in folder.iterdir() if f.is_file() and not f.is_symlink()), why)
            tree[folder.name] = files if lazy else dict(files)
    except (OSError, UnicodeDecodeError) as exc:
        raise RevisionError(f"{why}: {exc}") from exc
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
    roots = (base_root, head_root)
    keying = [_netgen(root, "render", str(root / fabric), "--keys-only", cache=_cache(work, root, base_root))
              for root in roots]
    plans = [_plan(done) for done in _finish_all(keying)]
    base_plan, head_plan = plans
    if base_plan is None or head_plan is None:
        return None
    base_names, head_names = changed_devices(base_plan, head_plan)
    outs = (work / "base-out", work / "head-out")
    rendering = [_netgen(root, *_render_args(root, fabric, out, names), cache=_cache(work, root, base_root))
                 for root, out, names in zip(roots, outs, (base_names, head_names), strict=True) if names]
    done = _finish_all(rendering)
    trees: list[RenderedTree] = []
    for root, out, names in zip(roots, outs, (base_names, head_names), strict=True):
        trees.append(_rendered(done.pop(0), root, fabric, out, lazy=True) if names else {})
    rendered = {"base": len(base_names), "head": len(head_names),
                "of": len(base_plan.keys.keys() | head_plan.keys.keys())}
    return trees[0], trees[1], base_plan, head_plan, rendered


# Settings of the fabric file that every switch's config carries (its ports' MTU, its QoS maps, its
# BGP sessions and AS numbers, its ECMP hash): a change to one changes every device's render key, so
# keying the revisions first would only add its cost, and both are rendered whole straight away.
EVERY_DEVICE = ("mtu", "qos.lossless", "qos.cts", "qos.classes", "qos.default_traffic_class", "bgp",
                "asn.ctsw_base", "asn.rtsw_base", "asn.rtsw_zone_stride", "hashing.mode", "hashing.udp_dst_port",
                "hashing.payload_bytes")


def reaches_every_device(intent: IntentDiff) -> bool:
    """Whether the fabric file changes a setting every switch carries (EVERY_DEVICE)."""
    fabric_file = intent.files[0] if intent.files else None
    return any(change.file == fabric_file and any(change.path == setting or change.path.startswith((
        f"{setting}.", f"{setting}[")) for setting in EVERY_DEVICE) for change in intent.changes)


# --- the base's render, kept between diffs (--base-cache DIR) --------------------------------------
KEPT_BASES = 3  # renders kept in a --base-cache folder (meta-24k's takes about 130 MB)


@dataclass(frozen=True)
class KeptBase:
    """Where the base revision's netgen renders when its render is kept between diffs: its output
    folder and its own state (the key that authenticates the output's manifest) and cache. The next
    diff against the same base is then the base netgen's warm render of its own output: every device
    whose render key is unchanged is kept as written (netgen/render_cache.py), nothing re-rendered.
    Only the base's netgen ever writes here; the head's renders elsewhere."""

    out: Path
    state: Path
    cache: Path


def kept_base(folder: Path, fabric: str, base_id: str) -> KeptBase:
    """The entry of `folder` for `fabric` at commit `base_id` (made, or found again), the
    KEPT_BASES - 1 most recently used other entries kept and older ones removed. `folder` must be
    a private directory of this user's (made so when missing): RevisionError otherwise."""
    top = user_owned_dir(folder)
    if top is None:
        raise RevisionError(f"--base-cache {folder}: not a directory of yours that only you can read and write"
                            " (mode 0700): netgen keeps the base's render and the key that vouches for it there")
    entry = top / hashlib.sha256(f"{fabric}\0{base_id}".encode()).hexdigest()[:24]
    if user_owned_dir(entry) is None:
        raise RevisionError(f"--base-cache {folder}: {entry.name} is not a directory of yours (mode 0700)")
    # The key that vouches for the kept render's manifest lives in this user's own state directory,
    # never in DIR: whoever can write DIR (a CI cache restored from another run, say) could otherwise
    # sign a forged base with it. A kept render the key does not vouch for is rendered again.
    state_root = user_state_dir()
    state = user_owned_dir(state_root / "diff-base-keys" / entry.name) if state_root is not None else None
    if state is None:
        raise RevisionError(f"--base-cache {folder}: no private state directory of yours to keep the key that"
                            " vouches for the kept base in ($XDG_STATE_HOME/netgen or ~/.local/state/netgen)")
    os.utime(entry)  # most recently used
    others = sorted((p for p in top.iterdir() if p != entry and p.is_dir() and not p.is_symlink()),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in others[KEPT_BASES - 1:]:
        shutil.rmtree(stale, ignore_errors=True)
    return KeptBase(entry / "out", state, entry / "cache")


def _whole_trees(base_root: Path, head_root: Path, fabric: str, work: Path, kept: KeptBase | None = None) -> tuple[
        RenderedTree, RenderedTree, dict[str, int], tuple[dict[str, str], dict[str, int | None]]]:
    """Both revisions rendered whole, side by side (one process each with its workers, both cores);
    the head's devices placed (placement_of) meanwhile. `kept`: the base renders into its kept
    output (a warm render after the first diff against that base)."""
    roots, outs = (base_root, head_root), (kept.out if kept else work / "base-out", work / "head-out")
    rendering = [_netgen(base_root, *_render_args(base_root, fabric, outs[0]), state=kept.state, cache=kept.cache)
                 if kept and root == base_root else
                 _netgen(root, *_render_args(root, fabric, out), cache=_cache(work, root, base_root))
                 for root, out in zip(roots, outs, strict=True)]
    try:
        placement = placement_of(head_root, fabric)
    except BaseException:
        for child in rendering:
            child.process.kill()
        _finish_all(rendering)
        raise
    done = _finish_all(rendering)
    old, new = (_rendered(finished, root, fabric, out, lazy=True)
                for finished, root, out in zip(done, roots, outs, strict=True))
    return old, new, {"base": len(old), "head": len(new), "of": len(old.keys() | new.keys())}, placement


def _cache(work: Path, root: Path, base_root: Path) -> Path:
    """A revision's own cache directory (XDG_CACHE_HOME), for its keying and its render: what one
    computes (the ECMP what-if draws, compiled templates) the other reads. Never the other
    revision's: a revision's code is not trusted with what the other renders from."""
    return work / ("cache-base" if root == base_root else "cache-head")


def diff_revisions(repo: Path, fabric: str, base: str, head: str | None,
                   base_cache: Path | None = None) -> RevisionDiff:
    """Render `fabric` at `base` and at `head` (None: the working tree) and compare, with what
    changed in the intent. Where both revisions' netgen can key their devices, only the devices whose
    keys differ are rendered; a change to a setting every switch carries renders both whole, the
    base into `base_cache`'s kept render of that commit when given (kept_base)."""
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
        intent = intent_changes(repo, base_root, head_root, fabric, base_id, None if head is None else head_id)
        if reaches_every_device(intent):
            kept = kept_base(base_cache, fabric, base_id) if base_cache is not None else None
            old, new, rendered, (roles, zones) = _whole_trees(base_root, head_root, fabric, work, kept)
            return compare(old, new, base_name, head_name, fabric, roles, zones, rendered, intent)
        planned = _planned_trees(base_root, head_root, fabric, work)
        if planned is not None:
            old, new, base_plan, head_plan, rendered = planned
            return compare(old, new, base_name, head_name, fabric, base_plan.tiers | head_plan.tiers,
                           base_plan.zones | head_plan.zones, rendered, intent)
        old = render_tree(base_root, fabric, work / "base-out")
        roles, zones = placement_of(base_root, fabric)
        new = _render_head(head_root, fabric, work)
        head_roles, head_zones = placement_of(head_root, fabric)
    return compare(old, new, base_name, head_name, fabric, roles | head_roles, zones | head_zones, intent=intent)
