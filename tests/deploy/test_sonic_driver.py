"""The SONiC driver's reads: one `show runningconfiguration all` per round of checks, re-read
after anything that may change the device (netgen/deploy/drivers/sonic.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from netgen.checks import DesignContext
from netgen.deploy.drivers.sonic import RC_MARK, SonicDriver
from netgen.deploy.pipeline import post_checks
from netgen.intent import load_fabric
from tests.conftest import SMALL, topology_of

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
