"""`netgen scheduler --format slurm` loaded by Debian's real slurmctld (22.05, topology/tree): the
controller starts with the generated topology.conf beside a slurm.conf declaring every host, and
`scontrol show topology` lists every switch at its level with its hosts and child switches.

The controller runs as Debian runs it: started as root with SlurmUser=slurm, it reads topology.conf
as the `slurm` user (the package creates it), so the file netgen writes as root, under a root shell's
umask 022, must be readable by another user, also after netgen replaced it. 22.05 has no
topology/block: the block files are checked against the plugin's source in test_versions.py.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
from pathlib import Path

import pytest

from netgen.scheduler.hostlist import compress
from netgen.scheduler.hostlist import expand as expand_hostlist
from tests.conftest import ROOT, SMALL, run_cli
from tests.support.slurm_controller import SLURM_USER, controller_folders, prerequisites, running_controller, slurm_conf

pytestmark = pytest.mark.slurm
META = ROOT / "inventory" / "meta-24k"


def _effective_user(pid: int) -> str:
    uids = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Uid:"))
    return pwd.getpwuid(int(uids.split()[2])).pw_name  # Uid: real, effective, saved, file system


def _show_topology(fabric: Path, *network: str) -> tuple[str, str, str]:
    """Start slurmctld (as the slurm user) on FABRIC's topology, written by netgen as root under umask
    022 and then replaced by a second export; `scontrol show topology`, the topology.conf, the log."""
    with controller_folders() as (etc, state):
        topology = etc / "topology.conf"
        previous = os.umask(0o022)  # a root shell's
        try:
            for _ in ("written", "replaced"):
                result = run_cli("scheduler", str(fabric), "--format", "slurm", "-o", str(topology), *network)
                assert result.exit_code == 0, result.output
            hosts = [w for line in topology.read_text().splitlines() if "Nodes=" in line
                     for w in expand_hostlist(line.split("Nodes=", 1)[1])]
            conf = slurm_conf(etc, state, compress(hosts))
        finally:
            os.umask(previous)
        with running_controller(conf, ["show", "topology"], "SwitchName=") as controller:
            shown = subprocess.run(["scontrol", "show", "topology"], env={**os.environ, "SLURM_CONF": str(conf)},
                                   capture_output=True, text=True, check=True)
            running_as = _effective_user(controller.pid)
        assert running_as == SLURM_USER
        return shown.stdout, topology.read_text(), (state / "slurmctld.log").read_text()


@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_slurmctld_loads_the_tree_and_lists_every_switch(fabric):
    why = prerequisites()
    if why:
        pytest.skip(why)
    shown, conf, log = _show_topology(fabric)
    listed = {m.group(1): m for m in re.finditer(r"^SwitchName=(\S+) Level=(\d+)(.*)$", shown, re.M)}
    written = [line.split()[0].split("=", 1)[1] for line in conf.splitlines() if line.startswith("SwitchName=")]
    assert sorted(listed) == sorted(written)
    racks = [n for n in written if "-rtsw" in n]
    zones = [n for n in written if re.fullmatch(r"z\d\d", n)]
    assert {listed[n].group(2) for n in racks} == {"0"} and {listed[n].group(2) for n in zones} == {"1"}
    assert listed["atsw"].group(2) == "2"
    expected = {"small": (8, 2, 16), "meta-24k": (1536, 8, 3072)}[fabric.name if fabric.is_dir() else "small"]
    assert (len(racks), len(zones)) == expected[:2]
    top_nodes = expand_hostlist(re.search(r"Nodes=(\S+)", listed["atsw"].group(3)).group(1))
    assert len(top_nodes) == expected[2]  # every host reachable from the top switch
    assert "switches lack access" not in log and "Invalid hostnames" not in log


@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_slurmctld_loads_the_infiniband_alternatives_tree(fabric):
    """`--network infiniband`: hosts under the leaves they share on every rail, zones under the core."""
    why = prerequisites()
    if why:
        pytest.skip(why)
    shown, _, log = _show_topology(fabric, "--network", "infiniband")
    listed = {m.group(1): m for m in re.finditer(r"^SwitchName=(\S+) Level=(\d+)(.*)$", shown, re.M)}
    groups = [n for n in listed if "-leaves" in n]
    assert {listed[n].group(2) for n in groups} == {"0"} and listed["ibcore"].group(2) == "2"
    expected = {"small": (2, 16), "meta-24k": (96, 3072)}[fabric.name if fabric.is_dir() else "small"]
    top_nodes = expand_hostlist(re.search(r"Nodes=(\S+)", listed["ibcore"].group(3)).group(1))
    assert (len(groups), len(top_nodes)) == expected
    assert "switches lack access" not in log and "Invalid hostnames" not in log
