"""Lab-tier fixtures: a private lab root, unique lab names, a leak detector that proves a lab
left no namespace, interface, process or file behind, and the small example's design context and
whole-fabric lab plan (no lab built) for the tests that read a plan only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.lab.adapters import plan_lab
from netgen.lab.netns import prerequisites
from netgen.lab.plan import LabPlan, SliceRequest
from netgen.topology import expand
from tests.conftest import SMALL, run_cli

MISSING = prerequisites()
needs_lab = pytest.mark.skipif(bool(MISSING), reason="lab tier needs " + "; ".join(MISSING))


@pytest.fixture(scope="module")
def ctx() -> DesignContext:
    """The small example, expanded (each module its own: tests may change what they hold)."""
    loaded = load_fabric(SMALL)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


@pytest.fixture(scope="module")
def plan(ctx: DesignContext) -> LabPlan:
    """The small example's whole fabric as a lab plan, for a lab named "fake" (none is built)."""
    return plan_lab("fake", ctx, SliceRequest())


@pytest.fixture(scope="session", autouse=True)
def lab_root() -> Iterator[Path]:
    # Under /run, not pytest's tmp: FRR drops to user frr and must traverse to its log directory.
    root = Path(f"/run/netgen/test-{os.getpid()}")
    old = os.environ.get("NETGEN_LAB_ROOT")
    os.environ["NETGEN_LAB_ROOT"] = str(root)
    yield root
    if old is None:
        os.environ.pop("NETGEN_LAB_ROOT", None)
    else:
        os.environ["NETGEN_LAB_ROOT"] = old
    shutil.rmtree(root, ignore_errors=True)


_names = iter(range(1, 10_000))


def lab_name(tag: str) -> str:
    """Unique per test run, so a leftover from an aborted run never collides."""
    return f"{tag}{os.getpid() % 100000}x{next(_names)}"[:12]


@dataclass(frozen=True)
class HostSnapshot:
    namespaces: frozenset[str]
    links: frozenset[str]
    frr: frozenset[tuple[int, str]]  # FRR daemons: (pid, command line)

    @classmethod
    def take(cls) -> HostSnapshot:
        ns = subprocess.run(["ip", "-j", "netns", "list"], capture_output=True, text=True, check=True).stdout
        links = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
        daemons = set()
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    cmdline = (proc / "cmdline").read_bytes()
                except OSError:
                    continue
                if cmdline.startswith(b"/usr/lib/frr/"):
                    daemons.add((int(proc.name), cmdline.replace(b"\0", b" ").decode()))
        return cls(frozenset(e["name"] for e in json.loads(ns or "[]")),
                   frozenset(e["ifname"] for e in json.loads(links or "[]")), frozenset(daemons))


def assert_nothing_left(before: HostSnapshot, lab: str) -> None:
    after = HostSnapshot.take()
    assert not {n for n in after.namespaces - before.namespaces if n.startswith(f"{lab}-")}, "namespaces left"
    assert after.links <= before.links, f"host interfaces left: {sorted(after.links - before.links)}"
    # Another lab may be up at the same time: a daemon is this lab's if its log is in the lab's directory.
    leftover = [cmd for _, cmd in after.frr - before.frr if f"/{lab}/nodes/" in cmd]
    assert not leftover, f"FRR processes left: {leftover[:3]}"
    assert not (Path(os.environ["NETGEN_LAB_ROOT"]) / lab).exists(), "lab directory left"
    # lldpd rewrites its command line, so a leftover one is found by its network namespace instead:
    # alive in a namespace that no longer has a name (a lab's, deleted) and is not the host's
    named = {os.stat(f).st_ino for f in Path("/run/netns").glob("*")} if Path("/run/netns").exists() else set()
    named.add(os.stat("/proc/self/ns/net").st_ino)
    orphans = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (proc / "comm").read_text().strip() == "lldpd" and (proc / "stat").read_text().split()[2] != "Z" \
                        and os.stat(proc / "ns" / "net").st_ino not in named:
                    orphans.append(proc.name)
            except OSError:
                continue
    assert not orphans, f"lldpd left in a deleted namespace: {orphans[:5]}"


def cli_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli(*args, "--json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)
