"""Debian's real slurmctld for the slurm tier, run as Debian runs it: started as root, it becomes
SlurmUser=slurm (the user the slurmctld package creates), with its configuration and its own state in
temporary folders, auth/none and no slurmd anywhere."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from netgen.scheduler.hostlist import expand as expand_hostlist

SLURM_USER = "slurm"  # made by Debian's slurmctld package


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prerequisites() -> str | None:
    """Why the controller cannot run here, or None."""
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
def controller_folders() -> Iterator[tuple[Path, Path]]:
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


def slurm_conf(etc: Path, state: Path, nodes: str, node_state: str = "FUTURE", address: str | None = None,
               extra: Iterable[str] = ()) -> Path:
    """slurm.conf declaring the hostlist NODES in NODE_STATE, with ADDRESS as every node's NodeAddr
    when given (one line per node: a range's NodeAddr must list as many addresses). Without an
    address the names do not resolve and slurmctld keeps the nodes FUTURE (hidden from `scontrol show
    node`), whatever their state here."""
    port = free_port()
    if address is None:
        node_lines = [f"NodeName={nodes} CPUs=1 State={node_state}"]
    else:
        node_lines = [f"NodeName={n} NodeAddr={address} CPUs=1 State={node_state}" for n in expand_hostlist(nodes)]
    conf = etc / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=netgen", "SlurmctldHost=localhost", f"SlurmctldPort={port}", f"SlurmdPort={free_port()}",
        "AuthType=auth/none", "CredType=cred/none", f"SlurmUser={SLURM_USER}", "MailProg=/bin/true",
        f"StateSaveLocation={state}", f"SlurmdSpoolDir={state / 'spool'}",
        f"SlurmctldPidFile={state / 'slurmctld.pid'}", f"SlurmctldLogFile={state / 'slurmctld.log'}",
        "TopologyPlugin=topology/tree", "SelectType=select/cons_tres", "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none", "MpiDefault=none", *extra,
        *node_lines, "PartitionName=all Nodes=ALL Default=YES State=UP", ""]))
    return conf


@contextlib.contextmanager
def running_controller(conf: Path, ready: Sequence[str], seen: str) -> Iterator[subprocess.Popen[str]]:
    """slurmctld on CONF (SLURM_CONF=CONF for scontrol), once `scontrol READY...` answers with SEEN in
    its output; terminated after the block. AssertionError with its log when it dies or is not ready
    within a minute."""
    log = Path(next(line for line in conf.read_text().splitlines()
                    if line.startswith("SlurmctldLogFile=")).split("=", 1)[1])
    env = {**os.environ, "SLURM_CONF": str(conf)}
    controller = subprocess.Popen(["slurmctld", "-D", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            shown = subprocess.run(["scontrol", *ready], env=env, capture_output=True, text=True, check=False)
            if shown.returncode == 0 and seen in shown.stdout:
                break
            if controller.poll() is not None:  # it died: say why (its log, or what it printed before one)
                why = (log.read_text() if log.exists() else "")[-2000:] + controller.communicate()[1][-2000:]
                raise AssertionError(f"slurmctld exited with {controller.returncode}: {why}")
            assert time.monotonic() < deadline, shown.stderr
            time.sleep(0.5)
        yield controller
    finally:
        controller.terminate()
        controller.communicate(timeout=30)
