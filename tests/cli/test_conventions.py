"""One convention across commands (issue 31 #10, #11; docs/reference/conventions.md): --json for
machine output everywhere, FABRIC from the argument, NETGEN_FABRIC or the current directory (never
netgen's own example), `-` for standard input where a file is read, one device matcher (globs) for
--device and --limit, `-o` with a stated kind, full-width tables when piped, and `validate` reading
the secret references a render reads, naming where each is written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from netgen.cli import COMMANDS, cli
from tests.conftest import ROOT, SMALL, run_cli, topology_of

pytestmark = pytest.mark.render


def _leaves() -> dict[str, click.Command]:
    """Every command a user runs ("lab up", "validate", ...), with the command modules loaded."""
    for module in {module for module, _ in COMMANDS.values()}:
        __import__(module)
    found: dict[str, click.Command] = {}

    def walk(prefix: str, group: click.Group) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(f"{prefix}{name} ", command)
            else:
                found[f"{prefix}{name}"] = command

    walk("", cli)
    return found


LEAVES = _leaves()
# Ansible's inventory-script protocol fixes what `ansible-inventory` prints (its errors are JSON documents already)
NO_JSON_FLAG = {"ansible-inventory"}


def _one_document(result: Result) -> dict:
    payload = json.loads(result.stdout)  # the whole of stdout is one document
    assert isinstance(payload, dict)
    assert {"ok", "exit_code"} <= set(payload), sorted(payload)
    assert payload["exit_code"] == result.exit_code, (payload, result.stderr)
    return payload


# --- --json everywhere ------------------------------------------------------------------------------
# Each command with --json, on a path that needs no device, lab, server or network: a result where one is
# cheap, else an early refusal; either way one JSON document on stdout whose exit_code is the exit code.
JSON_CASES = {
    "validate": (["validate", str(SMALL)], 0),
    "show": (["show", str(SMALL)], 0),
    "render": (["render", str(SMALL), "--check", "--device", "z01-rtsw001"], 0),
    "headroom": (["headroom", str(SMALL), "--device", "z01-rtsw001"], 0),
    "hosts": (["hosts", str(SMALL)], 0),
    "infiniband": (["infiniband", str(SMALL)], 0),
    "compare": (["compare", str(SMALL)], 0),
    "scheduler": (["scheduler", str(SMALL), "--format", "slurm"], 0),
    "place": (["place", str(SMALL), "--hosts", "4"], 0),
    "cabling": (["cabling", str(SMALL)], 0),
    "report": (["report", str(SMALL), "-o", "{tmp}/report.html"], 0),
    "schema": (["schema"], 0),
    "diff": (["diff", str(SMALL), "--base", "no-such-revision", "--repo", "{tmp}"], 2),
    "whatif ecmp": (["whatif", "ecmp", str(SMALL), "--qps", "x"], 2),
    "deploy": (["deploy", str(SMALL), "--resume", "x", "--dry-run"], 2),
    "check": (["check", str(SMALL), "--limit", "nothing-*"], 2),
    "recover": (["recover", str(SMALL), "--change-id", "no-such-change"], 2),
    "rollout": (["rollout", str(SMALL), "-e", "no-equals"], 2),
    "sot push": (["sot", "push", str(SMALL), "--nautobot", "http://127.0.0.1:9"], 2),
    "sot pull": (["sot", "pull", str(SMALL), "--nautobot", "http://127.0.0.1:9"], 2),
    "lab up": (["lab", "up", str(SMALL), "--name", "Not-A-Name"], 2),
    "lab export": (["lab", "export", str(SMALL), "-o", "{tmp}/clab", "--name", "Not-A-Name"], 2),
    "lab verify": (["lab", "verify", "--name", "nosuchlab"], 2),
    "lab down": (["lab", "down", "--name", "nosuchlab"], 2),
    "lab grow": (["lab", "grow", str(SMALL), "--name", "nosuchlab"], 2),
    "lab list": (["lab", "list"], 0),
    "lab ib": (["lab", "ib", str(SMALL), "--fail", "no-such-switch"], 2),
    "drain": (["drain", str(SMALL), "no-such-switch"], 2),
    "lock status": (["lock", "status", str(SMALL)], 0),
    "lock break": (["lock", "break", str(SMALL), "--scope", "zone-01", "--why", " "], 2),
    "grow": (["grow", str(SMALL), "--from", str(SMALL)], 0),
    "undrain": (["undrain", str(SMALL), "z01-rtsw001--z01-ctsw01"], 2),
    "replace": (["replace", str(SMALL), "z01-ctsw01", "--day0", "{tmp}/day0"], 2),
    "ansible-collection": (["ansible-collection", "-o", "{tmp}/not-a-dir/file"], None),  # built only if it can be
}


def test_every_command_has_a_json_case_or_says_why_not():
    assert set(JSON_CASES) | NO_JSON_FLAG == set(LEAVES)
    for name, command in LEAVES.items():
        flags = {flag for p in command.params for flag in getattr(p, "opts", [])}
        assert ("--json" in flags) is (name not in NO_JSON_FLAG), name


@pytest.mark.parametrize("name", sorted(set(JSON_CASES) - {"ansible-collection"}))
def test_json_is_one_document_with_ok_and_exit_code(name, tmp_path, monkeypatch):
    monkeypatch.delenv("NAUTOBOT_TOKEN", raising=False)
    monkeypatch.setenv("NETGEN_STATE_DIR", str(tmp_path / "state"))  # the lock's default store
    for variable in ("NETGEN_USERNAME", "NETGEN_PASSWORD", "NETGEN_SSH_KEY"):
        monkeypatch.delenv(variable, raising=False)
    args, expected = JSON_CASES[name]
    result = run_cli(*[a.replace("{tmp}", str(tmp_path)) for a in args], "--json")
    payload = _one_document(result)
    assert result.exit_code == expected, result.output
    assert payload["ok"] is (expected == 0)


def test_diff_format_json_is_a_deprecated_alias_of_json(tmp_path):
    result = run_cli("diff", str(SMALL), "--base", "no-such-revision", "--repo", str(tmp_path), "--format", "json")
    _one_document(result)
    assert result.exit_code == 2 and "deprecated" in result.stderr and "--json" in result.stderr
    assert run_cli("diff", str(SMALL), "--base", "x", "--json", "--format", "markdown").exit_code == 2


# --- FABRIC: the argument, NETGEN_FABRIC, the current directory ---------------------------------------
FABRIC_CASES = [["validate"], ["show"], ["cabling"], ["scheduler", "--format", "slurm"], ["hosts"], ["infiniband"]]


@pytest.mark.parametrize("args", FABRIC_CASES, ids=lambda a: a[0])
def test_fabric_from_netgen_fabric(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NETGEN_FABRIC", str(SMALL.parent))
    result = run_cli(*args, "--json")
    assert _one_document(result)["ok"] is True, result.output


@pytest.mark.parametrize("args", FABRIC_CASES, ids=lambda a: a[0])
def test_fabric_from_the_current_directory(args, monkeypatch):
    monkeypatch.delenv("NETGEN_FABRIC", raising=False)
    monkeypatch.chdir(SMALL.parent)
    result = run_cli(*args, "--json")
    assert _one_document(result)["ok"] is True, result.output


def test_the_command_line_knows_the_loaders_fabric_file_names():
    from netgen.cli import common  # noqa: PLC0415
    from netgen.intent import loader  # noqa: PLC0415

    assert common.FABRIC_FILE_NAMES == loader.FABRIC_FILE_NAMES


def test_the_argument_wins_over_netgen_fabric(tmp_path, monkeypatch):
    monkeypatch.setenv("NETGEN_FABRIC", str(tmp_path / "nothing-here"))
    payload = _one_document(run_cli("validate", str(SMALL), "--json"))
    assert payload["ok"] is True and payload["source"] == str(SMALL)


@pytest.mark.parametrize("name", sorted(n for n, c in LEAVES.items()
                                        if any(p.name == "fabric" for p in c.params) and n != "schema"))
def test_no_fabric_anywhere_is_exit_2_never_the_bundled_example(name, tmp_path, monkeypatch):
    monkeypatch.delenv("NETGEN_FABRIC", raising=False)
    monkeypatch.chdir(tmp_path)  # no fabric.yaml here
    args = {"scheduler": ["--format", "slurm"], "place": ["--hosts", "1"], "diff": ["--base", "HEAD"],
            "sot push": ["--nautobot", "http://x"], "sot pull": ["--nautobot", "http://x"],
            "recover": ["--change-id", "x"], "lab export": ["-o", str(tmp_path / "x")],
            "grow": ["--from", str(SMALL)], "lock break": ["--scope", "zone-01", "--why", "gone"]}.get(name, [])
    result = run_cli(*name.split(), *args)
    assert result.exit_code == 2, result.output
    assert "no FABRIC" in result.stderr and "NETGEN_FABRIC" in result.stderr
    assert "inventory/small" not in result.output
    json_result = run_cli(*name.split(), *args, "--json") if name not in NO_JSON_FLAG else None
    if json_result is not None:
        assert "no FABRIC" in _one_document(json_result)["error"]


def test_diff_without_fabric_in_a_checkout_holding_the_example_is_exit_2(tmp_path, monkeypatch):
    """Before: `netgen diff` fell back to inventory/small/fabric.yaml, netgen's own example."""
    repo = tmp_path / "repo"
    shutil.copytree(SMALL.parent, repo / "inventory" / "small")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.delenv("NETGEN_FABRIC", raising=False)
    monkeypatch.chdir(repo)
    result = run_cli("diff", "--base", "HEAD", "--json")
    assert result.exit_code == 2
    assert "no FABRIC" in _one_document(result)["error"]


