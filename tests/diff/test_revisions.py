"""`netgen diff` on a scratch git repository holding netgen, its templates and the small example:
each revision is rendered by its own code, and the diff shows exactly what changed."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from netgen.diff.git_export import RevisionError, _safe_members
from netgen.diff.revisions import EVERY_DEVICE
from netgen.intent.fabric import Fabric
from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.render
FABRIC = "inventory/small/fabric.yaml"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.net", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.net"}


def git(repo: Path, *args: str) -> str:
    import os  # noqa: PLC0415

    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("repo")
    for part in ("netgen", "templates"):
        shutil.copytree(ROOT / part, path / part, ignore=shutil.ignore_patterns("__pycache__"))
    (path / "inventory" / "small").mkdir(parents=True)
    data = yaml.safe_load((ROOT / FABRIC).read_text())
    # zones of different sizes cannot share one declared ATSW ratio; drop it for the rack test
    del data["aggregation"]["expected_oversubscription"]
    (path / FABRIC).write_text(yaml.safe_dump(data, sort_keys=False))
    shutil.copytree(ROOT / "inventory" / "small" / "secrets", path / "inventory" / "small" / "secrets")
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    git(path, "tag", "base")
    return path


def commit_change(repo: Path, tag: str, change) -> None:
    git(repo, "checkout", "-q", "base")
    data = yaml.safe_load((repo / FABRIC).read_text())
    change(data)
    (repo / FABRIC).write_text(yaml.safe_dump(data, sort_keys=False))
    git(repo, "commit", "-q", "-am", tag)
    git(repo, "tag", tag)
    git(repo, "checkout", "-q", "base")


def netgen_diff(repo: Path, *args: str) -> tuple[int, dict]:
    result = run_cli("diff", FABRIC, "--repo", str(repo), "--format", "json", *args)
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def test_identical_revisions_print_no_changes(repo):
    result = run_cli("diff", FABRIC, "--repo", str(repo), "--base", "base", "--head", "base")
    assert result.exit_code == 0 and result.stdout.startswith("no changes:")
    assert run_cli("diff", FABRIC, "--repo", str(repo), "--base", "base", "--exit-code").exit_code == 0


def test_one_more_rack_only_adds(repo):
    commit_change(repo, "rack5", lambda d: d["zones"][0].update(racks=5))
    code, report = netgen_diff(repo, "--base", "base", "--head", "rack5", "--exit-code")
    assert code == 1 and report["changed"]
    kinds = {d["device"]: d["kind"] for d in report["devices"]}
    assert kinds.pop("z01-rtsw005") == "added"
    # the new rack's downlinks land on zone 1's spines; nothing else changes
    assert kinds == dict.fromkeys(["z01-ctsw01", "z01-ctsw02", "z01-ctsw03", "z01-ctsw04"], "changed")
    assert report["risks"] == []  # new sessions and ports: nothing fabric-wide, no AS, timer or MTU changes
    for device in report["devices"]:
        for lines in device["files"].values():
            removed = [line[1:].strip() for line in lines if line.startswith("-") and not line.startswith("---")]
            # the only lines that go are a spare cage's placeholders as it is put into service
            assert set(removed) <= {"description spare", "shutdown"}, removed[:5]


def test_a_dscp_change_shows_the_same_field_on_every_device_and_flags_qos(repo):
    commit_change(repo, "dscp24", lambda d: d["qos"]["lossless"].update(dscp=[24]))
    code, report = netgen_diff(repo, "--base", "base", "--head", "dscp24")
    assert code == 0  # no --exit-code
    assert len(report["devices"]) == 18
    # issue 33: QoS maps, PFC and buffers are flags of their own, each with the places it reaches
    assert report["risks"] == ["QoS maps and scheduling (DSCP, traffic class, queue, DWRR) change on 18 device(s)"
                               " (rtsw 8, ctsw 8, atsw 2): 36 place(s)"]
    for device in report["devices"]:
        if "config_db.json" in device["files"]:
            assert device["files"]["config_db.json"] == ["~ DSCP_TO_TC_MAP|AZURE.24: 0 -> 3",
                                                         "~ DSCP_TO_TC_MAP|AZURE.26: 3 -> 0"]
        else:
            (lines,) = device["files"].values()
            changed = [line for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---")]
            assert any("qos map dscp" in line and "24" in line for line in changed if line.startswith("+"))
    summary = report["summary"]
    assert sum(row["devices"] for row in summary.values()) == 18
    assert set(summary) == {"rtsw", "ctsw", "atsw"}


def _bgp(data, **changes):
    data["bgp"].update(changes)


@pytest.mark.parametrize(("tag", "change", "flag"), [
    ("mtu9000", lambda d: d.update(mtu=9000), "MTU change on 18 device(s) (rtsw 8, ctsw 8, atsw 2)"),
    ("timers", lambda d: _bgp(d, keepalive_s=5, hold_s=15),
     "BGP or BFD timers change on 18 device(s) (rtsw 8, ctsw 8, atsw 2)"),
    ("bfd", lambda d: d["bgp"]["bfd"].update(multiplier=4),
     "BGP or BFD timers change on 18 device(s) (rtsw 8, ctsw 8, atsw 2)"),
    ("spine-asn", lambda d: d["asn"].update(ctsw_base=4200000100),
     "BGP AS numbers change on 18 device(s) (rtsw 8, ctsw 8, atsw 2)"),
    ("payload", lambda d: d["hashing"]["payload_bytes"].update(last=8), "ECMP hashing change on"),
])
def test_a_fabric_wide_change_is_flagged_with_its_reach_by_tier(repo, tag, change, flag):
    """An MTU, AS, timer or hashing change on every switch is what a reviewer must not miss: one
    flag says what kind of change it is and how far it reaches, tier by tier."""
    commit_change(repo, tag, change)
    _, report = netgen_diff(repo, "--base", "base", "--head", tag)
    assert any(risk.startswith(flag) for risk in report["risks"]), report["risks"]
    flags = {risk.split(" change ")[0] for risk in report["risks"]}
    if tag == "mtu9000":
        assert flags == {"MTU"}, report["risks"]  # nothing else is said to change
        # every switch carries the MTU: both revisions rendered whole, without keying them first
        assert report["rendered"] == {"base": 18, "head": 18, "of": 18}
        assert [(c["path"], c["old"], c["new"]) for c in report["intent"]["changes"]] == [("mtu", "9100", "9000")]


def test_changes_from_a_custom_block_are_marked_with_its_name(repo):
    def change(data):  # the example's blocks: snmp-location on z01-rtsw001, errdisable-recovery on z02-rtsw001
        data["custom_config"][5]["sonic_config_db"]["SNMP"]["LOCATION"]["Location"] = "hall-1 row-08"
        data["custom_config"][4]["eos_cli"] = "errdisable recovery interval 900\n"

    commit_change(repo, "custom", change)
    code, report = netgen_diff(repo, "--base", "base", "--head", "custom")
    assert code == 0
    files = {d["device"]: d["files"] for d in report["devices"]}
    assert sorted(files) == ["z01-rtsw001", "z02-rtsw001"]
    assert files["z01-rtsw001"]["config_db.json"] == [
        "~ SNMP|LOCATION.Location: hall-1 row-07 -> hall-1 row-08  [custom_config snmp-location]"]
    assert set(files["z01-rtsw001"]) == {"config_db.json"}  # custom-config.json: same block, same field
    lines = files["z02-rtsw001"]["z02-rtsw001.cfg"]
    changed = [line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ["-errdisable recovery interval 600", "+errdisable recovery interval 900"]
    # the unified diff's context shows whose lines they are
    assert " ! custom_config errdisable-recovery" in files["z02-rtsw001"]["z02-rtsw001.cfg"]


def test_a_zone_override_changes_exactly_the_switches_it_reaches(repo):
    # services.overrides[0] gives zone 2 its NTP pair; z02-rtsw001 has its own server (overrides[1])
    commit_change(repo, "ntp-zone2", lambda d: d["services"]["overrides"][0]["ntp"].update(servers=["192.0.2.200"]))
    code, report = netgen_diff(repo, "--base", "base", "--head", "ntp-zone2")
    assert code == 0
    files = {d["device"]: d["files"] for d in report["devices"]}
    zone2 = [f"z02-rtsw00{i}" for i in (2, 3, 4)] + [f"z02-ctsw0{i}" for i in range(1, 5)]
    assert sorted(files) == sorted(zone2)  # not z02-rtsw001, nothing in zone 1 or the ATSW layer
    for name in zone2:
        (lines,) = files[name].values()
        changed = [line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        assert changed == ["-ntp server vrf mgmt 192.0.2.125 iburst", "-ntp server vrf mgmt 192.0.2.126 iburst",
                           "+ntp server vrf mgmt 192.0.2.200 iburst"], (name, changed)


def test_markdown_is_a_pull_request_comment(repo):
    commit_change(repo, "dscp24b", lambda d: d["qos"]["lossless"].update(dscp=[24]))
    result = run_cli("diff", FABRIC, "--repo", str(repo), "--base", "base", "--head", "dscp24b",
                     "--format", "markdown")
    text = result.stdout
    assert result.exit_code == 0
    assert text.startswith("### netgen: 18 device(s) change (rtsw 8, ctsw 8, atsw 2)")
    assert "**What changed in the intent**" in text and "| `inventory/small/fabric.yaml:" in text
    assert "> **Risk:** QoS maps and scheduling (DSCP, traffic class, queue, DWRR) change on 18" in text
    # one folded block per distinct change: the SONiC RTSWs' DSCP_TO_TC_MAP, every EOS switch's `qos map`
    assert text.count("<details>") == 2 and len(text) < 65536
    assert "<details><summary>14 devices (8 ctsw in zones 1-2, 4 rtsw in zone 2, 2 atsw): changed" in text


def test_the_markdown_comment_and_the_whole_json_come_from_one_run(repo, tmp_path):
    """--json-file: what a CI artifact keeps beside the folded comment, the --json document itself;
    a link at FILE is refused (exit 2, naming it), never written through."""
    commit_change(repo, "dscp24c", lambda d: d["qos"]["lossless"].update(dscp=[24]))
    args = ("diff", FABRIC, "--repo", str(repo), "--base", "base", "--head", "dscp24c")
    saved = tmp_path / "diff.json"
    result = run_cli(*args, "--format", "markdown", "--json-file", str(saved))
    assert result.exit_code == 0 and result.stdout.startswith("### netgen: 18 device(s) change")
    assert json.loads(saved.read_text()) == json.loads(run_cli(*args, "--json").stdout)
    target = tmp_path / "elsewhere"
    target.write_text("kept\n")
    (tmp_path / "link.json").symlink_to(target)
    refused = run_cli(*args, "--json-file", str(tmp_path / "link.json"))
    assert refused.exit_code == 2 and "link.json" in refused.stderr and "symbolic link" in refused.stderr
    assert target.read_text() == "kept\n"


def test_a_two_line_qos_change_reads_in_one_screen(repo):
    """Issue 15: DWRR weights 50/50 -> 60/40 touch all 18 switches; the diff shows each distinct
    change once with the devices it reaches: under 80 lines in text and in markdown."""
    def change(data):
        data["qos"]["lossless"]["weight"] = 60
        data["qos"]["classes"][0]["weight"] = 40

    commit_change(repo, "weights", change)
    text = run_cli("diff", FABRIC, "--repo", str(repo), "--base", "base", "--head", "weights").stdout
    markdown = run_cli("diff", FABRIC, "--repo", str(repo), "--base", "base", "--head", "weights",
                       "--format", "markdown").stdout
    assert len(text.splitlines()) < 80 and len(markdown.splitlines()) < 80, (len(text.splitlines()),
                                                                             len(markdown.splitlines()))
    headers = [line for line in text.splitlines() if line.startswith("=== ")]
    assert headers == [
        "=== 10 devices (8 ctsw in zones 1-2, 2 atsw) (changed, +2 -2 each): atsw01..atsw02,"
        " z01-ctsw01..z01-ctsw04, z02-ctsw01..z02-ctsw04",
        "=== 4 devices (4 rtsw in zone 1) (changed, +2 -2 each): z01-rtsw001..z01-rtsw004",
        "=== 4 devices (4 rtsw in zone 2) (changed, +2 -2 each): z02-rtsw001..z02-rtsw004"]
    assert "~ SCHEDULER|scheduler.best-effort.weight: 50 -> 40\n~ SCHEDULER|scheduler.roce.weight: 50 -> 60" in text
    assert text.count("-      bandwidth percent 50") == 4  # two queues, two EOS groups: each shown once
    _, report = netgen_diff(repo, "--base", "base", "--head", "weights")
    assert [len(g["devices"]) for g in report["groups"]] == [10, 4, 4]
    # issue 33: a device's change is its edits (an RFC 6902 patch per device was most of a 54 MB
    # document for a fabric-wide change); `config apply-patch` patches come from deploy, not diff
    files = next(d for d in report["devices"] if d["device"] == "z01-rtsw001")["files"]
    assert files == {"config_db.json": ["~ SCHEDULER|scheduler.best-effort.weight: 50 -> 40",
                                        "~ SCHEDULER|scheduler.roce.weight: 50 -> 60"]}


def test_a_kept_base_render_gives_the_same_diff_and_is_the_bases_own_warm_render(repo, tmp_path, monkeypatch):
    """--base-cache DIR: the first fabric-wide diff renders the base into DIR, a second one against
    the same base keeps every file there as written (the base's netgen finds its own keys unchanged:
    the same inodes), and both diffs are the diff without DIR. DIR must be the user's own and private."""
    commit_change(repo, "mtu-kept", lambda d: d.update(mtu=9000))
    _, plain = netgen_diff(repo, "--base", "base", "--head", "mtu-kept")
    kept = tmp_path / "kept"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    _, first = netgen_diff(repo, "--base", "base", "--head", "mtu-kept", "--base-cache", str(kept))
    (entry,) = kept.iterdir()
    # the key that vouches for the kept render is the user's, outside DIR: whoever can write DIR
    # cannot sign a forged base (before: DIR/<entry>/state held it)
    assert not [p for p in kept.rglob("*") if p.name.endswith(".key")]
    assert list((tmp_path / "state" / "netgen" / "diff-base-keys" / entry.name).rglob("*.key"))
    assert oct(kept.stat().st_mode & 0o777) == "0o700" and oct(entry.stat().st_mode & 0o777) == "0o700"
    # the EOS switches' configs (zone 1's SONiC RTSWs carry custom_config FRR lines: not cacheable)
    inodes = {p.relative_to(entry): p.stat().st_ino for p in (entry / "out").rglob("*.cfg")}
    assert len(inodes) == 14
    _, second = netgen_diff(repo, "--base", "base", "--head", "mtu-kept", "--base-cache", str(kept))
    assert {p.relative_to(entry): p.stat().st_ino for p in (entry / "out").rglob("*.cfg")} == inodes
    assert first["devices"] == second["devices"] == plain["devices"] and first["risks"] == plain["risks"]
    kept.chmod(0o755)  # readable by others: netgen will not trust what it keeps there
    code, refused = netgen_diff(repo, "--base", "base", "--head", "mtu-kept", "--base-cache", str(kept))
    assert code == 2 and "--base-cache" in refused["error"] and "0700" in refused["error"]


