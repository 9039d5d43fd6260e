"""The netgen.fabric collection: built with the real ansible-galaxy from this repository, installed
from its tarball, checked by ansible-test's sanity tests, its inventory plugin read by the real
ansible-inventory and its rollout playbook run by the real ansible-playbook against emulated EOS
switches (state read from the emulator)."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from netgen.deploy.inventory import load_deploy
from netgen.deploy.rollout import plan_batches
from tests.conftest import ROOT, SMALL, run_cli, topology_of
from tests.deploy.eos_site import PASSWORD

pytestmark = pytest.mark.deploy

BIN = Path(sys.executable).parent
ANSIBLE = {tool: shutil.which(tool, path=str(BIN)) or shutil.which(tool)
           for tool in ("ansible-galaxy", "ansible-inventory", "ansible-playbook", "ansible-test")}
# ansible-test's sanity tests that run with nothing downloaded. The others (ansible-doc, import,
# pep8, pylint, validate-modules, yamllint; changelog and runtime-metadata once there is a file
# for them) each run in a virtualenv of their own that ansible-test fills with pinned packages,
# after bootstrapping pip with a script from ci-files.testing.ansible.com, even with --local:
# nothing this machine or CI reaches. validate-modules' two rules the collection once broke are
# checked below with ansible-test's own rule text instead. pslint and shellcheck are left out:
# the collection has no PowerShell or shell file for them (and no pwsh or shellcheck is installed).
OFFLINE_SANITY_TESTS = ("action-plugin-docs", "compile", "empty-init", "ignores", "line-endings", "no-assert",
                        "no-get-exception", "no-illegal-filenames", "no-smart-quotes", "replace-urlopen", "shebang",
                        "symlinks", "use-argspec-type-path", "use-compat-six")
DISTRIBUTION = "netgen-fabric"  # netgen on PyPI; the PyPI project `netgen` is another one


def _ansible_core_releases() -> list[str]:
    """The ansible-core releases (2.16, ...) pyproject.toml's requirement allows."""
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415  (ansible-core's own dependency)

    requirement = next(line for line in (ROOT / "pyproject.toml").read_text().splitlines()
                       if line.strip().startswith('"ansible-core'))
    allowed = SpecifierSet(requirement.split('"')[1].removeprefix("ansible-core"))
    return [f"2.{minor}" for minor in range(10, 40) if f"2.{minor}.0" in allowed]
needs_ansible = pytest.mark.skipif(None in ANSIBLE.values(), reason="ansible-core is not installed")


@pytest.fixture(scope="module")
def collections(tmp_path_factory) -> Path:
    """The tarball `netgen ansible-collection` builds, installed the way users install one."""
    where = tmp_path_factory.mktemp("collection")
    result = run_cli("ansible-collection", "-o", str(where / "dist"), "--json")
    assert result.exit_code == 0, result.output
    tarball = Path(json.loads(result.stdout)["collection"])
    assert tarball.name == "netgen-fabric-0.1.0.tar.gz" and tarball.is_file()
    done = subprocess.run([ANSIBLE["ansible-galaxy"], "collection", "install", str(tarball), "-p",
                           str(where / "installed")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return where / "installed"


def _installed(collections: Path) -> Path:
    return collections / "ansible_collections" / "netgen" / "fabric"


@pytest.mark.skipif(ANSIBLE["ansible-test"] is None, reason="ansible-core is not installed")
def test_the_built_collection_passes_the_sanity_tests_that_run_offline(collections, tmp_path):
    """The installed tarball, as ansible-test finds a collection (ansible_collections/netgen/fabric),
    with its ignore file for this ansible-core release; HOME is the test's own, so no virtualenv or
    download cached by an earlier run is used."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    command = [ANSIBLE["ansible-test"], "sanity", "--python", python, "--local", "--color", "no"]
    for name in OFFLINE_SANITY_TESTS:
        command += ["--test", name]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=_installed(collections),
                          env={**os.environ, "HOME": str(tmp_path)}, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    ran = set(re.findall(r'Running sanity test "([a-z0-9-]+)"', done.stdout + done.stderr))
    assert ran == set(OFFLINE_SANITY_TESTS), ran
    assert time.monotonic() - started < 120  # a few seconds here; CI's budget is shared


def _assigned_string(path: Path, name: str) -> str:
    """The string a module-level `name = ...` assigns (DOCUMENTATION, or a re.compile's pattern)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = node.value.args[0] if isinstance(node.value, ast.Call) else node.value
            assert isinstance(value, ast.Constant) and isinstance(value.value, str), (path, name)
            return value.value
    raise AssertionError(f"{path}: no {name} = ...")


def _validate_modules_file(name: str) -> Path:
    spec = importlib.util.find_spec("ansible_test")
    assert spec is not None and spec.origin is not None
    return (Path(spec.origin).parent / "_util" / "controller" / "sanity" / "validate-modules" / "validate_modules"
            / name)


@pytest.mark.skipif(importlib.util.find_spec("ansible_test") is None, reason="ansible-core is not installed")
def test_module_and_plugin_meet_validate_modules_author_and_license_rules(collections):
    """validate-modules cannot run offline (see OFFLINE_SANITY_TESTS); these are its two rules the
    collection broke, read from ansible-test's own source: DOCUMENTATION.author lines match its
    `author_line` pattern, and a file without a GPLv3 header in its first 20 lines (its
    `_check_gpl3_header`) is listed as missing-gplv3-license in the ignore file of every
    ansible-core release netgen supports."""
    author_line = re.compile(_assigned_string(_validate_modules_file("schema.py"), "author_line"))
    assert "GNU General Public License" in _validate_modules_file("main.py").read_text()  # the header rule is there
    root = _installed(collections)
    files = sorted(root.glob("plugins/**/*.py"))
    assert [f.relative_to(root).as_posix() for f in files] == ["plugins/inventory/netgen.py",
                                                               "plugins/modules/netgen_deploy.py"]
    for path in files:
        authors = yaml.safe_load(_assigned_string(path, "DOCUMENTATION")).get("author")
        assert authors or "modules" not in path.parts, f"{path.name}: a module's DOCUMENTATION needs an author"
        for author in [authors] if isinstance(authors, str) else authors or []:
            assert author_line.search(author), (path.name, author)
    without_gpl = [f.relative_to(root).as_posix() for f in files
                   if "GNU General Public License" not in "\n".join(f.read_text().split("\n")[:20])]
    releases = _ansible_core_releases()
    assert "2.16" in releases
    for release in releases:
        ignore_file = root / "tests" / "sanity" / f"ignore-{release}.txt"
        assert ignore_file.is_file(), f"no {ignore_file.name} for ansible-core {release}"
        ignores = ignore_file.read_text().splitlines()
        assert ignores == [f"{path} validate-modules:missing-gplv3-license" for path in without_gpl], release


def test_the_collection_says_to_install_netgens_own_distribution(collections):
    """`pip install netgen` installs another project from PyPI (a 2015 IP address planner)."""
    root = _installed(collections)
    told = {path.relative_to(root).as_posix(): re.findall(r"pip install ([A-Za-z0-9._-]+)", path.read_text())
            for path in sorted(root.rglob("*")) if path.suffix in (".md", ".py", ".yml")}
    assert told["README.md"] and told["plugins/inventory/netgen.py"] and told["plugins/modules/netgen_deploy.py"]
    assert {name for names in told.values() for name in names} == {DISTRIBUTION}, told


def _env(collections: Path, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(collections), "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_RETRY_FILES_ENABLED": "0"}


@needs_ansible
def test_the_inventory_plugin_lists_the_fabric_in_rollout_order(collections, tmp_path):
    config = tmp_path / "small.netgen.yml"
    config.write_text(f"plugin: netgen.fabric.netgen\nfabric: {os.path.relpath(SMALL.parent, tmp_path)}\n")
    done = subprocess.run([ANSIBLE["ansible-inventory"], "-i", str(config), "--list"], capture_output=True,
                          text=True, check=False, env=_env(collections, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    topology = topology_of(SMALL)
    assert sorted(listed["_meta"]["hostvars"]) == sorted(topology.devices)
    batches = plan_batches(topology, list(topology.devices), load_deploy(SMALL.parent).rollout)
    assert listed["netgen_rollout"]["hosts"] == [n for b in batches for n in b.devices]
    assert listed["tier_ctsw"]["hosts"] == sorted(n for n, d in topology.devices.items() if d.role.value == "ctsw")
    host = listed["_meta"]["hostvars"]["z02-rtsw001"]
    assert host["ansible_network_os"] == "arista.eos.eos" and host["netgen_fabric"] == str(SMALL.resolve())
    assert host["ansible_host"] == "z02-rtsw001.mgmt.small-lab.example.net"


@needs_ansible
def test_a_bad_fabric_is_a_clear_inventory_error(collections, tmp_path):
    config = tmp_path / "bad.netgen.yml"
    config.write_text("plugin: netgen.fabric.netgen\nfabric: no-such-dir\n")
    done = subprocess.run([ANSIBLE["ansible-inventory"], "-i", str(config), "--list"], capture_output=True,
                          text=True, check=False, env=_env(collections, tmp_path), cwd=tmp_path)
    said = " ".join(done.stderr.split())  # ansible wraps its warnings to the terminal's width
    assert "netgen inventory" in said and "not found" in said, done.stderr[-1500:]


@needs_ansible
def test_the_collections_playbook_rolls_out_through_its_inventory_plugin(collections, fresh, tmp_path):
    """The collection's own playbook (netgen.fabric.rollout) and role, hosts from its inventory plugin:
    check mode changes nothing, then the real run converges the switches."""
    names = fresh.names[:2]
    config = tmp_path / "site.netgen.yml"
    config.write_text(f"plugin: netgen.fabric.netgen\nfabric: {fresh.fabric}\nlimit: {','.join(names)}\n")
    extra = tmp_path / "vars.json"
    extra.write_text(run_cli("ansible-inventory", str(fresh.fabric), "--limit", ",".join(names),
                             "--playbook-vars").stdout)
    command = [ANSIBLE["ansible-playbook"], "-i", str(config), "netgen.fabric.rollout", "-e", f"@{extra}"]
    before = {n: fresh.running(n) for n in names}
    done = subprocess.run([*command, "--check"], capture_output=True, text=True, check=False,
                          env=_env(collections, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert {n: fresh.running(n) for n in names} == before and PASSWORD not in done.stdout
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=_env(collections, tmp_path),
                          cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert done.stdout.count("changed: [") == 2
    for name in names:
        assert fresh.commits(name) == ["commit-timer"]
        assert f"hostname {name}" in fresh.running(name) and "router bgp" in fresh.running(name)
