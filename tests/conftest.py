"""Shared fixtures: the example fabrics as editable dicts, a writer, and an in-process CLI runner."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from netgen.checks import DesignContext, Finding, run_checks
from netgen.cli import cli
from netgen.deploy.inventory import load_deploy
from netgen.deploy.lock import open_store, record_drained, record_undrained
from netgen.intent import load_fabric
from netgen.lock.lease import Lease
from netgen.output.manifest import MARKER
from netgen.topology import Topology, expand

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "inventory" / "small" / "fabric.yaml"
META = ROOT / "inventory" / "meta-24k" / "fabric.yaml"

_SMALL_DATA = yaml.safe_load(SMALL.read_text())


@pytest.fixture(autouse=True, scope="session")
def cache_home(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The user cache (the ECMP what-if's results) of this test session, in and out of process,
    never ~/.cache: a test starts from no cache or from what earlier tests of the session kept."""
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("cache")
        patch.setenv("XDG_CACHE_HOME", str(folder))
        yield folder


@pytest.fixture(autouse=True, scope="session")
def state_home(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The user state directory of this test session (the key that authenticates render
    manifests), in and out of process, never ~/.local/state: one key for the whole session."""
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("state-home")
        patch.setenv("XDG_STATE_HOME", str(folder))
        yield folder


@pytest.fixture(autouse=True)
def state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Deploy journals of a test go to a fresh directory, never to ~/.local/state."""
    folder = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("NETGEN_STATE_DIR", str(folder))
    return folder


@pytest.fixture
def small_data() -> dict[str, Any]:
    """The small example fabric as a plain dict (YAML anchors already merged); safe to mutate."""
    return copy.deepcopy(_SMALL_DATA)


FabricWriter = Callable[..., Path]


@pytest.fixture
def write_fabric(tmp_path: Path) -> FabricWriter:
    """write_fabric(data) -> path of a fabric.yaml in a fresh directory; `text=` writes raw text."""
    counter = iter(range(1_000_000))

    def write(data: Any = None, *, text: str | None = None, catalog: Any = None) -> Path:
        folder = tmp_path / f"fabric{next(counter)}"
        folder.mkdir()
        path = folder / "fabric.yaml"
        path.write_text(text if text is not None else yaml.safe_dump(data, sort_keys=False))
        # the example's secret files, which its fabric names relative to itself (services.users)
        shutil.copytree(SMALL.parent / "secrets", folder / "secrets")
        if catalog is not None:
            (folder / "catalog.yaml").write_text(
                catalog if isinstance(catalog, str) else yaml.safe_dump(catalog, sort_keys=False)
            )
        return path

    return write


def run_cli(*args: str) -> Result:
    """Run netgen in-process. catch_exceptions stays on so a leaked exception shows as a failure."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


def render_tree(out: Path) -> dict[str, Any]:
    """Every file of a render directory by its path in it, as two renders of the same files share
    them: the files' bytes, and the manifest parsed, without what netgen saw of each file when it
    sealed the manifest (its inode and mtime, the seal) and so without its MAC."""
    tree: dict[str, Any] = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    if MARKER in tree:
        doc = json.loads(tree[MARKER])
        doc.pop("mac", None)
        doc.pop("sealed_ns", None)
        for entry in doc.get("files", {}).values():
            entry.pop("inode", None)
            entry.pop("mtime_ns", None)
        tree[MARKER] = doc
    return tree


def topology_of(path: Path) -> Topology:
    loaded = load_fabric(path)
    return expand(loaded.fabric, loaded.catalog)


def findings_of(path: Path) -> list[Finding]:
    loaded = load_fabric(path)
    return run_checks(DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog)))


# --- two workers (pyproject.toml: -n 2) --------------------------------------------------------------
# Each module runs whole in one worker, in file order: its module fixtures are built once (a lab, a
# Nautobot, an emulated fleet) and the tests that build on each other's state (tests/sot/test_push.py)
# keep their order. The modules that run FRR routers in network namespaces share one worker: two labs
# at once would race on the host's interface list, which their teardown checks. (xdist's loadgroup,
# which reads groups from markers, does not group with pytest 9: it renames the test ids it sends.)
NETNS_MODULES = frozenset({"tests/lab/test_netns_lab.py", "tests/lab/test_drain_traffic.py",
                           "tests/lab/test_lab_grow.py", "tests/deploy/test_deploy_sonic.py",
                           "tests/deploy/test_deploy_lost_confirm_sonic.py", "tests/deploy/test_sonic_endpoint.py"})


class ModuleScheduler:
    """Registered only when xdist is loaded, so `-p no:xdist` still runs the suite serially."""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        from xdist.scheduler import LoadScopeScheduling  # noqa: PLC0415  (only with xdist)

        class ModuleScheduling(LoadScopeScheduling):  # type: ignore[misc]
            """xdist's scope scheduling, the scope a module, or "netns" for the lab modules."""

            def _split_scope(self, nodeid: str) -> str:
                module = nodeid.split("::", 1)[0]
                return "netns" if module in NETNS_MODULES else module

        return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The zone tier (tests/lab/test_zone.py) takes both cores for minutes: it runs alone, in a run
    that names it (`pytest -m zone`, .ci/run's last step); any other selection leaves it out."""
    if "zone" in (config.getoption("markexpr") or ""):
        return
    zone = [item for item in items if item.get_closest_marker("zone")]
    if zone:
        config.hook.pytest_deselected(items=zone)
        items[:] = [item for item in items if not item.get_closest_marker("zone")]


def pytest_configure(config: pytest.Config) -> None:
    # netgen's state (journals, the change lock's default store) never goes to ~/.local/state, and
    # each xdist worker has its own: two workers' tests never hold one lock (`state_dir` gives a
    # test a fresh one of its own)
    if not os.environ.get("NETGEN_STATE_DIR"):
        import tempfile  # noqa: PLC0415

        os.environ["NETGEN_STATE_DIR"] = tempfile.mkdtemp(prefix="netgen-test-state-")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(ModuleScheduler(), "netgen-module-scheduler")


# --- CI guard: every tier's prerequisites are installed by .ci/run, so nothing may skip there ---
_skipped: list[str] = []


# The one exception: the clab tier needs a Docker engine, containerlab and NOS images, none of which
# can be obtained on the machines CI runs on (shared/reference/lab.md, section 5).
CI_MAY_SKIP = {"clab"}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and not CI_MAY_SKIP & set(report.keywords):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("CI") and _skipped and exitstatus == 0:
        print(f"\nCI: {len(_skipped)} test(s) skipped, but CI installs every prerequisite: {_skipped[:5]}")
        session.exitstatus = 1


def record_drains(fabric: Path, drained: list[str], undrained: tuple[str, ...] = ()) -> None:
    """The fabric's shared drain state (netgen/deploy/lock.py), as `netgen drain` leaves it: each of
    `drained` recorded drained, each of `undrained` recorded and then undrained."""
    loaded = load_fabric(fabric)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    store = open_store(ctx, fabric, load_deploy(fabric.parent))
    lease = Lease.new("netgen drain (test)", "drain-test", "a test", 60)
    for name in [*drained, *undrained]:
        record_drained(store, name, lease, "a test")
    for name in undrained:
        record_undrained(store, name)


@pytest.fixture(scope="session")
def etcd_url() -> Any:
    """The client URL of Debian's real etcd, one per test session (tests/support/etcd_server.py)."""
    from tests.support import etcd_server  # noqa: PLC0415

    why = etcd_server.prerequisites()
    if why:
        pytest.skip(why)
    with etcd_server.etcd_server() as url:
        yield url