def test_bad_revision_is_exit_2(repo):
    code, report = netgen_diff(repo, "--base", "no-such-ref")
    assert code == 2 and "is not a commit" in report["error"]


def test_a_revision_with_design_errors_is_exit_2_naming_them(repo):
    commit_change(repo, "blocking", lambda d: d["zones"][0].update(ctsw_count=2))
    code, report = netgen_diff(repo, "--base", "base", "--head", "blocking")
    assert code == 2 and "NG101" in report["error"]


@pytest.mark.parametrize(("name", "kind", "link", "refused"), [
    ("../escape.txt", tarfile.REGTYPE, "", "outside the tree"),
    ("/etc/cron.d/x", tarfile.REGTYPE, "", "outside the tree"),
    ("templates/evil", tarfile.SYMTYPE, "../../../etc/passwd", "points outside"),
    ("dev/sda", tarfile.BLKTYPE, "", "not a file"),
])
def test_a_revision_archive_cannot_write_outside_its_tree(name, kind, link, refused):
    """A pull request's tree is not trusted: git archive members are checked before extraction
    (Debian 12's Python 3.11.2 has no tarfile extraction filters)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        good = tarfile.TarInfo("netgen/ok.py")
        tar.addfile(good, io.BytesIO(b""))
        bad = tarfile.TarInfo(name)
        bad.type, bad.linkname = kind, link
        tar.addfile(bad, io.BytesIO(b""))
    buffer.seek(0)
    with tarfile.open(fileobj=buffer) as tar, pytest.raises(RevisionError, match=refused):
        _safe_members(tar, "pr-head")
    buffer.seek(0)
    with tarfile.open(fileobj=buffer) as tar:
        tar.members = [m for m in tar.getmembers() if m.name == "netgen/ok.py"]
        assert [m.name for m in _safe_members(tar, "pr-head")] == ["netgen/ok.py"]


def test_the_head_keeps_the_bases_files_of_every_device_the_change_does_not_reach(repo, tmp_path):
    """The head renders into the base's output: devices whose render key is the base's keep the
    base's very files (same inodes), and the diff is what rendering both afresh gives."""
    from netgen.diff.git_export import export_revision  # noqa: PLC0415
    from netgen.diff.revisions import _render_head, render_tree  # noqa: PLC0415

    commit_change(repo, "ntp-zone2-keep",
                  lambda d: d["services"]["overrides"][0].update(ntp={"servers": ["192.0.2.9"]}))
    for ref in ("base", "ntp-zone2-keep"):
        (tmp_path / ref).mkdir()
        export_revision(repo, ref, tmp_path / ref)
    work = tmp_path / "work"
    work.mkdir()
    base = render_tree(tmp_path / "base", FABRIC, work / "base-out")
    inodes = {p: p.stat().st_ino for p in (work / "base-out").rglob("*") if p.is_file()}
    head = _render_head(tmp_path / "ntp-zone2-keep", FABRIC, work)
    assert not (work / "head-out").exists()
    kept = {p.parent.name for p, inode in inodes.items() if p.exists() and p.stat().st_ino == inode}
    changed = {name for name in base if base[name] != head.get(name)}
    assert changed == {f"z02-{tier}{n:0{3 if tier == 'rtsw' else 2}d}" for tier in ("rtsw", "ctsw")
                       for n in range(1, 5)} - {"z02-rtsw001"}  # z02-rtsw001 has its own NTP server
    # everything unchanged and cacheable was kept (zone 1's SONiC RTSWs carry custom FRR lines)
    assert kept == set(base) - changed - {f"z01-rtsw00{n}" for n in range(1, 5)}
    assert head == render_tree(tmp_path / "ntp-zone2-keep", FABRIC, tmp_path / "fresh-out")


