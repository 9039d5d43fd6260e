"""The built wheel works without the checkout: templates, roles and the catalog travel inside it
(setup.py, netgen/resources.py), and the test doubles stay out of it (tests/support). Built with pip
from this repository, installed into a fresh venv (netgen's dependencies come from the test
environment, read-only), run from outside the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.conftest import SMALL

pytestmark = pytest.mark.package

ROOT = Path(__file__).resolve().parents[2]


BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "netgen", "templates", "roles")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from this repository's sources, copied first: setuptools builds in the
    source's build/ and never empties it, so a wheel built in a checkout would still carry a module
    removed since an earlier build there."""
    where = tmp_path_factory.mktemp("wheel")
    source = where / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
        else:
            shutil.copy2(ROOT / name, source / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where / "dist"),
                           str(source)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return next((where / "dist").glob("netgen_fabric-*.whl"))  # the distribution netgen-fabric


@pytest.fixture(scope="module")
def venv(wheel: Path) -> Path:
    """A venv holding only the built wheel; a .pth line lends it this environment's site-packages
    for the dependencies (its .pth files, the editable install's finder among them, are not read)."""
    env = wheel.parent.parent / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "netgen-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           str(wheel)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return env


def _netgen(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "netgen"), *args], capture_output=True, text=True, cwd=cwd,
                          check=False)


def test_the_installed_package_is_the_wheel_with_its_data(venv, tmp_path):
    code = ("import netgen, netgen.resources as r, netgen.deploy.ansible_rollout as a, importlib.metadata as m; "
            "print(netgen.__file__); print(r.TEMPLATES); print(a.DEFAULT_PLAYBOOK.is_file()); "
            "print([e.value for e in m.entry_points(group='nornir.plugins.inventory') if e.name == 'NetgenInventory'])")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          check=True)
    package, templates, playbook, plugin = done.stdout.split("\n")[:4]
    assert package.startswith(str(venv)) and templates.startswith(str(venv))  # not the checkout's
    assert (Path(templates) / "eos" / "device.cfg.j2").is_file() and playbook == "True"
    assert plugin == "['netgen.deploy.nornir_plugin:NetgenInventory']"  # the Nornir plugin's entry point ...
    (entry_points,) = venv.glob("lib/python*/site-packages/netgen_fabric-*.dist-info/entry_points.txt")
    assert "NetgenInventory = netgen.deploy.nornir_plugin:NetgenInventory" in entry_points.read_text()  # ... its own
    assert "netgen = netgen.cli:main" in entry_points.read_text()  # the command keeps its name
    metadata = subprocess.run([str(venv / "bin" / "python"), "-c",
                               "import importlib.metadata as m; print(m.metadata('netgen-fabric')['Name'])"],
                              capture_output=True, text=True, cwd=tmp_path, check=True).stdout.strip()
    assert metadata == "netgen-fabric"


def test_the_wheel_carries_no_test_double_and_needs_no_asyncssh(wheel):
    """The EOS emulator and the SONiC stand-in's faults are tests' (tests/support): none of it is in
    the wheel, and asyncssh, which only the emulator uses, is needed only with the test extra."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = Parser().parsestr(archive.read(metadata).decode()).get_all("Requires-Dist") or []
    assert {n.split("/")[0] for n in names} == {"netgen", metadata.split("/")[0]}  # no tests/ package
    assert not [n for n in names if "emulators" in n.split("/")]
    doubles = {p.name for p in (ROOT / "tests" / "support").glob("*.py") if p.name != "__init__.py"}
    assert doubles and not [n for n in names if Path(n).name in doubles]
    asyncssh = [r for r in requires if r.split(";")[0].strip().lower().startswith("asyncssh")]
    assert asyncssh and all('extra == "test"' in r for r in asyncssh), requires


def test_validate_and_render_outside_the_checkout_match_the_checkouts_render(venv, tmp_path):
    site = tmp_path / "small"
    shutil.copytree(SMALL.parent, site)
    assert _netgen(venv, tmp_path, "validate", str(site)).returncode == 0
    done = _netgen(venv, tmp_path, "render", str(site), "-o", str(tmp_path / "wheel-out"), "--device",
                   "z01-rtsw001", "--device", "z02-rtsw001")
    assert done.returncode == 0, done.stderr
    from tests.conftest import run_cli  # noqa: PLC0415

    assert run_cli("render", str(SMALL), "-o", str(tmp_path / "checkout-out"), "--device", "z01-rtsw001",
                   "--device", "z02-rtsw001").exit_code == 0
    for name in ("z01-rtsw001/config_db.json", "z01-rtsw001/frr.conf", "z02-rtsw001/z02-rtsw001.cfg"):
        assert (tmp_path / "wheel-out" / name).read_text() == (tmp_path / "checkout-out" / name).read_text(), name


def test_diff_of_a_fabric_repository_that_holds_no_netgen(venv, tmp_path):
    """A user's repository of fabric files: each revision is rendered by the installed netgen."""
    repo = tmp_path / "fabrics"
    shutil.copytree(SMALL.parent, repo / "small")
    git = ["git", "-C", str(repo), "-c", "user.email=ci@example.net", "-c", "user.name=ci"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "small"], check=True)
    fabric = repo / "small" / "fabric.yaml"
    text = fabric.read_text()
    fabric.write_text(text.replace("pfc_priority: 3, queue: 3, weight: 50", "pfc_priority: 3, queue: 3, weight: 60")
                      .replace("queue: 0, weight: 50", "queue: 0, weight: 40"))
    done = _netgen(venv, tmp_path, "diff", "small/fabric.yaml", "--base", "HEAD", "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    assert "18 device(s) change" in done.stdout
    assert "small/fabric.yaml:60  qos.lossless.weight: 50 -> 60" in done.stdout
    assert "RISK: QoS maps and scheduling (DSCP, traffic class, queue, DWRR) change on 18 device(s)" in done.stdout
