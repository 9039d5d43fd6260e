"""The host files against the programs that read them (issue 31, host side): /bin/sh sourcing nccl.env,
NCCL's own config-file parser reading nccl.conf, the NIC drivers reading the QoS scripts' values, and
every DSCP's priority on the NIC against the rendered switch configs. NCCL, mlnx_qos and the NIC drivers
are not on this machine: their readers are re-implemented below from their sources, each cited."""

from __future__ import annotations

import dataclasses
import json
import re
import string
import subprocess
from pathlib import Path

import orjson
import pytest
import yaml

from netgen.checks import DesignContext, run_checks
from netgen.hosts import plan as host_plan
from netgen.hosts.files import render_hosts
from netgen.hosts.plan import plan_hosts
from netgen.intent import load_fabric
from netgen.topology import expand
from tests.conftest import SMALL, findings_of, run_cli

pytestmark = pytest.mark.render

DSCPS = range(64)


# --- NCCL's config-file reader ----------------------------------------------------------------------
# NVIDIA/nccl src/misc/param.cc, setEnvFile (read at github:NVIDIA/nccl 5067397c, tags v2.18.1-1 to
# v2.30.7-1). Three generations of the line rules; the rest is the same in all of them.
NCCL_230 = "2.30"  # v2.30.3+: fgets into char line[4096]; strips one '\n' then one '\r'; skips '#' lines
NCCL_226 = "2.26"  # v2.26.2-v2.29: getline; skips a line whose first byte is '#', then strips one '\n'
NCCL_218 = "2.18"  # v2.18-v2.25: getline; strips one '\n'; no comment rule at all
NCCL_GENERATIONS = (NCCL_230, NCCL_226, NCCL_218)
NCCL_FIELD = 1023  # char envVar[1024], envValue[1024]: strncpy(..., 1023) then a NUL


def _c_lines(data: bytes, generation: str) -> list[bytes]:
    """The lines as the C loop sees them: getline returns a whole line with its '\\n'; fgets at most
    4095 bytes, so a longer line arrives in pieces, each handled as a line of its own."""
    lines = data.splitlines(keepends=True)
    if generation != NCCL_230:
        return lines
    return [line[i:i + 4095] for line in lines for i in range(0, len(line), 4095)]


def nccl_set_env_file(data: bytes, environ: dict[str, str], generation: str) -> None:
    """setEnvFile's rules: a line without '=' is skipped; the name is every byte before the first '='
    and the value every byte after it, verbatim (no trimming, no quotes, no escapes), each cut at 1023
    bytes; ncclOsSetEnv / setenv(name, value, 0) leaves a name already in the environment alone."""
    for raw in _c_lines(data, generation):
        line = raw
        if generation == NCCL_226 and line.startswith(b"#"):
            continue
        if line.endswith(b"\n"):
            line = line[:-1]
        if generation == NCCL_230 and line.endswith(b"\r"):
            line = line[:-1]
        if generation == NCCL_230 and line.startswith(b"#"):
            continue
        line = line.split(b"\0", 1)[0]  # C strings end at a NUL
        if b"=" not in line:
            continue
        name, value = line.split(b"=", 1)
        environ.setdefault(name[:NCCL_FIELD].decode(), value[:NCCL_FIELD].decode())


def test_the_nccl_parser_model_keeps_nccls_quirks():
    """The re-implementation reads what NCCL reads, quirks included (which is why nccl.conf has none)."""
    quirks = b"# a=b\nX = 1\nY='2'\nZ=3\r\nZ=4\n"
    old, new = {}, {}
    nccl_set_env_file(quirks, old, NCCL_218)
    nccl_set_env_file(quirks, new, NCCL_230)
    assert old == {"# a": "b", "X ": " 1", "Y": "'2'", "Z": "3\r"}
    assert new == {"X ": " 1", "Y": "'2'", "Z": "3"}
    env = {"X ": "mine"}
    nccl_set_env_file(b"X =theirs\n", env, NCCL_230)
    assert env == {"X ": "mine"}  # setenv(..., 0): the environment wins


def _hosts(fabric: Path, out: Path) -> Path:
    result = run_cli("hosts", str(fabric), "-o", str(out))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def small_hosts(tmp_path_factory) -> Path:
    return _hosts(SMALL, tmp_path_factory.mktemp("hosts"))


