"""`netgen scheduler --format slurm` loaded by Debian's real slurmctld (22.05, topology/tree): the
controller starts with the generated topology.conf beside a slurm.conf declaring every host, and
`scontrol show topology` lists every switch at its level with its hosts and child switches."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from netgen.scheduler.hostlist import compress
from netgen.scheduler.hostlist import expand as expand_hostlist
from tests.conftest import ROOT, SMALL, run_cli

pytestmark = pytest.mark.slurm
META = ROOT / "inventory" / "meta-24k"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prerequisites() -> str | None:
    if os.geteuid() != 0:
        return "slurmctld runs as root here (SlurmUser=root, auth/none)"
    missing = [tool for tool in ("slurmctld", "scontrol") if shutil.which(tool) is None]
    return f"{', '.join(missing)} not installed (Debian: slurmctld, slurm-client)" if missing else None


def _slurm_conf(folder: Path, nodes: str) -> Path:
    port = _free_port()
    conf = folder / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=netgen", "SlurmctldHost=localhost", f"SlurmctldPort={port}", f"SlurmdPort={_free_port()}",
        "AuthType=auth/none", "CredType=cred/none", "SlurmUser=root", "MailProg=/bin/true",
        f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}", f"SlurmctldLogFile={folder / 'slurmctld.log'}",
        "TopologyPlugin=topology/tree", "SelectType=select/cons_tres", "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none", "MpiDefault=none",
        f"NodeName={nodes} CPUs=1 State=FUTURE", "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
    (folder / "state").mkdir()
    (folder / "spool").mkdir()
    return conf


def _show_topology(fabric: Path, folder: Path) -> tuple[str, str, str]:
    """Start slurmctld on FABRIC's topology; `scontrol show topology`, the topology.conf, the log."""
    topology = folder / "topology.conf"
    result = run_cli("scheduler", str(fabric), "--format", "slurm", "-o", str(topology))
    assert result.exit_code == 0, result.output
    hosts = [w for line in topology.read_text().splitlines() if "Nodes=" in line
             for w in expand_hostlist(line.split("Nodes=", 1)[1])]
    conf = _slurm_conf(folder, compress(hosts))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    controller = subprocess.Popen(["slurmctld", "-D", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            shown = subprocess.run(["scontrol", "show", "topology"], env=env, capture_output=True, text=True,
                                   check=False)
            if shown.returncode == 0 and "SwitchName=" in shown.stdout:
                break
            assert controller.poll() is None, (folder / "slurmctld.log").read_text()[-2000:]
            assert time.monotonic() < deadline, shown.stderr
            time.sleep(0.5)
    finally:
        controller.terminate()
        controller.wait(timeout=30)
    return shown.stdout, topology.read_text(), (folder / "slurmctld.log").read_text()


@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_slurmctld_loads_the_tree_and_lists_every_switch(fabric, tmp_path):
    why = _prerequisites()
    if why:
        pytest.skip(why)
    shown, conf, log = _show_topology(fabric, tmp_path)
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
