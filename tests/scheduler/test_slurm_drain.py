"""Draining the hosts under a rack switch in Slurm (netgen.scheduler.drain) against Debian's real
slurmctld 22.05, loaded with the topology.conf `netgen scheduler --format slurm` writes for the small
fabric: what a drain and a resume leave is read back with `scontrol show node -o`.

What this tier can show and what it cannot: no slurmd runs, so no job ever runs. The nodes are
declared IDLE (with an address that resolves: an unresolvable name stays FUTURE, hidden from `scontrol
show node`) and SlurmdTimeout=0 keeps the controller from marking them DOWN while the module runs. A
drain here reads back IDLE+DRAIN (Slurm's DRAINED); a resume, IDLE+NOT_RESPONDING (scontrol(1):
RESUME sets "IDLE and NoResp" until the node's slurmd registers). DRAINING (a drain with jobs still
running: ALLOCATED, MIXED or COMPLETING with DRAIN) never happens here: it is tested on scontrol's
one-line output as 22.05 prints it, parsed, not live.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from netgen.intent import load_fabric
from netgen.scheduler.drain import (
    REASON_PREFIX,
    Action,
    Drain,
    NodeState,
    SchedulerDrainError,
    Scontrol,
    drain,
    drain_reason,
    nodes_under,
    parse_nodes,
    resume,
    states,
    wait_drained,
)
from netgen.scheduler.hostlist import expand as expand_hostlist
from netgen.topology import expand
from tests.conftest import SMALL, run_cli
from tests.support.slurm_controller import controller_folders, free_port, prerequisites, running_controller, slurm_conf

pytestmark = pytest.mark.slurm
RTSW = "z01-rtsw003"
UNDER_RTSW = ["z01-r003-h01", "z01-r003-h02"]


@pytest.fixture(scope="module")
def small():
    loaded = load_fabric(SMALL)
    return loaded.fabric, expand(loaded.fabric, loaded.catalog)


@pytest.fixture(scope="module")
def controller():
    """Scontrol for a slurmctld holding the small fabric's hosts, every one IDLE, as its topology.conf
    (netgen's export) names them."""
    why = prerequisites()
    if why:
        pytest.skip(why)
    with controller_folders() as (etc, state):
        topology = etc / "topology.conf"
        result = run_cli("scheduler", str(SMALL), "--format", "slurm", "-o", str(topology))
        assert result.exit_code == 0, result.output
        hosts = ",".join(line.split("Nodes=", 1)[1] for line in topology.read_text().splitlines() if "Nodes=" in line)
        conf = slurm_conf(etc, state, hosts, node_state="IDLE", address="127.0.0.1", extra=["SlurmdTimeout=0"])
        with running_controller(conf, ["show", "node", "-o"], "NodeName="):
            yield Scontrol(env={**os.environ, "SLURM_CONF": str(conf)}, timeout_s=30)


def _scontrol(slurm: Scontrol, *args: str) -> subprocess.CompletedProcess[str]:
    """scontrol itself, beside netgen: what an operator types."""
    return subprocess.run(["scontrol", *args], env=dict(slurm.env or {}), capture_output=True, text=True,
                          check=False)


def _shown(slurm: Scontrol) -> dict[str, str]:
    """Every node's line of `scontrol show node -o`, read without netgen's parser."""
    output = _scontrol(slurm, "show", "node", "-o").stdout
    return {line.split()[0].removeprefix("NodeName="): line for line in output.splitlines() if line}


@pytest.fixture
def slurm(controller):
    """The controller, every node put back to no drain and no reason after the test."""
    yield controller
    for name, line in _shown(controller).items():
        if re.search(r" State=(DOWN|\S*\+DRAIN)", line):
            _scontrol(controller, "update", f"NodeName={name}", "State=RESUME")
    assert all("DRAIN" not in line and "State=DOWN" not in line for line in _shown(controller).values())


def _state_of(line: str) -> str:
    return re.search(r" State=(\S+)", line).group(1)


def _responding(state: str) -> str:
    """STATE less NOT_RESPONDING, which a node keeps from its first RESUME on (no slurmd registers
    here), so a test reads the same after the tests that resumed its nodes before it."""
    return state.replace("+NOT_RESPONDING", "")


def _no_sleep(seconds: float) -> None:
    raise AssertionError(f"waited {seconds} s with nothing left to wait for")


# --- against the real controller ---------------------------------------------------------------------

def test_draining_a_rack_switch_drains_exactly_its_hosts(slurm, small):
    nodes = nodes_under(*small, [RTSW])
    assert nodes == UNDER_RTSW
    before = _shown(slurm)
    reason = drain_reason([RTSW], "replace optics, CHG-1234")
    assert reason == "netgen drain z01-rtsw003: replace optics, CHG-1234"

    results = drain(nodes, reason, slurm)

    assert [(r.node.name, r.action) for r in results] == [(n, Action.DRAINED) for n in nodes]
    assert {(_responding(r.node.state), r.node.drain, r.node.reason) for r in results} == {
        ("IDLE+DRAIN", Drain.DRAINED, reason)}
    after = _shown(slurm)
    assert len(after) == 16
    for name in nodes:  # as scontrol itself shows them, stamped by the user netgen ran as
        assert _responding(_state_of(after[name])) == "IDLE+DRAIN"
        assert f" Reason={reason} [root@" in after[name]
    for name in set(after) - set(nodes):
        assert after[name] == before[name], name
        assert "DRAIN" not in _state_of(after[name]) and "Reason=" not in after[name]
    assert [s.drain for s in wait_drained(nodes, timeout_s=600, scontrol=slurm, sleep=_no_sleep)] == [Drain.DRAINED] * 2
    assert results[0].as_dict() == {"node": "z01-r003-h01", "state": results[0].node.state, "drain": "drained",
                                    "reason": reason, "by_netgen": True, "action": "drained"}


def test_draining_again_changes_nothing(slurm, small):
    nodes = nodes_under(*small, [RTSW])
    reason = drain_reason([RTSW], "first")
    drain(nodes, reason, slurm)
    first = _shown(slurm)

    again = drain(nodes, drain_reason([RTSW], "second, other words"), slurm)

    assert [r.action for r in again] == [Action.ALREADY_DRAINED] * 2
    assert {r.node.reason for r in again} == {reason}  # the first drain's reason kept
    assert _shown(slurm) == first  # nothing sent: the reason's time stamp is the first drain's


def test_resume_returns_the_hosts_and_again_changes_nothing(slurm, small):
    nodes = nodes_under(*small, [RTSW])
    before = _shown(slurm)
    drain(nodes, drain_reason([RTSW], "maintenance"), slurm)

    resumed = resume(nodes, slurm)

    assert [r.action for r in resumed] == [Action.RESUMED] * 2
    # RESUME leaves "IDLE and NoResp" until slurmd registers (scontrol(1)); there is no slurmd here
    assert {(r.node.state, r.node.drain, r.node.reason) for r in resumed} == {
        ("IDLE+NOT_RESPONDING", Drain.NOT_DRAINED, "")}
    after = _shown(slurm)
    assert all("Reason=" not in after[n] for n in nodes)
    assert {n: after[n] for n in set(after) - set(nodes)} == {n: before[n] for n in set(before) - set(nodes)}

    again = resume(nodes, slurm)
    assert [r.action for r in again] == [Action.NOT_DRAINED] * 2
    assert _shown(slurm) == after


def test_a_drain_by_someone_else_is_left_alone_both_ways(slurm, small):
    nodes = nodes_under(*small, [RTSW])
    theirs = "bad GPU, RMA 77"
    assert _scontrol(slurm, "update", "NodeName=z01-r003-h02", "State=DRAIN", f"Reason={theirs}").returncode == 0

    drained = drain(nodes, drain_reason([RTSW], "maintenance"), slurm)
    assert [(r.action, r.node.reason) for r in drained] == [
        (Action.DRAINED, "netgen drain z01-rtsw003: maintenance"), (Action.LEFT_ALONE, theirs)]

    resumed = resume(nodes, slurm)
    assert [(r.action, _responding(r.node.state), r.node.reason) for r in resumed] == [
        (Action.RESUMED, "IDLE", ""), (Action.LEFT_ALONE, "IDLE+DRAIN", theirs)]
    assert f"Reason={theirs} [root@" in _shown(slurm)["z01-r003-h02"]


def test_a_down_host_is_left_alone_and_takes_no_job(slurm, small):
    nodes = nodes_under(*small, [RTSW])
    assert _scontrol(slurm, "update", "NodeName=z01-r003-h01", "State=DOWN", "Reason=dead PSU").returncode == 0

    drained = drain(nodes, drain_reason([RTSW], "maintenance"), slurm)
    assert [(r.action, r.node.base, r.node.drain) for r in drained] == [
        (Action.LEFT_ALONE, "DOWN", Drain.DOWN), (Action.DRAINED, "IDLE", Drain.DRAINED)]
    assert drained[0].node.reason == "dead PSU"  # draining it would have replaced its reason
    wait_drained(nodes, timeout_s=600, scontrol=slurm, sleep=_no_sleep)  # a DOWN node runs no job

    resumed = resume(nodes, slurm)  # RESUME would bring the DOWN node up: left alone
    assert [(r.action, r.node.base, r.node.drain) for r in resumed] == [
        (Action.LEFT_ALONE, "DOWN", Drain.DOWN), (Action.RESUMED, "IDLE", Drain.NOT_DRAINED)]


def test_a_host_slurm_does_not_have_is_a_clean_error(slurm):
    with pytest.raises(SchedulerDrainError) as error:
        states(["z01-r003-h01", "z09-r001-h01"], slurm)
    message = str(error.value)
    assert message.startswith("scontrol show node for z01-r003-h01,z09-r001-h01: not a Slurm node: z09-r001-h01")
    assert "Node z09-r001-h01 not found" in message and "\n" not in message
    with pytest.raises(SchedulerDrainError, match=r"^scontrol show node for z09-r001-h01: exit 1: Node z09-r001-h01 "
                                                  r"not found$"):
        states(["z09-r001-h01"], slurm)


def test_no_controller_is_a_clean_error(controller, tmp_path):
    conf = tmp_path / "slurm.conf"  # a controller nobody runs; scontrol tries for MessageTimeout (10 s by default)
    conf.write_text(re.sub(r"SlurmctldPort=\d+", f"SlurmctldPort={free_port()}",
                           Path(controller.env["SLURM_CONF"]).read_text()) + "MessageTimeout=1\n")
    with pytest.raises(SchedulerDrainError, match=r"^scontrol show node for z01-r003-h\[01-02\]: exit 1: .*controller"):
        states(UNDER_RTSW, Scontrol(env={**os.environ, "SLURM_CONF": str(conf)}))


# --- without a controller ----------------------------------------------------------------------------

def test_the_nodes_under_rack_switches_are_the_hosts_topology_conf_names(small, tmp_path):
    out = tmp_path / "topology.conf"
    assert run_cli("scheduler", str(SMALL), "--format", "slurm", "-o", str(out)).exit_code == 0
    written = {line.split()[0].split("=")[1]: expand_hostlist(line.split("Nodes=")[1])
               for line in out.read_text().splitlines() if "Nodes=" in line}
    assert nodes_under(*small, ["z02-rtsw004", "z01-rtsw001"]) == written["z01-rtsw001"] + written["z02-rtsw004"]
    for name in ("z01-ctsw01", "z01-rtsw009"):
        with pytest.raises(ValueError, match=f"not a rack switch \\(RTSW\\) of fabric small-lab: {name}"):
            nodes_under(*small, [name])


@pytest.mark.parametrize("why", ["two\nlines", "carriage\rreturn", "tab\there", 'a "quoted" word', "it's",
                                 "`id`", "Comment=x", "stamp [root@now]", "bidi \u202eevil", "", "   ", "x" * 201])
def test_a_reason_slurm_would_not_keep_as_one_plain_line_is_refused(why):
    with pytest.raises(ValueError, match="drain reason"):
        drain_reason([RTSW], why)


def test_only_a_reason_netgen_built_drains():
    assert drain_reason(["z01-rtsw004", RTSW, RTSW], " swap PSU (CHG-9), back by 14:00; ok? ") == (
        "netgen drain z01-rtsw[003-004]: swap PSU (CHG-9), back by 14:00; ok?")
    with pytest.raises(ValueError, match="starts with 'netgen drain '"):
        drain(UNDER_RTSW, "maintenance", Scontrol(program="/nonexistent/scontrol"))


def _program(tmp_path: Path, body: str) -> str:
    path = tmp_path / "scontrol"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_scontrol_missing_is_a_clean_error(tmp_path):
    with pytest.raises(SchedulerDrainError) as error:
        states(UNDER_RTSW, Scontrol(program=str(tmp_path / "scontrol")))
    assert str(error.value) == (f"scontrol show node for z01-r003-h[01-02]: cannot run {tmp_path}/scontrol: No such "
                                "file or directory (Debian: slurm-client)")


def test_scontrol_not_answering_in_time_is_a_clean_error(tmp_path):
    slow = Scontrol(program=_program(tmp_path, "exec sleep 30"), timeout_s=0.5)
    drained = [_line(n, "IDLE+DRAIN", f"{REASON_PREFIX}x") for n in UNDER_RTSW]
    with pytest.raises(SchedulerDrainError,
                       match=r"^scontrol update State=RESUME for z01-r003-h\[01-02\]: no answer within 0.5 s$"):
        resume(UNDER_RTSW, _ScriptedScontrol(outputs=drained, then=slow))
    with pytest.raises(SchedulerDrainError, match=r"^scontrol show node for z01-r003-h\[01-02\]: no answer within"):
        states(UNDER_RTSW, slow)


def test_what_scontrol_says_is_shown_safe_and_cut(tmp_path):
    noisy = _program(tmp_path, r"printf 'slurm_update error: \033[2J\033]0;owned\007 forged\nline %0600d\n' 0; exit 1")
    scripted = _ScriptedScontrol(outputs=[_line(n, "IDLE") for n in UNDER_RTSW], then=Scontrol(program=noisy))
    with pytest.raises(SchedulerDrainError) as error:
        drain(UNDER_RTSW, drain_reason([RTSW], "maintenance"), scripted)
    message = str(error.value)
    assert message.startswith("scontrol update State=DRAIN for z01-r003-h[01-02]: exit 1: slurm_update error: "
                              "\\x1b[2J\\x1b]0;owned\\x07 forged\\x0aline 0000")
    assert message.endswith("...") and len(message) < 420 and "\x1b" not in message and "\n" not in message


# --- scontrol's output as 22.05 prints it: the states this tier cannot reach -------------------------

def _line(name: str, state: str, reason: str | None = None, stamp: str = " [root@2026-11-27T02:44:13]",
          tail: str = "") -> str:
    """One node of `scontrol show node -o`, as Debian's 22.05 printed it in this tier."""
    line = (f"NodeName={name} CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=N/A "
            f"AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName={name}  "
            f"RealMemory=1 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1 State={state} ThreadsPerCore=1 TmpDisk=0 "
            f"Weight=1 Owner=N/A MCS_label=N/A Partitions=all  BootTime=None SlurmdStartTime=None "
            f"LastBusyTime=Unknown CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 "
            f"AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s")
    if reason is not None:
        line += f" Reason={reason}{stamp}"
    return line + tail + "\n"


@pytest.mark.parametrize(("state", "expected"), [
    ("ALLOCATED+DRAIN", Drain.DRAINING),  # sinfo: DRAINING, the last job still runs
    ("MIXED+DRAIN", Drain.DRAINING),
    ("IDLE+COMPLETING+DRAIN", Drain.DRAINING),  # a job's epilog still runs
    ("ALLOCATED+DRAIN+NOT_RESPONDING", Drain.DRAINING),
    ("ALLOCATED+FAIL", Drain.DRAINING),  # sinfo: FAILING
    ("IDLE+DRAIN", Drain.DRAINED),
    ("IDLE+DRAIN+NOT_RESPONDING", Drain.DRAINED),
    ("DOWN+DRAIN", Drain.DRAINED),
    ("UNKNOWN+DRAIN", Drain.DRAINED),  # 22.05 before a slurmd registers
    ("IDLE+FAIL", Drain.DRAINED),
    ("DOWN", Drain.DOWN),
    ("DOWN+NOT_RESPONDING", Drain.DOWN),
    ("IDLE", Drain.NOT_DRAINED),
    ("IDLE+NOT_RESPONDING", Drain.NOT_DRAINED),
    ("MIXED", Drain.NOT_DRAINED),
    ("ALLOCATED+COMPLETING", Drain.NOT_DRAINED),
])
def test_states_read_as_slurm_names_them(state, expected):
    (node,) = parse_nodes(_line("z01-r003-h01", state, "netgen drain z01-rtsw003: x")).values()
    assert (node.state, node.drain) == (state, expected)


def test_reasons_read_back_whole():
    output = "".join([
        _line("a1", "IDLE+DRAIN", "netgen drain z01-rtsw003: swap optics, CHG-1 x=y"),
        _line("a2", "IDLE+DRAIN", "hardware [ticket 5] at 09:00", tail=" Comment=rack 3 Extra=x"),
        _line("a3", "IDLE+DRAIN", "no stamp", stamp=""),
        _line("a4", "IDLE+DRAIN", "netgen drainage? no", stamp=""),
        _line("a5", "IDLE"),
        "Node a6 not found\n",
    ])
    nodes = parse_nodes(output)
    assert {n: (s.reason, s.by_netgen) for n, s in nodes.items()} == {
        "a1": ("netgen drain z01-rtsw003: swap optics, CHG-1 x=y", True),
        "a2": ("hardware [ticket 5] at 09:00", False),
        "a3": ("no stamp", False),
        "a4": ("netgen drainage? no", False),
        "a5": ("", False),
    }
    assert not NodeState("a1", "IDLE", "netgen drain z01-rtsw003: x").by_netgen  # a reason without the flag


@dataclass(frozen=True)
class _ScriptedScontrol(Scontrol):
    """`scontrol show node -o` answering each call with the next of `outputs` (a node's line, or a
    list of them for several nodes); every other call, and every call once they run out, to `then`."""

    outputs: list[str] = field(default_factory=list)
    then: Scontrol | None = None

    def run(self, args, nodes):
        if args[0] == "show" and self.outputs:
            wanted = expand_hostlist(args[-1])
            lines = [self.outputs.pop(0) for _ in wanted]
            return 0, "".join(lines)
        assert self.then is not None, f"unexpected scontrol {' '.join(args)}"
        return self.then.run(args, nodes)


class _Clock:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_wait_drained_polls_until_the_last_job_ends():
    jobs_running = [_line("z01-r003-h01", "MIXED+DRAIN", "r"), _line("z01-r003-h02", "IDLE+DRAIN", "r")]
    jobs_ending = [_line("z01-r003-h01", "IDLE+COMPLETING+DRAIN", "r"), _line("z01-r003-h02", "IDLE+DRAIN", "r")]
    done = [_line("z01-r003-h01", "IDLE+DRAIN", "r"), _line("z01-r003-h02", "DOWN+DRAIN", "r")]
    clock = _Clock()
    read = wait_drained(UNDER_RTSW, timeout_s=600, poll_s=10, clock=clock, sleep=clock.sleep,
                        scontrol=_ScriptedScontrol(outputs=jobs_running + jobs_ending + done))
    assert [s.state for s in read] == ["IDLE+DRAIN", "DOWN+DRAIN"]
    assert clock.slept == [10, 10]


def test_wait_drained_gives_up_at_the_timeout_with_what_it_read():
    clock = _Clock()
    read = wait_drained(UNDER_RTSW, timeout_s=25, poll_s=10, clock=clock, sleep=clock.sleep,
                        scontrol=_ScriptedScontrol(outputs=[_line("z01-r003-h01", "ALLOCATED+DRAIN", "r"),
                                                            _line("z01-r003-h02", "IDLE+DRAIN", "r")] * 4))
    assert clock.slept == [10, 10, 5]
    assert [s.drain for s in read] == [Drain.DRAINING, Drain.DRAINED]


def test_netgen_drain_of_a_rack_switch_drains_exactly_its_hosts_in_slurm_first(slurm, tmp_path, monkeypatch):
    """`netgen drain z02-rtsw001 --slurm`: the switch (an EOS RTSW of the small example, on the device
    emulator) and Slurm's real controller. Its two hosts are DRAIN with netgen's reason, read back by
    scontrol beside netgen, before the switch reads back drained; every other node is untouched.
    `netgen undrain` undrains the switch, then resumes exactly those hosts."""
    from tests.deploy.eos_site import make_site  # noqa: PLC0415  (the deploy tier's emulated EOS site)

    monkeypatch.setenv("SLURM_CONF", str(dict(slurm.env or {})["SLURM_CONF"]))
    switch, hosts = "z02-rtsw001", ["z02-r001-h01", "z02-r001-h02"]
    sites = make_site(tmp_path, SMALL, [switch], True, monkeypatch)
    site = next(sites)
    try:
        result = run_cli("drain", str(site.fabric), switch, "--slurm", "--why", "replace QSFP on Ethernet1/1",
                         "--job-wait", "30", "--json")
        report = json.loads(result.stdout)
        assert result.exit_code == 0, report
        assert [(n["node"], n["action"]) for n in report["scheduler"]["nodes"]] == [(h, "drained") for h in hosts]
        assert report["switches"][0]["action"] == "drained"
        shown = _shown(slurm)
        for name, line in shown.items():
            drained = name in hosts
            assert ("+DRAIN" in line) is drained, line
            if drained:
                assert f"Reason={REASON_PREFIX}{switch}: replace QSFP on Ethernet1/1" in line
        journal = [json.loads(line)["state"] for line in Path(report["journal"]).read_text().splitlines()]
        assert journal.index("slurm-drained") < journal.index("draining")  # the hosts first, then the switch

        result = run_cli("undrain", str(site.fabric), switch, "--slurm", "--json")
        report = json.loads(result.stdout)
        assert result.exit_code == 0, report
        assert report["switches"][0]["action"] == "undrained"
        assert [(n["node"], n["action"]) for n in report["scheduler"]["nodes"]] == [(h, "resumed") for h in hosts]
        assert all("DRAIN" not in line for line in _shown(slurm).values())
    finally:
        sites.close()
