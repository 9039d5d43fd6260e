"""`netgen scheduler --format slurm` loaded by Debian's real slurmctld (22.05, topology/tree): the
controller starts with the generated topology.conf beside a slurm.conf declaring every host, and
`scontrol show topology` lists every switch at its level with its hosts and child switches.

The controller runs as Debian runs it: started as root with SlurmUser=slurm, it reads topology.conf
as the `slurm` user (the package creates it), so the file netgen writes as root, under a root shell's
umask 022, must be readable by another user, also after netgen replaced it. 22.05 has no
topology/block: the block files are checked against the plugin's source in test_versions.py.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
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


SLURM_USER = "slurm"  # made by Debian's slurmctld package


def _prerequisites() -> str | None:
    if os.geteuid() != 0:
        return "slurmctld is started as root and becomes SlurmUser=slurm, as Debian's unit starts it"
    missing = [tool for tool in ("slurmctld", "scontrol") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed (Debian: slurmctld, slurm-client)"
    try:
        pwd.getpwnam(SLURM_USER)
    except KeyError:
        return f"no user {SLURM_USER} (Debian's slurmctld package makes it)"
    return None


@contextlib.contextmanager
def _controller_folders() -> Iterator[tuple[Path, Path]]:
    """(the configuration folder, root's like /etc/slurm; the controller's own, the slurm user's like
    /var/lib/slurm), outside pytest's tmp_path, whose root is private to root."""
    top = Path(tempfile.mkdtemp(prefix="netgen-slurm-"))
    try:
        top.chmod(0o755)
        etc, state = top / "etc", top / "state"
        etc.mkdir(mode=0o755)
        state.mkdir(mode=0o755)
        user = pwd.getpwnam(SLURM_USER)
        os.chown(state, user.pw_uid, user.pw_gid)
        yield etc, state
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _slurm_conf(etc: Path, state: Path, nodes: str) -> Path:
    port = _free_port()
    conf = etc / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=netgen", "SlurmctldHost=localhost", f"SlurmctldPort={port}", f"SlurmdPort={_free_port()}",
        "AuthType=auth/none", "CredType=cred/none", f"SlurmUser={SLURM_USER}", "MailProg=/bin/true",
        f"StateSaveLocation={state}", f"SlurmdSpoolDir={state / 'spool'}",
        f"SlurmctldPidFile={state / 'slurmctld.pid'}", f"SlurmctldLogFile={state / 'slurmctld.log'}",
        "TopologyPlugin=topology/tree", "SelectType=select/cons_tres", "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none", "MpiDefault=none",
        f"NodeName={nodes} CPUs=1 State=FUTURE", "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
    return conf


def _effective_user(pid: int) -> str:
    uids = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("Uid:"))
    return pwd.getpwuid(int(uids.split()[2])).pw_name  # Uid: real, effective, saved, file system


def _show_topology(fabric: Path) -> tuple[str, str, str]:
    """Start slurmctld (as the slurm user) on FABRIC's topology, written by netgen as root under umask
    022 and then replaced by a second export; `scontrol show topology`, the topology.conf, the log."""
    with _controller_folders() as (etc, state):
        topology = etc / "topology.conf"
        previous = os.umask(0o022)  # a root shell's
        try:
            for _ in ("written", "replaced"):
                result = run_cli("scheduler", str(fabric), "--format", "slurm", "-o", str(topology))
                assert result.exit_code == 0, result.output
            hosts = [w for line in topology.read_text().splitlines() if "Nodes=" in line
                     for w in expand_hostlist(line.split("Nodes=", 1)[1])]
            conf = _slurm_conf(etc, state, compress(hosts))
        finally:
            os.umask(previous)
        log = state / "slurmctld.log"
        env = {**os.environ, "SLURM_CONF": str(conf)}
        controller = subprocess.Popen(["slurmctld", "-D", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                shown = subprocess.run(["scontrol", "show", "topology"], env=env, capture_output=True, text=True,
                                       check=False)
                if shown.returncode == 0 and "SwitchName=" in shown.stdout:
                    break
                if controller.poll() is not None:  # it died: say why (its log, or what it printed before one)
                    why = (log.read_text() if log.exists() else "")[-2000:] + controller.communicate()[1][-2000:]
                    raise AssertionError(f"slurmctld exited with {controller.returncode}: {why}")
                assert time.monotonic() < deadline, shown.stderr
                time.sleep(0.5)
            running_as = _effective_user(controller.pid)
        finally:
            controller.terminate()
            controller.communicate(timeout=30)
        assert running_as == SLURM_USER
        return shown.stdout, topology.read_text(), log.read_text()


@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_slurmctld_loads_the_tree_and_lists_every_switch(fabric):
    why = _prerequisites()
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