def test_only_the_devices_whose_keys_differ_are_rendered_and_the_diff_is_a_full_renders(repo, tmp_path):
    """Both revisions are keyed first (`render --keys-only`); the devices whose keys are equal render
    to the same files and are not rendered at all. The diff is the one two whole renders give."""
    from netgen.diff.device_diff import compare  # noqa: PLC0415
    from netgen.diff.git_export import export_revision  # noqa: PLC0415
    from netgen.diff.revisions import render_tree  # noqa: PLC0415

    commit_change(repo, "ntp-zone2-plan",
                  lambda d: d["services"]["overrides"][0].update(ntp={"servers": ["192.0.2.9"]}))
    code, doc = netgen_diff(repo, "--base", "base", "--head", "ntp-zone2-plan")
    assert code == 0
    zone2 = {f"z02-{tier}{n:0{3 if tier == 'rtsw' else 2}d}" for tier in ("rtsw", "ctsw") for n in range(1, 5)}
    assert {d["device"] for d in doc["devices"]} == zone2 - {"z02-rtsw001"}
    # zone 2 but z02-rtsw001 (its own NTP server: same key), plus zone 1's four SONiC RTSWs, whose
    # custom FRR lines make them uncacheable
    assert doc["rendered"] == {"base": 11, "head": 11, "of": 18}
    whole = {}
    for ref in ("base", "ntp-zone2-plan"):
        (tmp_path / ref).mkdir()
        export_revision(repo, ref, tmp_path / ref)
        whole[ref] = render_tree(tmp_path / ref, FABRIC, tmp_path / f"{ref}-out")
    full = compare(whole["base"], whole["ntp-zone2-plan"], "b", "h", FABRIC).as_dict()
    placed = ("tier", "zone")  # the keying's placement; compare() alone has none
    assert [{k: v for k, v in d.items() if k not in placed} for d in doc["devices"]] == [
        {k: v for k, v in d.items() if k not in placed} for d in full["devices"]]


