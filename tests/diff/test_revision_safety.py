"""`netgen diff` runs a revision that is not trusted (a pull request's): its archive must not be able
to write or read outside the directory it is extracted into, whatever the order of its members,
and its code must not see the caller's secrets through its environment.

The malicious revisions are real git commits, built with `git mktree` (which, unlike `git add`,
lets a tree hold a symlink and a directory of the same name, as a hostile push can), each with a
tiny fake netgen that records that it ran, what it read and its environment."""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

from netgen.diff import device_diff, git_export
from netgen.diff.git_export import RevisionError, extract_tree
from netgen.diff.revisions import CHILD_ENV_NAMES, child_environment
from tests.conftest import run_cli

pytestmark = pytest.mark.render
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.net", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.net"}
FILE, LINK = "100644", "120000"
FABRIC = "inventory/small/fabric.yaml"
SECRETS = {"NETGEN_PASSWORD": "hunter2", "NETGEN_USERNAME": "admin", "NETGEN_SSH_KEY": "/home/me/.ssh/id_ed25519",
           "GITHUB_TOKEN": "ghp_secret", "GH_TOKEN": "gho_secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
           "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "MY_API_KEY": "k",
           "VAULT_TOKEN": "v", "DB_PASSWORD": "p", "SOME_SECRET": "s", "PYTHONSTARTUP": "/tmp/evil.py"}
SET_BY_NETGEN = {"PYTHONPATH", "HOME", "TMPDIR", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "XDG_STATE_HOME"}

# `python -m netgen.cli render FABRIC -o OUT --json` in the revision: records that it ran (with its
# environment and what it read as the fabric), then renders one device holding the fabric's text.
FAKE_CLI = """\
import json, os, sys
from pathlib import Path
fabric, out = Path(sys.argv[2]), Path(sys.argv[4])
text = fabric.read_text()
same = os.path.samestat(os.fstat(0), os.stat(os.devnull))
record = {"environ": dict(os.environ), "fabric": text, "stdin_is_devnull": same}
Path(MARKS, f"{os.getpid()}.json").write_text(json.dumps(record))
(out / "dev1").mkdir(parents=True)
(out / "dev1" / "config.txt").write_text(text)
"""


def run(repo: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True, check=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout.decode().strip()


def mktree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object from (path, mode, content or link target); a name may be both a link and a tree."""
    lines, subtrees = [], dict[str, list[tuple[str, str, str]]]()
    for path, mode, data in entries:
        head, _, rest = path.partition("/")
        if rest:
            subtrees.setdefault(head, []).append((rest, mode, data))
        else:
            blob = run(repo, "hash-object", "-w", "--stdin", data=data.encode())
            lines.append(f"{mode} blob {blob}\t{head}")
    lines += [f"040000 tree {mktree(repo, sub)}\t{name}" for name, sub in subtrees.items()]
    return run(repo, "mktree", data="".join(f"{line}\n" for line in lines).encode())


@pytest.fixture
def sandbox(tmp_path, monkeypatch) -> Path:
    """netgen's temporary directories go here, so the extracted tree is sandbox/netgen-diff-*/base
    and `../../outside` from it is sandbox/outside, which holds a sentinel and a secret."""
    box = tmp_path / "sandbox"
    (box / "outside").mkdir(parents=True)
    (box / "outside" / "sentinel.txt").write_text("sentinel\n")
    (box / "outside" / "secret.yaml").write_text("secret: do-not-read\n")
    (tmp_path / "marks").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(box))
    return box


def commit(repo: Path, tag: str, entries: list[tuple[str, str, str]], marks: Path) -> None:
    """A commit holding the fake netgen, a harmless fabric unless `entries` replace it, and `entries`."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        run(repo, "init", "-q")
    cli = f"MARKS = {str(marks)!r}\n" + FAKE_CLI
    paths = {path for path, _, _ in entries}
    base = [("netgen/__init__.py", FILE, ""), ("netgen/cli.py", FILE, cli)]
    base += [(FABRIC, FILE, "name: harmless\n")] if FABRIC not in paths else []
    tree = mktree(repo, base + entries)
    run(repo, "tag", tag, run(repo, "commit-tree", tree, "-m", tag))


def snapshot(top: Path) -> dict[str, tuple[str, str]]:
    """Every path under `top` (no link followed): its kind and its content or link target."""
    seen = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder, name)
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[str(path)] = ("dir", "")
            else:
                seen[str(path)] = ("file", path.read_text(errors="replace"))
    return seen


