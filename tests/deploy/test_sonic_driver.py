"""The SONiC driver's reads: one `show runningconfiguration all` per round of checks, re-read
after anything that may change the device (netgen/nos/sonic/driver.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from netgen.checks import DesignContext
from netgen.deploy.checks import PlannedNeighbor
from netgen.deploy.driver import DriverError
from netgen.deploy.pipeline import lldp_plan, post_checks
from netgen.intent import load_fabric
from netgen.nos.sonic.driver import RC_MARK, SonicDriver, parse_lldp_table
from tests.conftest import SMALL, run_cli, topology_of

pytestmark = pytest.mark.render
TOPOLOGY = topology_of(SMALL)
DEVICE = TOPOLOGY.devices["z01-rtsw001"]
DUMP = "show runningconfiguration all"


class CountingConnection:
    """Answers like a SONiC shell; counts the commands it was sent."""

    def __init__(self, config_db: dict[str, Any]) -> None:
        self.config_db = config_db
        self.sent: list[str] = []

    def send_command(self, command_string: str, *args: Any, **kwargs: Any) -> str:
        command = command_string.removesuffix(f"; echo {RC_MARK}$?").removeprefix("sudo -n ")
        self.sent.append(command)
        output = json.dumps(self.config_db) if command == DUMP else "{}" if "json" in command or "-j" in command else ""
        return f"{output}\n{RC_MARK}0\n"

    def dumps(self) -> int:
        return self.sent.count(DUMP)


@pytest.fixture
def driver() -> tuple[SonicDriver, CountingConnection]:
    db = {"DEVICE_METADATA": {"localhost": {"hostname": "z01-rtsw001", "hwsku": "x"}},
          "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}}}
    conn = CountingConnection(db)
    files = {"config_db.json": json.dumps(db), "frr.conf": ""}
    return SonicDriver(conn, DEVICE, files, "t1"), conn  # type: ignore[arg-type]


def test_one_dump_per_round_of_checks(driver):
    sonic, conn = driver
    sonic.new_round()
    sonic.facts()
    staged = sonic.stage()
    assert conn.dumps() == 1 and staged.empty
    for expected in (2, 3):  # each round reads afresh, once
        sonic.new_round()
        sonic.pfc_priorities()
        sonic.config_diff()
        sonic.facts()
        assert conn.dumps() == expected


def test_a_command_that_may_change_the_device_drops_the_cached_config(driver):
    sonic, conn = driver
    assert sonic.pfc_priorities() == {"Ethernet0": {3}}
    sonic.run("show interfaces counters -j")  # a read keeps it
    sonic.pfc_priorities()
    assert conn.dumps() == 1
    conn.config_db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,4"
    sonic.run("config apply-patch /tmp/p.json")
    assert sonic.pfc_priorities() == {"Ethernet0": {3, 4}}
    assert conn.dumps() == 2


def test_callers_get_their_own_copy(driver):
    sonic, _ = driver
    sonic.running_config_db()["PORT_QOS_MAP"].clear()
    assert sonic.pfc_priorities() == {"Ethernet0": {3}}


def test_the_post_check_round_of_the_pipeline_dumps_once(driver):
    sonic, conn = driver
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, TOPOLOGY)
    sonic.new_round()
    for check in post_checks(ctx, DEVICE, (), {}, {}):
        check.run(sonic)
    assert conn.dumps() == 1


# `show lldp table` as lldpshow prints it (tabulate's simple format: each column as wide as its
# widest cell or its header plus two); a host NIC that sends no system name, a description with spaces
LLDP_TABLE = """\
Capability codes: (R) Router, (B) Bridge, (O) Other
LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr
-----------  --------------  -----------------  ------------  -----------------------
Ethernet0                    b8:3f:d2:00:00:01                eth2 (ConnectX-7)
Ethernet448  z01-ctsw001     Ethernet3/1/1      BR            z01-rtsw001:Ethernet448
Ethernet456  z01-ctsw002     Ethernet3/1/1      BR
Ethernet456  sonic           etp9               R             spare
--------------------------------------------------
Total entries displayed:  4"""


def test_lldp_table_columns_are_cut_where_the_rule_puts_them():
    assert parse_lldp_table(LLDP_TABLE) == {
        "Ethernet0": [("", "b8:3f:d2:00:00:01")],
        "Ethernet448": [("z01-ctsw001", "Ethernet3/1/1")],
        "Ethernet456": [("z01-ctsw002", "Ethernet3/1/1"), ("sonic", "etp9")]}


def test_an_lldp_table_without_neighbours_is_empty_and_no_table_is_an_error():
    empty = [*LLDP_TABLE.split("\n")[:3], "-" * 50, "Total entries displayed:  0"]
    assert parse_lldp_table("\n".join(empty)) == {}
    with pytest.raises(DriverError, match="is the lldp feature running"):
        parse_lldp_table("\n")  # lldpshow prints nothing when the lldp container is down
    with pytest.raises(DriverError, match="Error: lldpctl"):
        parse_lldp_table("Error: lldpctl failed\n")


def test_lldp_plan_names_the_port_id_each_peer_sends(tmp_path):
    """A SONiC peer is heard by its PORT alias, an EOS peer by its interface name; host NICs by name only."""
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, TOPOLOGY)
    assert run_cli("render", str(SMALL), "-o", str(tmp_path), "--device", "z01-rtsw001").exit_code == 0
    aliases = {name: row["alias"] for name, row in
               json.loads((tmp_path / "z01-rtsw001" / "config_db.json").read_text())["PORT"].items()}
    ports = {p.name: p for p in TOPOLOGY.ports["z01-rtsw001"]}
    uplinks = [p for p in ports.values() if p.peer_device in TOPOLOGY.devices]
    assert uplinks and all(TOPOLOGY.devices[p.peer_device].nos == "eos" for p in uplinks)
    plan = lldp_plan(ctx, DEVICE)
    assert set(plan) == set(ports)
    for port in uplinks:  # the RTSW hears each EOS CTSW's interface name
        assert plan[port.name] == PlannedNeighbor(system=port.peer_device, port=port.peer_port,
                                                  port_ids=(port.peer_port,))
    hosts = [p for p in ports.values() if p.peer_device not in TOPOLOGY.devices]
    assert hosts and all(plan[p.name].port_ids == () for p in hosts)
    # and each CTSW hears this RTSW by the alias its config_db.json gives the port
    for port in uplinks:
        ctsw = TOPOLOGY.devices[port.peer_device]
        assert lldp_plan(ctx, ctsw)[port.peer_port] == PlannedNeighbor(
            system="z01-rtsw001", port=port.name, port_ids=(aliases[port.name],))
        assert aliases[port.name] != port.name