def test_a_base_whose_netgen_cannot_key_is_rendered_whole(repo):
    """A revision from before `render --keys-only` (its netgen refuses the option): both sides are
    rendered whole, with the same diff."""
    git(repo, "checkout", "-q", "base")
    cli_file = repo / "netgen" / "cli" / "fabric.py"
    source = cli_file.read_text()
    assert '"--keys-only", is_flag' in source
    cli_file.write_text(source.replace('"--keys-only", is_flag', '"--not-yet", "keys_only", is_flag'))
    git(repo, "commit", "-q", "-am", "netgen without --keys-only")
    git(repo, "tag", "old-netgen")
    git(repo, "checkout", "-q", "base")
    code, doc = netgen_diff(repo, "--base", "old-netgen", "--head", "base")
    assert code == 0
    assert doc["rendered"] is None
    assert not doc["changed"]


@pytest.mark.parametrize(("base", "head", "rendered_base", "rendered_head"), [
    ({"a": "1", "b": "2"}, {"a": "1", "b": "2"}, [], []),
    ({"a": "1", "b": "2"}, {"a": "1", "b": "3"}, ["b"], ["b"]),
    ({"a": None, "b": "2"}, {"a": None, "b": "2"}, ["a"], ["a"]),  # not cacheable: always rendered
    ({"a": "1"}, {"a": "1", "c": "4"}, [], ["c"]),  # added
    ({"a": "1", "d": "5"}, {"a": "1"}, ["d"], []),  # removed
])
def test_changed_devices(base, head, rendered_base, rendered_head):
    from netgen.diff.revisions import RenderPlan, changed_devices  # noqa: PLC0415

    def plan(keys):
        return RenderPlan(keys, dict.fromkeys(keys, "rtsw"), dict.fromkeys(keys, 1))

    assert changed_devices(plan(base), plan(head)) == (rendered_base, rendered_head)


def test_every_setting_that_reaches_every_device_is_a_field_of_the_fabric_file() -> None:
    """EVERY_DEVICE names fabric-file settings by their YAML path; one renamed in the intent model
    would silently stop matching (the diff would stay right, only slower), so each must resolve."""
    def annotation_model(annotation: object) -> type[BaseModel] | None:
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        return next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)

    for setting in EVERY_DEVICE:
        model: type[BaseModel] | None = Fabric
        for part in setting.split("."):
            assert model is not None and part in model.model_fields, f"{setting}: no field {part!r}"
            model = annotation_model(model.model_fields[part].annotation)
