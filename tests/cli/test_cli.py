"""CLI contract: exit codes and JSON output that scripts rely on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import META, SMALL, run_cli

pytestmark = pytest.mark.render


def test_validate_small_ok():
    result = run_cli("validate", str(SMALL.parent))
    assert result.exit_code == 0, result.output
    assert "OK small-lab: 0 error(s), 6 warning(s)" in result.stdout


def test_validate_json_contract():
    result = run_cli("validate", "--json", str(SMALL))
    payload = json.loads(result.stdout)
    assert result.exit_code == payload["exit_code"] == 0
    assert payload["ok"] is True and payload["errors"] == 0 and payload["warnings"] == 6
    assert {f["code"] for f in payload["findings"]} == {"NG501", "NG507", "NG509"}
    assert set(payload["findings"][0]) == {"code", "severity", "subject", "message", "fix"}


def test_design_error_exits_1(small_data, write_fabric):
    small_data["zones"][0]["ctsw_count"] = 2  # 8 x 400G up for 16 x 400G of NICs: blocking
    result = run_cli("validate", "--json", str(write_fabric(small_data)))
    payload = json.loads(result.stdout)
    assert result.exit_code == payload["exit_code"] == 1
    assert payload["ok"] is False
    assert any(f["code"] == "NG101" and f["subject"] == "zone 1" for f in payload["findings"])


def test_show_json_figures():
    result = run_cli("show", "--json", str(META.parent))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["gpus"] == 24_576
    assert summary["devices"] == 1692
    tiers = {t["tier"]: t["devices"] for t in summary["tiers"]}
    assert tiers == {"rtsw": 1536, "ctsw": 128, "atsw": 28}
    ctsw = [row for row in summary["oversubscription"] if row["tier"] == "ctsw"]
    assert {row["ratio"] for row in ctsw} == {"1:6.857"}  # 192 x 400G down, 28 x 400G up
    assert all(b["worst_domain_used_percent"] < 100 for b in summary["buffers"])
    rtsw = next(b for b in summary["buffers"] if b["tier"] == "rtsw")
    # 16 host + 16 uplink PGs x 612140 B of xoff (the SKU's rows) within the 29423360 B shared headroom pool
    assert (rtsw["source"], rtsw["headroom_pool_xoff_bytes"], rtsw["headroom_pool_bytes"]) == (
        "sku", 32 * 612140, 29423360)
    # the Jericho2C+ spines carry the catalog's unverified items (NG507), the SONiC RTSW model none
    assert {(u["tier"], u["model"]) for u in summary["unverified"]} == {
        ("ctsw", "arista-7808r3a-36p-eos"), ("atsw", "arista-7808r3a-36p-eos")}
    assert any(item.startswith("PFC watchdog on Jericho2C+") for item in summary["unverified"][0]["items"])


def test_show_text_mentions_every_tier():
    result = run_cli("show", str(SMALL))
    assert result.exit_code == 0
    for word in ("rtsw", "ctsw", "atsw", "Oversubscription", "Buffer budget", "128 GPUs"):
        assert word in result.stdout


def test_usage_error_exits_2():
    assert run_cli("validate").exit_code == 2
    assert run_cli("frobnicate").exit_code == 2


def test_console_script_runs_without_traceback(tmp_path):
    bad = tmp_path / "fabric.yaml"
    bad.write_text("name: [unclosed\n")
    proc = subprocess.run([sys.executable, "-m", "netgen.cli", "validate", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"{bad}:2" in proc.stderr or f"{bad}:1" in proc.stderr


def test_headroom_json_per_port_and_budget():
    result = run_cli("headroom", str(SMALL), "--device", "z01-rtsw001", "--json")
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["devices"]
    assert entry["source"] == "sku" and entry["vendor_settings"].endswith("Arista-7060X6-64PE-O128S2")
    ports = {p["port"]: p for p in entry["ports"]}
    assert len(ports) == 32
    # 400G over a 3 m DAC: the SKU's 5m row (reserved 18796, xoff 612140) above the formula's 388620
    host = ports["Ethernet0"]
    assert (host["reserved"], host["xoff"], host["computed_xoff"], host["vendor_xoff"], host["vendor_cable_m"]) == (
        18796, 612140, 388620, 612140, 5)
    (asic,) = entry["asics"]
    assert asic["xoff_bytes"] == sum(p["xoff"] for p in ports.values())
    assert asic["reserved_bytes"] == sum(p["reserved"] for p in ports.values())
    assert asic["headroom_pool_bytes"] == 29423360 and asic["pgs_covered"] == 32
    assert asic["committed_bytes"] == asic["pool_bytes"] + asic["reserved_bytes"]


def test_headroom_text_shows_netgen_and_vendor_side_by_side(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: rich wraps cells to fit a narrow one
    result = run_cli("headroom", str(SMALL), "--device", "z01-ctsw01")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "reference: the NOS sets its own" in text
    assert "778,240 (1000m)" in text and "448,512" in text  # 500 m uplinks: vendor row, formula


def test_headroom_default_shows_one_device_per_tier_and_model():
    result = run_cli("headroom", str(SMALL), "--json")
    devices = [d["device"] for d in json.loads(result.stdout)["devices"]]
    assert devices == ["atsw01", "z01-ctsw01", "z01-rtsw001", "z02-rtsw001"]
    assert run_cli("headroom", str(SMALL), "--device", "nope").exit_code == 2


@pytest.mark.parametrize(("extra", "message"), [
    ("netgen_serial=[99]", "netgen_* variables are set by netgen rollout"),
    ("no-equals", "expected KEY=VALUE"),
])
def test_rollout_refuses_extra_vars_that_would_override_the_plan(extra, message):
    result = run_cli("rollout", str(SMALL), "-e", extra, "--json")
    assert result.exit_code == 2 and message in json.loads(result.stdout)["error"]


def test_inverted_ecn_thresholds_stop_validate_and_render_not_the_nos_model(small_data, write_fabric, tmp_path):
    # ECN off, max < min: SONiC switches still carry the WRED profile, and SONiC's model refuses
    # max < min, so this must be a design error (exit 1) before rendering, never a render failure (3).
    small_data["qos"]["ecn"]["min_threshold"] = "2MB"
    fabric = str(write_fabric(small_data))
    validate = run_cli("validate", fabric, "--json")
    assert validate.exit_code == 1
    assert [f["code"] for f in json.loads(validate.stdout)["findings"] if f["severity"] == "error"] == ["NG401"]
    render = run_cli("render", fabric, "-o", str(tmp_path / "out"))
    assert render.exit_code == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("outcome", ["rendered", "design error", "usage"])
def test_render_as_a_process_ends_with_its_exit_code_and_all_its_output(outcome, tmp_path, small_data,
                                                                        write_fabric):
    """render ends its process without the interpreter's teardown (netgen.cli._end_now): the exit
    code, every line of its output and atexit's handlers must survive that."""
    fabric = SMALL
    if outcome == "design error":
        small_data["qos"]["ecn"]["min_threshold"] = "2MB"
        fabric = write_fabric(small_data)
    args = ["render", str(fabric), "-o", str(tmp_path / "out"), "--json"]
    if outcome == "usage":
        args = ["render", str(fabric)]
    code = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('atexit ran\\n'));"
            " from netgen.cli import main; sys.argv = ['netgen', *sys.argv[1:]]; main()")
    proc = subprocess.run([sys.executable, "-c", code, *args], check=False, capture_output=True, text=True,
                          timeout=120)
    assert proc.stderr.endswith("atexit ran\n"), proc.stderr
    if outcome == "usage":
        assert proc.returncode == 2 and "give an output directory" in proc.stderr
        return
    payload = json.loads(proc.stdout)
    assert proc.returncode == payload["exit_code"] == {"rendered": 0, "design error": 1}[outcome]
    if outcome == "rendered":
        assert payload["devices"] == len([p for p in (tmp_path / "out").iterdir() if p.is_dir()]) > 0


@pytest.mark.parametrize("command", [
    ["scheduler", str(SMALL), "--format", "slurm", "-o"],
    ["render", str(SMALL), "--device", "z01-rtsw001", "-o"],
])
def test_a_name_with_escapes_and_newlines_is_shown_never_acted_on(command, tmp_path):
    """A file name is the user's, but it may come from anywhere (a script, a PR branch): an escape
    sequence in it must not recolour or move the terminal, and a newline must not print a line that
    looks like netgen's own."""
    name = tmp_path / "out\x1b[31mred\nerror: forged\r\u202eevil"
    result = subprocess.run([sys.executable, "-m", "netgen.cli", *command, str(name)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    shown = result.stdout + result.stderr
    assert not any(ch in shown for ch in "\x1b\r\u202e")
    assert not any(line.startswith("error: forged") for line in shown.splitlines())
    assert "\\x1b[31mred\\x0aerror: forged\\x0d\\u202eevil" in shown


def test_an_input_error_quoting_what_was_typed_shows_its_escapes(tmp_path):
    missing = tmp_path / "fabric\x1b]0;retitled\x07.yaml"
    result = subprocess.run([sys.executable, "-m", "netgen.cli", "show", str(missing)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "file not found" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