def diff(repo: Path, ref: str) -> tuple[int, dict]:
    result = run_cli("diff", FABRIC, "--repo", str(repo), "--base", ref, "--head", ref, "--format", "json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


# Each is a set of members that got past the old per-member check (which resolved every path
# against the still empty directory) and then, extracted in archive order, wrote or read outside.
HOSTILE = {
    # zz -> . and then paths through it: zz/up is created as up -> .. (the parent of the tree),
    # zz/up/up as a link *outside* the tree to the sandbox, and the file lands on the sentinel
    # (git archive lists the link zz, then the directory zz/: refused as one name twice)
    "dot-chain-write": ([("zz", LINK, "."), ("zz/up", LINK, ".."), ("zz/up/up", LINK, ".."),
                         ("zz/up/up/outside/sentinel.txt", FILE, "overwritten\n")], "zz"),
    # a link created before the links it goes through: sub/a -> b/../.. is the sandbox once
    # sub/b -> .. exists; no member passes through a link, it is a plain git tree
    "order-chain-read": ([(FABRIC, LINK, "../../sub/a/outside/secret.yaml"), ("sub/a", LINK, "b/../.."),
                          ("sub/b", LINK, "..")], FABRIC),
    # a -> b, b -> ..
    "a-b-chain": ([("a", LINK, "b"), ("b", LINK, ".."), (FABRIC, LINK, "../../a/outside/secret.yaml")], "a"),
    "nested-a-b-chain": ([("sub/a", LINK, "b/.."), ("sub/b", LINK, "..")], "sub/a"),
    # a link to the parent, then a file written through it
    "parent-then-file": ([("up", LINK, ".."), ("up/up/outside/sentinel.txt", FILE, "overwritten\n")], "up"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_revision_is_refused_and_nothing_outside_is_touched(tmp_path, sandbox, case):
    entries, member = HOSTILE[case]
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    commit(repo, "evil", entries, marks)
    before, around = snapshot(sandbox), sorted(p.name for p in tmp_path.iterdir())
    code, report = diff(repo, "evil")
    assert code == 2, report
    assert report["error"].startswith("evil: refusing archive member ")
    assert repr(member) in report["error"], report["error"]
    assert snapshot(sandbox) == before  # nothing written, linked or left over; the sentinel intact
    assert (sandbox / "outside" / "sentinel.txt").read_text() == "sentinel\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == around
    assert not list(marks.iterdir())  # the revision's code never ran, so it read nothing


def test_an_absolute_symlink_is_refused(tmp_path, sandbox):
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    commit(repo, "abs", [(FABRIC, LINK, str(sandbox / "outside" / "secret.yaml"))], marks)
    before = snapshot(sandbox)
    code, report = diff(repo, "abs")
    assert code == 2
    assert report["error"] == (f"abs: refusing archive member {FABRIC!r} (symlink to "
                               f"{str(sandbox / 'outside' / 'secret.yaml')!r} points outside the tree: an absolute "
                               "target)")
    assert snapshot(sandbox) == before and not list(marks.iterdir())


def test_the_error_says_which_symlink_the_chain_went_through(tmp_path, sandbox):
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    commit(repo, "chain", HOSTILE["order-chain-read"][0], marks)
    code, report = diff(repo, "chain")
    assert code == 2
    assert report["error"] == (f"chain: refusing archive member {FABRIC!r} (symlink to "
                               "'../../sub/a/outside/secret.yaml' points outside the tree: climbs out of the tree "
                               "(through sub/a -> b/../..))")


def test_in_tree_symlinks_still_work(tmp_path, sandbox):
    """A normal repository may hold symlinks that stay inside: the diff goes through them."""
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    commit(repo, "links", [("inventory/current", LINK, "small"), ("inventory/small/alias.yaml", LINK, "fabric.yaml"),
                           ("docs/up", LINK, "../inventory/current/.."), ("alias", LINK, "inventory/./current")],
           marks)
    result = run_cli("diff", "inventory/current/alias.yaml", "--repo", str(repo), "--base", "links", "--head",
                     "links", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["changed"] is False
    reads = [json.loads(p.read_text())["fabric"] for p in marks.iterdir()]
    assert reads == ["name: harmless\n", "name: harmless\n"]


def test_the_revision_runs_with_an_allow_listed_environment(tmp_path, sandbox, monkeypatch):
    for name, value in {**SECRETS, "TZ": "UTC", "LC_ALL": "C.UTF-8", "SOURCE_DATE_EPOCH": "1700000000"}.items():
        monkeypatch.setenv(name, value)
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    commit(repo, "env", [], marks)
    code, report = diff(repo, "env")
    assert code == 0, report
    records = [json.loads(p.read_text()) for p in marks.iterdir()]
    assert len(records) == 2  # base and head
    for record in records:
        env = record["environ"]
        assert not SECRETS.keys() & env.keys()
        assert not [value for value in env.values() if value in SECRETS.values()]
        assert set(env) <= CHILD_ENV_NAMES | SET_BY_NETGEN, sorted(set(env) - CHILD_ENV_NAMES - SET_BY_NETGEN)
        assert env["PATH"] == os.environ["PATH"]
        assert (env["TZ"], env["LC_ALL"], env["SOURCE_DATE_EPOCH"]) == ("UTC", "C.UTF-8", "1700000000")
        assert Path(env["PYTHONPATH"]).name in ("base", "head")
        assert env["HOME"] != os.environ.get("HOME") and env["HOME"].startswith(str(sandbox))
        assert env["TMPDIR"].startswith(str(sandbox))
        assert record["stdin_is_devnull"]
    assert not any(p.name.startswith("netgen-") for p in sandbox.iterdir())  # HOME, TMPDIR removed


def test_child_environment_is_an_allow_list(tmp_path):
    parent = {**SECRETS, "PATH": "/usr/bin:/bin", "LANG": "en_US.UTF-8", "LC_TIME": "C", "TZ": "UTC",
              "PYTHONPATH": "/somewhere/else", "HOME": "/root", "TMPDIR": "/var/tmp", "LC_MY_TOKEN": "x",
              "VIRTUAL_ENV": "/venv", "USER": "me", "PYTHONINSPECT": "1", "PYTHONWARNINGS": "error"}
    env = child_environment(tmp_path / "tree", tmp_path / "scratch", parent)
    assert {name: env[name] for name in ("PATH", "LANG", "LC_TIME", "TZ")} == {
        "PATH": "/usr/bin:/bin", "LANG": "en_US.UTF-8", "LC_TIME": "C", "TZ": "UTC"}
    assert env["PYTHONPATH"] == str(tmp_path / "tree")
    assert env["HOME"] == str(tmp_path / "scratch" / "home") and Path(env["HOME"]).is_dir()
    assert env["TMPDIR"] == str(tmp_path / "scratch" / "tmp") and Path(env["TMPDIR"]).is_dir()
    assert set(env) - {"PATH", "LANG", "LC_TIME", "TZ"} <= SET_BY_NETGEN
    assert child_environment(tmp_path / "tree", tmp_path / "scratch", {})["PATH"] == os.defpath


# --- the extraction itself, with archives git cannot make (hard links, fifos, devices) and in
# --- every member order -----------------------------------------------------------------------------


def tar_of(members: list[tuple[str, bytes, str, bytes]]) -> io.BytesIO:
    """A tar of (name, type, link target, content)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind, link, data in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.size = kind, link, len(data)
            info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


@pytest.fixture
def place(tmp_path) -> Path:
    """tmp_path/a/b/tree is extracted into; tmp_path/outside holds a sentinel."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "sentinel.txt").write_text("sentinel\n")
    tree = tmp_path / "a" / "b" / "tree"
    tree.mkdir(parents=True)
    return tree


def extract(members: list[tuple[str, bytes, str, bytes]], dest: Path) -> None:
    with tarfile.open(fileobj=tar_of(members)) as tar:
        extract_tree(tar, dest, "pr-head")


REG, SYM, DIR = tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.DIRTYPE
CHAINS = {  # every order of these is refused before anything is written
    "through-dot": [("zz", SYM, ".", b""), ("zz/up", SYM, "..", b""), ("zz/up/up", SYM, "..", b""),
                    ("zz/up/up/up/outside/sentinel.txt", REG, "", b"overwritten\n")],
    "a-b": [("x/a", SYM, "b/../../..", b""), ("x/b", SYM, "..", b""),
            ("x/a/outside/new.txt", REG, "", b"new\n")],
    "through-file": [("f", REG, "", b"data"), ("f/x", REG, "", b"data")],
    "dir-and-link": [("d", DIR, "", b""), ("d", SYM, "../../..", b""), ("d/outside/new.txt", REG, "", b"x")],
}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_every_order_of_a_symlink_chain_is_refused(tmp_path, place, chain):
    before = snapshot(tmp_path)
    for order in itertools.permutations(CHAINS[chain]):
        with pytest.raises(RevisionError, match=r"^pr-head: refusing archive member '"):
            extract([("netgen/ok.py", REG, "", b"ok\n"), *order], place)
        assert snapshot(tmp_path) == before, order  # refused before the first write


@pytest.mark.parametrize(("member", "refused"), [
    (("netgen/x", tarfile.LNKTYPE, "../../../outside/sentinel.txt", b""), "a hard link"),
    (("netgen/x", tarfile.LNKTYPE, str(Path("/etc/passwd")), b""), "a hard link"),
    (("netgen/x", tarfile.LNKTYPE, "netgen/ok.py", b""), "a hard link"),  # even inside: git makes none
    (("netgen/fifo", tarfile.FIFOTYPE, "", b""), "not a file, directory or symlink"),
    (("netgen/tty", tarfile.CHRTYPE, "", b""), "not a file, directory or symlink"),
    (("netgen/sda", tarfile.BLKTYPE, "", b""), "not a file, directory or symlink"),
    (("netgen/../../../outside/sentinel.txt", REG, "", b"x"), "outside the tree"),
    (("/tmp/x", REG, "", b"x"), "outside the tree"),
    (("netgen/abs", SYM, "/etc", b""), "an absolute target"),
    (("netgen/empty", SYM, "", b""), "an empty target"),
    (("netgen/loop", SYM, "loop/x", b""), "a symlink loop"),
])
def test_special_members_are_refused(tmp_path, place, member, refused):
    before = snapshot(tmp_path)
    with pytest.raises(RevisionError, match=refused) as caught:
        extract([("netgen/ok.py", REG, "", b"ok\n"), member], place)
    assert str(caught.value).startswith(f"pr-head: refusing archive member {member[0]!r} (")
    assert snapshot(tmp_path) == before


def test_a_normal_tree_is_extracted_as_it_is(place):
    extract([("netgen/", DIR, "", b""), ("netgen/ok.py", REG, "", b"ok\n"), ("bin/run", REG, "", b"#!/bin/sh\n"),
             ("docs/latest", SYM, "v2", b""), ("docs/v2/index.md", REG, "", b"# v2\n"),
             ("inventory/current", SYM, "small", b""), ("inventory/small/fabric.yaml", REG, "", b"name: x\n"),
             ("top", SYM, "inventory/current/..", b""), ("./", DIR, "", b"")], place)
    assert (place / "netgen" / "ok.py").read_text() == "ok\n"
    assert (place / "docs" / "latest" / "index.md").read_text() == "# v2\n"
    assert (place / "inventory" / "current" / "fabric.yaml").read_text() == "name: x\n"
    assert os.readlink(place / "top") == "inventory/current/.." and (place / "top").resolve() == place / "inventory"
    assert (place / "netgen" / "ok.py").stat().st_mode & 0o7777 & ~0o644 == 0  # (less under a umask)


def test_the_file_mode_keeps_only_the_executable_bit(place):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("bin/run")
        info.mode, info.size = 0o6777, 3  # setuid, setgid, world-writable
        tar.addfile(info, io.BytesIO(b"x\n\n"))
    buffer.seek(0)
    with tarfile.open(fileobj=buffer) as tar:
        extract_tree(tar, place, "pr-head")
    mode = (place / "bin" / "run").stat().st_mode
    assert mode & 0o7777 & ~0o755 == 0 and mode & 0o100


def test_extraction_does_not_rely_on_the_rules_alone(tmp_path, place, monkeypatch):
    """With the archive checks switched off, a write still never goes through a symlink (each
    directory is opened with O_NOFOLLOW) and a symlink out of the tree is still caught (realpath)."""
    monkeypatch.setattr(git_export, "_safe_members",
                        lambda tar, ref: sorted(tar.getmembers(), key=git_export._creation_order))
    with pytest.raises(RevisionError, match=r"^pr-head: refusing archive member 'up' \(symlink to '\.\./\.\./\.\.'"):
        extract([("up", SYM, "../../..", b"")], place)
    other = place.parent / "other"
    other.mkdir()
    (other / "zz").symlink_to("../../../outside")  # as if a case-folding file system had merged two names
    with pytest.raises(RevisionError, match=r"^pr-head: cannot extract archive member 'zz/sentinel.txt': "):
        extract([("zz/sentinel.txt", REG, "", b"overwritten\n")], other)
    assert (tmp_path / "outside" / "sentinel.txt").read_text() == "sentinel\n"
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["sentinel.txt"]


@pytest.mark.parametrize("rendered", ["[1, 2", "[]", '{"PORT": []}', '{"PORT": {"Ethernet0": 3}}'])
def test_a_malformed_config_db_from_a_revision_gets_a_plain_diff(rendered):
    result = device_diff.diff_device("dev1", {"config_db.json": '{"PORT": {}}'}, {"config_db.json": rendered})
    assert result is not None
    assert result.files["config_db.json"] == ["@@", '-{"PORT": {}}', f"+{rendered}"]  # lines, not fields
