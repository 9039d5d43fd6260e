"""An EOS site for the deploy tests: the small example's (or any fabric's) EOS switches as emulated
devices (tests/support/eos_emulator.py) behind real SSH, with a deploy.yaml pointing at them and the
login in NETGEN_USERNAME / NETGEN_PASSWORD. State is read from the emulator, never from netgen."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from netgen.intent import load_fabric
from netgen.intent.secrets import fill_placeholders
from tests.conftest import run_cli, topology_of
from tests.support.eos_emulator import EosDeviceSpec, EosFleet

MODELS = {"arista-7804r3a-36p-eos": "DCS-7804R3A", "arista-7808r3a-36p-eos": "DCS-7808R3A",
          "arista-7060x6-64pe-eos": "DCS-7060X6-64PE"}
PASSWORD = "Sw1tch-Passw0rd-91x"  # the emulator login: must never show up in output
# What the switch owns and the intent never renders: kept by every deploy (the small example renders
# the management interface itself, services.management).
OWNED = ("username admin privilege 15 role network-admin secret sha512 $6$rounds=5000$netgen$notarealhash\n"
         "management ssh\n   idle-timeout 60\n")


# A connection the emulator drops shows up in netmiko only as a command that times out, so the tests
# that drop connections wait this long per lost answer: short, so they stay quick. A site whose test
# drops nothing takes LOADED_COMMAND_TIMEOUT_S, what a busy machine may need to answer under load
# (twenty sessions at once on two cores), so a slow machine makes it slower, never red.
FAULT_COMMAND_TIMEOUT_S = 5.0
LOADED_COMMAND_TIMEOUT_S = 120.0


@dataclass
class Site:
    fabric: Path
    fleet: EosFleet
    names: list[str]
    rendered: dict[str, str]  # device -> rendered EOS config of the original fabric

    def running(self, name: str) -> str:
        return self.fleet.device(name).running_config()

    def commits(self, name: str) -> list[str]:
        return [e.kind for e in self.fleet.device(name).history if e.kind in ("commit", "commit-timer")]

    def deploy(self, *args: str) -> tuple[int, dict]:
        result = run_cli("deploy", str(self.fabric), "--limit", ",".join(self.names), "--json", *args)
        assert "Traceback" not in result.output
        return result.exit_code, json.loads(result.stdout)

    def change_weights(self) -> None:
        """An intent change that touches every device: DWRR weights 50/50 -> 60/40."""
        data = yaml.safe_load(self.fabric.read_text())
        data["qos"]["lossless"]["weight"] = 60
        data["qos"]["classes"][0]["weight"] = 40
        self.fabric.write_text(yaml.safe_dump(data, sort_keys=False))


def body(config: str) -> list[str]:
    """Config lines without comments and `end`; a TACACS+ key as `key <key>`: sent in clear (type 0),
    the switch shows it encrypted (type 7; test_deploy_aaa.py checks the key itself)."""
    return [masked_keys(line) for line in config.splitlines()
            if line.strip() and not line.lstrip().startswith("!") and line.strip() != "end"]


TACACS_KEY = re.compile(r"^((?:tacacs|radius)-server host .* key) [07] \S+$")
BGP_KEY = re.compile(r"^(\s+neighbor \S+ password) [07] \S+$")
# an SNMPv3 user as typed (passphrases) or as EOS shows it (`localized ENGINEID`, keys)
SNMP_KEYS = re.compile(r"^(snmp-server user \S+ \S+ v3)( localized \S+)? auth (\S+) \S+ priv (\S+) \S+$")


def masked_keys(line: str) -> str:
    """A line with its reversible secrets as `<key>`: sent in clear, the switch shows them
    encrypted (TACACS+ and BGP type 7) or localized (SNMPv3); test_deploy_aaa.py checks the secrets."""
    line = TACACS_KEY.sub(r"\1 <key>", line)
    line = BGP_KEY.sub(r"\1 <key>", line)
    return SNMP_KEYS.sub(r"\1 auth \3 <key> priv \4 <key>", line)


def cables(fabric: Path, work: Path) -> dict[str, list[tuple[str, str, str]]]:
    """What each switch of the fabric hears over LLDP when cabled as `netgen cabling` plans it:
    (local port, neighbour, the neighbour's port ID). An EOS neighbour sends its interface name, a
    SONiC one its PORT alias (read from its rendered config_db.json, as SONiC's lldpmgrd reads
    CONFIG_DB), a host NIC a MAC address. Kept per fabric: cabling does not change in these tests."""
    key = fabric.read_text()
    if key in _CABLES:
        return _CABLES[key]
    plan_file, out = work / "cabling.json", work / "cabling-render"
    assert run_cli("cabling", str(fabric), "--format", "json", "-o", str(plan_file)).exit_code == 0
    rows = json.loads(plan_file.read_text())["cables"]
    topology = topology_of(fabric)
    sonic = sorted({n for row in rows for n in (row["a_device"], row["b_device"])
                    if n in topology.devices and topology.devices[n].nos == "sonic"})
    aliases: dict[tuple[str, str], str] = {}
    if sonic:
        devices = [arg for name in sonic for arg in ("--device", name)]
        assert run_cli("render", str(fabric), "-o", str(out), *devices).exit_code == 0
        for name in sonic:
            ports = json.loads((out / name / "config_db.json").read_text())["PORT"]
            aliases.update({(name, port): row["alias"] for port, row in ports.items()})

    def sent(device: str, port: str) -> str:
        if device not in topology.devices:  # a host NIC: a MAC made from its name
            digest = hashlib.sha256(f"{device}:{port}".encode()).hexdigest()
            return ":".join(["b8", *(digest[i:i + 2] for i in range(0, 10, 2))])
        return aliases.get((device, port), port)

    heard: dict[str, list[tuple[str, str, str]]] = {}
    for row in rows:
        a, a_port, b, b_port = row["a_device"], row["a_port"], row["b_device"], row["b_port"]
        heard.setdefault(a, []).append((a_port, b, sent(b, b_port)))
        heard.setdefault(b, []).append((b_port, a, sent(a, a_port)))
    _CABLES[key] = heard
    return heard


_CABLES: dict[str, dict[str, list[tuple[str, str, str]]]] = {}


def make_site(tmp_path: Path, source: Path, names: list[str] | None, converged: bool,
          monkeypatch: pytest.MonkeyPatch, extra: str = "", ownership: dict | None = None,
              command_timeout_s: float = FAULT_COMMAND_TIMEOUT_S,
              booted: dict[str, str] | None = None) -> Iterator[Site]:
    """`extra`: more running config on every device; `ownership`: deploy.yaml's ownership section;
    `command_timeout_s`: how long the deploy waits for one answer (see FAULT_COMMAND_TIMEOUT_S);
    `booted`: device -> the config it boots with instead (e.g. a replacement's day-0 startup-config)."""
    folder = tmp_path / "site"
    folder.mkdir()
    for item in source.parent.glob("*.yaml"):  # the fabric and its catalog, if it has one
        shutil.copy(item, folder / item.name)
    if (source.parent / "secrets").is_dir():  # secret files the fabric names relative to itself
        shutil.copytree(source.parent / "secrets", folder / "secrets")
    topology = topology_of(folder / "fabric.yaml")
    names = names or [n for n, d in topology.devices.items() if d.nos == "eos"]
    out = tmp_path / "rendered"
    devices = [arg for name in names for arg in ("--device", name)]
    assert run_cli("render", str(folder / "fabric.yaml"), "-o", str(out), *devices).exit_code == 0
    # as the deploy sends them: secret placeholders filled (a converged switch holds the real key)
    secrets = load_fabric(folder / "fabric.yaml").fabric.shared_secrets()
    rendered = {n: fill_placeholders((out / n / f"{n}.cfg").read_text(), secrets, n) for n in names}
    specs = {}
    wiring = cables(folder / "fabric.yaml", tmp_path)
    for name in names:
        # the emulator stops reading at `end`: the owned block goes before it
        base = rendered[name].removesuffix("end\n") if converged else f"hostname {name}\n"
        if booted and name in booted:
            base = booted[name].removesuffix("end\n")
        initial = base + OWNED + extra
        specs[name] = EosDeviceSpec(name, model=MODELS[topology.devices[name].model], config=initial,
                                    cables=tuple(wiring.get(name, ())))
    fleet = EosFleet.start(specs, password=PASSWORD)
    deploy = {"management": {"devices": {n: {"host": fleet.endpoint(n)[0], "port": fleet.endpoint(n)[1]}
                                         for n in names}},
              "ssh": {"known_hosts": str(fleet.known_hosts_path), "command_timeout_s": command_timeout_s},
              "rollout": {"workers": 20, "confirm_timeout_s": 120}, **({"ownership": ownership} if ownership else {})}
    (folder / "deploy.yaml").write_text(yaml.safe_dump(deploy))
    monkeypatch.setenv("NETGEN_USERNAME", fleet.username)
    monkeypatch.setenv("NETGEN_PASSWORD", fleet.password)
    try:
        yield Site(folder / "fabric.yaml", fleet, names, rendered)
    finally:
        fleet.stop()
