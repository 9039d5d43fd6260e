"""A wide lab's cables coming up (netgen/lab/link_up.py): the order from the plan, and the ports set
up from one thread in real namespaces."""

from __future__ import annotations

import json
import os
import subprocess
import threading

from netgen.lab.link_up import cable_groups, ports_up, wait_for_cpu
from tests.lab.conftest import lab_name, needs_lab


def test_every_port_comes_up_once_a_rack_at_a_time(plan):
    groups = cable_groups(plan, plan.routers())
    held = sorted((node.name, i.name) for node in plan.routers() for i in node.interfaces if i.kind == "port" and i.up)
    brought = sorted((node, ifname) for group in groups for node, names in group.items() for ifname in names)
    assert brought == held  # each exactly once, no host's and none that is to stay down
    rtsws = [n.name for n in plan.routers("rtsw")]
    # the racks first, in name order, each with the CTSW ends of its own cables
    assert [next(node for node in group if node in rtsws) for group in groups[:len(rtsws)]] == sorted(rtsws)
    first = groups[0]
    rtsw = plan.nodes[rtsws[0]]
    assert sorted(first[rtsw.name]) == sorted(i.name for i in rtsw.interfaces if i.kind == "port" and i.up)
    linked = {link.b if link.a == rtsw.name else link.a for link in plan.links if rtsw.name in (link.a, link.b)}
    assert set(first) == {rtsw.name} | {node for node in linked if plan.nodes[node].kind == "router"}
    # then what is left among the CTSWs and the ATSW layer
    assert not any(node in rtsws for group in groups[len(rtsws):] for node in group)


def test_waiting_for_the_cpu_never_waits_past_its_bound():
    stop = threading.Event()
    busy = [threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)]) for _ in range(2)]
    for thread in busy:
        thread.start()
    try:
        done = threading.Event()
        waiter = threading.Thread(target=lambda: (wait_for_cpu(0.2), done.set()))
        waiter.start()
        waiter.join(timeout=60)  # bounded whatever the machine's load; 60 s only if something is wrong
        assert done.is_set()
    finally:
        stop.set()
        for thread in busy:
            thread.join()


@needs_lab
def test_ports_come_up_in_their_namespaces_and_problems_are_named():
    a, b = f"{lab_name('lu')}-a", f"{lab_name('lu')}-b"
    home = os.stat("/proc/thread-self/ns/net").st_ino
    subprocess.run(["ip", "netns", "add", a], check=True)
    try:
        subprocess.run(["ip", "netns", "add", b], check=True)
        subprocess.run(["ip", "link", "add", "p1", "netns", a, "type", "veth", "peer", "name", "p2", "netns", b],
                       check=True)
        problems = ports_up({a: ["p1"], b: ["p2", "nosuch0"], "absent-ns": ["p3"]})
        assert problems == [f"{b} nosuch0: No such device", "absent-ns: No such file or directory"]
        for ns, port in ((a, "p1"), (b, "p2")):
            link = json.loads(subprocess.run(["ip", "-n", ns, "-j", "link", "show", port], capture_output=True,
                                             text=True, check=True).stdout)[0]
            assert "UP" in link["flags"], (ns, link["flags"])
        # the calling thread never left its own namespace
        assert os.stat("/proc/thread-self/ns/net").st_ino == home
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