@pytest.fixture(scope="module")
def small_switches(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("switches")
    assert run_cli("render", str(SMALL), "-o", str(out)).exit_code == 0
    return out


@pytest.fixture(scope="module")
def thor2_hosts(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("thor2")
    data = yaml.safe_load(SMALL.read_text())
    data["hosts"] = {"nic": "thor2", "dcqcn": True}
    data["qos"]["ecn"] = {"enabled": True}
    (folder / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    (folder / "secrets").symlink_to(SMALL.parent / "secrets")
    return _hosts(folder / "fabric.yaml", folder / "out")


def _expected_nccl(folder: Path) -> dict[str, str]:
    return json.loads((folder / "host.json").read_text())["nccl"]


def _sourced(env_file: Path) -> dict[str, str]:
    """What a job's /bin/sh has after `. ./nccl.env`, from an empty environment."""
    done = subprocess.run(["env", "-i", "/bin/sh", "-c", '. "$1" && env', "sh", str(env_file)],
                          capture_output=True, text=True, check=True)
    pairs = (line.split("=", 1) for line in done.stdout.splitlines() if line.startswith("NCCL_"))
    return dict(pairs)


def test_sourcing_nccl_env_exports_every_nccl_variable(small_hosts):
    folder = small_hosts / "connectx-8nic"
    expected = _expected_nccl(folder)
    assert len(expected) >= 6
    assert _sourced(folder / "nccl.env") == expected


@pytest.mark.parametrize("generation", NCCL_GENERATIONS)
def test_nccl_conf_is_read_back_whole_by_nccls_own_parser(small_hosts, generation):
    folder = small_hosts / "connectx-8nic"
    environ: dict[str, str] = {}
    nccl_set_env_file((folder / "nccl.conf").read_bytes(), environ, generation)
    assert environ == _expected_nccl(folder)  # every setting, nothing from a comment line
    # NCCL's integer parameters go through strtoll(value, NULL, 0) (param.cc, ncclLoadParam): plain
    # decimal, no leading zero (octal) or sign
    assert all(re.fullmatch(r"0|[1-9][0-9]*", v) for k, v in environ.items() if k != "NCCL_IB_HCA")


def test_values_that_need_quoting_reach_both_readers_intact(tmp_path):
    """A value with a space, quotes and a `$(...)`: nccl.env quotes it for sh, nccl.conf keeps it bare."""
    loaded = load_fabric(SMALL)
    plan = plan_hosts(loaded.fabric, expand(loaded.fabric, loaded.catalog))
    awkward = "eth0 'x' \"y\" $(touch pwned) `z` \\"
    classes = {name: dataclasses.replace(c, nccl=(*c.nccl, ("NCCL_SOCKET_IFNAME", awkward)))
               for name, c in plan.classes.items()}
    files = render_hosts(loaded.fabric, dataclasses.replace(plan, classes=classes))["connectx-8nic"]
    for file in files:
        (tmp_path / file.name).write_text(file.content)
    assert _sourced(tmp_path / "nccl.env")["NCCL_SOCKET_IFNAME"] == awkward
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    environ: dict[str, str] = {}
    nccl_set_env_file((tmp_path / "nccl.conf").read_bytes(), environ, NCCL_230)
    assert environ["NCCL_SOCKET_IFNAME"] == awkward


# --- the ConnectX port-wide traffic class -----------------------------------------------------------
def test_the_ofed_script_sets_no_port_wide_traffic_class(small_hosts):
    """MLNX_OFED's tc/1/traffic_class forces one ToS on every QP of the port, running ones too
    (mlnx-ofa_kernel drivers/infiniband/hw/mlx5/main_ext.c, tclass_get_tclass_locked): NCCL's CTS QP
    would leave on the lossless DSCP. rdma_cm users keep theirs through cma_roce_tos."""
    folder = small_hosts / "connectx-8nic"
    script = (folder / "nic-qos.sh").read_text()
    writes = re.findall(r"echo (\S+) > \"?/sys/class/infiniband/[^ ]*/tc/1/traffic_class", script)
    assert writes == ["-1"]  # only ever the driver's "none"
    assert f"cma_roce_tos -d \"$hca\" -p 1 -t {_expected_nccl(folder)['NCCL_IB_TC']}" in script


# --- every DSCP: NIC against switches ---------------------------------------------------------------
def _joined(script: str) -> str:
    """The script as sh reads it: a backslash-newline joins two lines."""
    return script.replace("\\\n", "")


def _mlnx_qos_map(script: str) -> list[tuple[int, int]]:
    """Every `--dscp2prio set,DSCP,PRIO` option, as mlnx_qos parses it (Mellanox/mlnx-tools
    python/mlnx_qos: opt.split(","), int(), dscp <= 63, prio <= 7)."""
    pairs = [(int(d), int(p)) for d, p in re.findall(r"--dscp2prio set,(\d+),(\d+)", _joined(script))]
    assert all(d <= 63 and p <= 7 for d, p in pairs)
    return pairs


def _dcb_app_map(script: str) -> list[tuple[int, int]]:
    """The DSCP:PRIO pairs of the script's `dcb app add ... dscp-prio` command (dcb-app(8))."""
    lines = [line for line in _joined(script).splitlines() if "dcb app add " in line]
    assert len(lines) == 1, lines
    words = lines[0].split("dscp-prio", 1)[1].split()
    return [(int(d), int(p)) for d, p in (word.split(":") for word in words)]


def _sonic_priorities(db: dict) -> dict[int, int]:
    """A SONiC switch's DSCP -> priority: DSCP_TO_TC_MAP, then the TC's priority group where PFC is on
    for it (TC_TO_PRIORITY_GROUP_MAP, PORT_QOS_MAP pfc_enable), else the TC itself."""
    tcs = db["DSCP_TO_TC_MAP"]["AZURE"]
    pgs = db["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"]
    pfc = {p for row in db["PORT_QOS_MAP"].values() for p in row.get("pfc_enable", "").split(",") if p}
    return {int(d): int(pgs[tc]) if pgs[tc] in pfc else int(tc) for d, tc in tcs.items()}


def _eos_priorities(config: str) -> dict[int, int]:
    """An EOS switch's DSCP -> traffic class from its `qos map dscp ... to traffic-class T` lines."""
    found: dict[int, int] = {}
    for dscps, tc in re.findall(r"^qos map dscp ([\d ]+) to traffic-class (\d)$", config, re.M):
        found.update(dict.fromkeys(map(int, dscps.split()), int(tc)))
    return found


def _switch_maps(switches: Path) -> list[dict[int, int]]:
    sonic = [_sonic_priorities(orjson.loads(p.read_bytes())) for p in sorted(switches.glob("*/config_db.json"))]
    eos = [_eos_priorities(p.read_text()) for p in sorted(switches.glob("*/*.cfg"))]
    assert sonic and eos
    return sonic + eos


def _complete(pairs: list[tuple[int, int]]) -> dict[int, int]:
    """The pairs as a map, checking that they name every DSCP 0-63 exactly once."""
    assert sorted(d for d, _ in pairs) == list(DSCPS)
    return dict(pairs)


def test_every_dscp_has_the_switches_priority_on_connectx(small_hosts, small_switches):
    folder = small_hosts / "connectx-8nic"
    ofed = _complete(_mlnx_qos_map((folder / "nic-qos.sh").read_text()))
    inbox = _complete(_dcb_app_map((folder / "nic-qos-inbox.sh").read_text()))
    assert ofed == inbox
    assert [d for d in DSCPS if ofed[d] == 3] == [26]  # not 24-31, as the NIC's own DSCP >> 3 would
    for switch in _switch_maps(small_switches):
        assert ofed == switch
    # the EOS switches pause exactly the priority the NIC gives the lossless DSCPs
    pause = {int(p) for p in re.findall(r"priority-flow-control priority (\d) no-drop",
                                        next(small_switches.glob("*/*.cfg")).read_text())}
    assert pause == {ofed[26]}


def test_every_dscp_has_the_switches_priority_on_thor2(thor2_hosts, small_switches):
    script = (thor2_hosts / "thor2-8nic" / "nic-qos.sh").read_text()
    pairs = _dcb_app_map(script)
    nic = _complete(pairs)
    for switch in _switch_maps(small_switches):
        assert nic == switch
    assert pairs[-1] == (48, 6)  # the CNP DSCP's entry last (Broadcom bnxt_re README, "DCB Settings")


def test_thor2_programs_the_dscp_map_after_the_driver_rewrote_it(thor2_hosts):
    """`apply` rewrites the NIC's DSCP table to the two cc entries (Broadcom bnxt_re configfs.c,
    bnxt_re_program_cnp_dcb_values -> bnxt_re_clear_dscp), and the kernel refuses an APP entry it
    already holds (net/dcb/dcbnl.c dcb_ieee_setapp): the map comes after apply, flushed first."""
    lines = [line.strip() for line in _joined((thor2_hosts / "thor2-8nic" / "nic-qos.sh").read_text()).splitlines()]
    apply = lines.index('echo -n 0x1 > "$cc/ports/1/cc/apply"')
    flush = lines.index('dcb app flush dev "$netdev" dscp-prio')
    add = next(i for i, line in enumerate(lines) if line.startswith("dcb app add "))
    assert apply < flush < add


# --- Thor2 configfs numbers as bnxt_re reads them ----------------------------------------------------
def _kernel_sscanf_hex(text: str) -> int:
    """The kernel's sscanf(buf, "%x"): skips blanks and a 0x (lib/kstrtox.c _parse_integer_fixup_radix),
    then reads hex digits (Broadcom bnxt_re 233.2.77.9 configfs.c, roce_dscp_store and the others)."""
    rest = text.lstrip()
    if rest[:2].lower() == "0x":
        rest = rest[2:]
    digits = re.match(r"[0-9a-fA-F]+", rest)
    assert digits, text
    return int(digits.group(), 16)


def _kernel_kstrtouint_base0(text: str) -> int:
    """kstrtouint(buf, 0): 0x.. hex, 0.. octal, else decimal, one trailing newline allowed, nothing else
    (lib/kstrtox.c), as a later bnxt_re's configfs.c reads the same files."""
    rest = text[:-1] if text.endswith("\n") else text
    if rest[:2].lower() == "0x" and rest[2:3] and rest[2] in string.hexdigits:
        return int(rest[2:], 16)
    return int(rest, 8) if rest.startswith("0") else int(rest, 10)


def test_thor2_cc_numbers_read_back_as_meant_by_every_bnxt_re(thor2_hosts):
    script = (thor2_hosts / "thor2-8nic" / "nic-qos.sh").read_text()
    found = re.findall(r'echo -n (\S+) > "\$cc/ports/1/cc/(roce_dscp|cnp_dscp|roce_prio|cnp_prio)"', script)
    written = {name: value for value, name in found}
    meant = {"roce_dscp": 26, "cnp_dscp": 48, "roce_prio": 3, "cnp_prio": 6}
    assert set(written) == set(meant)
    for name, value in written.items():
        assert _kernel_sscanf_hex(value) == meant[name], (name, value)
        assert _kernel_kstrtouint_base0(value) == meant[name], (name, value)
    assert _kernel_sscanf_hex(written["cnp_dscp"]) <= 0x3F  # the store functions refuse more


# --- the cross-layer check ---------------------------------------------------------------------------
def test_ng707_fails_when_the_nic_map_differs_from_the_switches_on_any_dscp(monkeypatch):
    """A NIC left on its own map (DSCP >> 3): NG707 names every DSCP whose priority differs."""
    monkeypatch.setattr(host_plan, "dscp_priorities", lambda qos: tuple((d, d >> 3) for d in DSCPS))
    loaded = load_fabric(SMALL)
    found = [f for f in run_checks(DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog)))
             if f.code == "NG707"]
    flagged = sorted(int(re.match(r"DSCP (\d+) ", f.message).group(1)) for f in found)
    switch = {0: 0, 26: 3, 46: 6, 48: 6}  # the small example: best effort DSCP 0, the rest default TC 0
    assert flagged == [d for d in DSCPS if d >> 3 != switch.get(d, 0)]
    assert any("DSCP 24 is on priority 3 at the NIC" in f.message and "as lossy" in f.message for f in found)


def test_ng707_catches_a_thor2_roce_dscp_pin_the_switches_do_not_pause(small_data, write_fabric):
    """Thor2's roce_dscp comes from a pinned NCCL_IB_TC: DSCP 10 on the PFC priority at the NIC, lossy on
    every switch. On ConnectX the same pin moves no NIC mapping (NG701 alone reports it)."""
    small_data["hosts"] = {"nic": "thor2", "nccl": {"traffic_class": 40}}
    found = [f for f in findings_of(write_fabric(small_data)) if f.code == "NG707"]
    assert [f.message.split(";")[0] for f in found] == [
        "DSCP 10 is on priority 3 at the NIC (bnxt_re cc roce_dscp/roce_prio) but on priority 0 at the switches"]
    small_data["hosts"] = {"nccl": {"traffic_class": 40}}
    codes = {f.code for f in findings_of(write_fabric(small_data))}
    assert "NG701" in codes and "NG707" not in codes