@pytest.fixture(scope="module")
def diff_repo(tmp_path_factory) -> Path:
    """A scratch checkout (netgen, its templates and the small example), one commit tagged base."""
    path = tmp_path_factory.mktemp("diff-repo")
    for part in ("netgen", "templates"):
        shutil.copytree(ROOT / part, path / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(SMALL.parent, path / "site")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.net", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.net"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"], ["tag", "base"]):
        subprocess.run(["git", "-C", str(path), *args], check=True, env=env, capture_output=True)
    return path


def test_diff_takes_fabric_from_the_current_directory_inside_the_repository(diff_repo, monkeypatch):
    monkeypatch.delenv("NETGEN_FABRIC", raising=False)
    monkeypatch.chdir(diff_repo / "site")
    result = run_cli("diff", "--base", "base", "--head", "base", "--repo", str(diff_repo), "--json")
    payload = _one_document(result)
    assert result.exit_code == 0, result.output
    assert payload["fabric"] == "site" and payload["changed"] is False
    monkeypatch.setenv("NETGEN_FABRIC", str(SMALL.parent))  # a fabric outside --repo: said, exit 2
    outside = run_cli("diff", "--base", "base", "--repo", str(diff_repo), "--json")
    assert outside.exit_code == 2 and "not inside the repository" in _one_document(outside)["error"]


# --- `-` for standard input ------------------------------------------------------------------------
def test_fabric_dash_reads_standard_input_with_paths_from_the_current_directory(monkeypatch):
    monkeypatch.chdir(SMALL.parent)  # its secrets/ are named relative to the fabric file
    result = CliRunner().invoke(cli, ["validate", "-", "--json"], input=SMALL.read_text())
    payload = _one_document(result)
    assert result.exit_code == 0 and payload["fabric"] == "small-lab", result.output
    assert payload["source"] == "<stdin>"


def test_fabric_dash_is_refused_where_the_files_beside_the_fabric_are_read():
    result = CliRunner().invoke(cli, ["deploy", "-", "--dry-run", "--json"], input=SMALL.read_text())
    assert result.exit_code == 2 and "standard input" in _one_document(result)["error"]


def test_place_free_dash_reads_standard_input():
    free = "z01-r002-h[01-02]\n# a comment\nz02-r001-h01, z01-r003-h02\n"
    result = CliRunner().invoke(cli, ["place", str(SMALL), "--hosts", "2", "--free", "-", "--json"], input=free)
    payload = _one_document(result)
    assert result.exit_code == 0, result.output
    assert sorted(payload["rank_order"]) == ["z01-r002-h01", "z01-r002-h02"]  # the one rack wholly free
    bad = CliRunner().invoke(cli, ["place", str(SMALL), "--hosts", "1", "--free", "-"], input="nosuchhost\n")
    assert bad.exit_code == 2 and "--free <stdin>:1" in bad.stderr
    both = CliRunner().invoke(cli, ["place", "-", "--hosts", "1", "--free", "-"], input="")
    assert both.exit_code == 2 and "both" in both.stderr


# --- globs wherever devices are named ----------------------------------------------------------------
def test_device_takes_globs_and_tokens_like_limit(tmp_path):
    result = run_cli("render", str(SMALL), "--check", "--device", "z01-rtsw*", "--device", "atsw0[1]", "--json")
    assert result.exit_code == 0, result.output
    assert _one_document(result)["devices"] == 4 + 1
    heads = run_cli("headroom", str(SMALL), "--device", "role:atsw", "--json")
    assert [d["device"] for d in _one_document(heads)["devices"]] == ["atsw01", "atsw02"]
    shown = run_cli("show", str(SMALL), "--device", "z02-ctsw0[12],atsw02", "--json")
    assert sorted(d["device"] for d in _one_document(shown)["devices"]) == ["atsw02", "z02-ctsw01", "z02-ctsw02"]
    one = _one_document(run_cli("show", str(SMALL), "--device", "atsw01", "--json"))
    assert one["device"] == "atsw01" and len(one["devices"]) == 1  # one device: its settings stay at the top level


@pytest.mark.parametrize(("command", "pattern", "message"), [
    (["render", str(SMALL), "--check"], "z09-*", "'z09-*' matches no device"),
    (["headroom", str(SMALL)], "role:leaf", "'role:leaf' matches no device"),
    (["show", str(SMALL)], "z01-rtsw01", "unknown device 'z01-rtsw01' (did you mean z01-rtsw001"),
    (["render", str(SMALL), "--check"], "z01-rtsw001,z01-rtsw009", "unknown device 'z01-rtsw009'"),
])
def test_a_device_pattern_matching_nothing_is_exit_2(command, pattern, message):
    result = run_cli(*command, "--device", pattern)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    payload = _one_document(run_cli(*command, "--device", pattern, "--json"))
    assert message in payload["error"]


def test_one_matcher_for_device_and_limit():
    from netgen.topology.selection import match_devices, select  # noqa: PLC0415  (new with the convention)

    devices = topology_of(SMALL).devices
    for pattern in ("z01-*", "role:ctsw", "zone:2", "atsw0?,z02-rtsw00[12]"):
        assert match_devices(devices, [pattern]) == select(list(devices), devices, pattern), pattern
    limited = run_cli("check", str(SMALL), "--limit", "z01-rtsw01", "--json")
    assert limited.exit_code == 2 and "did you mean z01-rtsw001" in _one_document(limited)["error"]


# --- -o with a stated kind; help says the conventions -------------------------------------------------
def test_every_output_option_states_its_kind():
    for name, command in LEAVES.items():
        for param in command.params:
            if isinstance(param, click.Option) and "-o" in param.opts:
                metavar = param.make_metavar(click.Context(command))
                assert metavar in {"FILE", "DIR", "DIRECTORY"}, (name, metavar)


def test_report_without_o_writes_the_page_to_stdout():
    result = run_cli("report", str(SMALL))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.lstrip().lower().startswith("<!doctype html")


def test_cabling_json_without_o_carries_the_plan():
    payload = _one_document(run_cli("cabling", str(SMALL), "--json"))
    assert payload["text"].startswith("zone,rack,tier,") and payload["format"] == "csv"


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_help_states_the_conventions(name):
    result = run_cli(*name.split(), "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "Command conventions" in text and "0 ok, 1 design errors" in text
    if any(p.name == "fabric" for p in LEAVES[name].params):
        assert "$NETGEN_FABRIC" in text and "current directory" in text
    assert "Push the files" not in text  # `check --configs` pushes nothing


# --- full-width tables when piped -----------------------------------------------------------------------
@pytest.mark.parametrize(("args", "row"), [
    (["show", str(SMALL)], ("arista-7804r3a-36p-eos (reference)", "6442.5MB")),
    (["headroom", str(SMALL), "--device", "z01-ctsw01"], ("16: Ethernet3/1/1 .. Ethernet3/16/1", "315,392 (300m)")),
])
def test_tables_are_full_width_when_piped(args, row):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    # stdout and stderr pipes, stdin no terminal: nothing to take a width from
    done = subprocess.run([sys.executable, "-m", "netgen.cli", *args], capture_output=True, stdin=subprocess.DEVNULL,
                          text=True, env=env, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) > 80
    assert any(row[0] in line and row[1] in line and len(line) > 80 for line in lines), done.stdout


# --- validate reads what render reads, at the reference's line and column --------------------------------
def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(SMALL.parent, site)
    return site


def _position(fabric: Path, needle: str, key: str) -> tuple[int, int]:
    for number, line in enumerate(fabric.read_text().splitlines(), 1):
        if needle in line:
            return number, line.index(key) + 1
    raise AssertionError(needle)


def test_validate_names_a_missing_secret_file_with_file_line_and_column(tmp_path):
    site = _site(tmp_path)
    (site / "secrets" / "netops.sha512").unlink()
    fabric = site / "fabric.yaml"
    line, column = _position(fabric, "sha512: {file: secrets/netops.sha512}", "file:")
    result = run_cli("validate", str(site))
    assert result.exit_code == 2, result.output
    where = f"{fabric}:{line}:{column}: services.users[0].sha512: file {site}/secrets/netops.sha512 cannot be read"
    assert where in " ".join(result.stderr.split())
    (problem,) = _one_document(run_cli("validate", str(site), "--json"))["input_errors"]
    assert (problem["file"], problem["line"], problem["column"], problem["path"]) == (
        str(fabric), line, column, "services.users[0].sha512")
    rendered = run_cli("render", str(site), "-o", str(tmp_path / "out"))  # the render says the same, where
    assert rendered.exit_code == 2 and f"{fabric}:{line}:{column}: services.users[0].sha512" in rendered.stderr


def test_validate_warns_at_the_line_of_a_key_only_the_deploy_reads(tmp_path):
    site = _site(tmp_path)
    (site / "secrets" / "tacacs.key").unlink()
    fabric = site / "fabric.yaml"
    line, column = _position(fabric, "key: {file: secrets/tacacs.key}", "file:")
    result = run_cli("validate", str(site), "--json")
    payload = _one_document(result)
    assert result.exit_code == 0 and payload["ok"] is True
    (warning,) = payload["input_warnings"]
    assert (warning["line"], warning["column"], warning["path"]) == (line, column, "services.aaa.tacacs.key")
    assert "netgen deploy" in warning["message"]
    text = run_cli("validate", str(site))
    assert f"{fabric}:{line}:{column}: services.aaa.tacacs.key" in " ".join(text.stdout.split())


def test_validate_refuses_a_secret_path_that_is_no_regular_file(tmp_path):
    site = _site(tmp_path)
    (site / "secrets" / "netops.sha512").unlink()
    os.mkfifo(site / "secrets" / "netops.sha512")  # would block a plain read
    result = run_cli("validate", str(site))
    assert result.exit_code == 2 and "is not a regular file" in result.stderr
