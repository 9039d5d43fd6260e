"""The custom EOS config check refuses what EOS cannot place, and says what it checked (issue 36,
defect 10): each top-level line is a command of EOS's global configuration mode that
netgen/intent/eos_commands.py knows, and a line is indented under a top-level line only where
that command opens a mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

GOLDEN_EOS = Path(__file__).resolve().parents[1] / "platforms" / "golden" / "eos"


def _validate(small_data, write_fabric, eos_cli: str):
    small_data["custom_config"] = [{"name": "extra", "eos_cli": eos_cli}]
    return run_cli("validate", str(write_fabric(small_data)))


@pytest.mark.parametrize(("eos_cli", "message"), [
    pytest.param("ZQ9\n   neighbor 1.1.1.1 remote-as 1\n",
                 "line 1: 'zq9' is not a command of EOS's global configuration mode",
                 id="unknown-keyword-with-a-child"),
    pytest.param("queue-monitor length\nfrobnicate all\n", "line 2: 'frobnicate' is not a command", id="second-line"),
    pytest.param("no zq9 now\n", "line 1: 'zq9' is not a command", id="negated-unknown"),
    pytest.param("schedule tech interval 60 max-log-files 1 command show tech\n", "line 1: 'schedule' is not a command",
                 id="runs-exec-commands"),
    pytest.param("errdisable recovery interval 300\n   neighbor 1.1.1.1 remote-as 1\n",
                 "line 2: indented under line 1 ('errdisable'), a command of one line",
                 id="child-of-a-one-line-command"),
    pytest.param("ip route 10.9.0.0/16 192.0.2.1\n   next-hop 1\n", "line 2: indented under line 1 ('ip'), a command"
                 " of one line", id="child-of-ip-route"),
    pytest.param("no router bfd\n   interval 300 min-rx 300 multiplier 3\n", "line 2: indented under line 1 ('router')",
                 id="child-of-a-negated-mode"),
])
def test_a_line_eos_cannot_place_is_refused_naming_block_line_and_keyword(small_data, write_fabric, eos_cli, message):
    result = _validate(small_data, write_fabric, eos_cli)
    assert result.exit_code == 2, result.output
    stderr = " ".join(result.stderr.split())
    assert "custom_config[0].eos_cli" in stderr and message in stderr, stderr


@pytest.mark.parametrize("eos_cli", [
    "queue-monitor length\n",
    "ip access-list EXTRA\n   10 permit ip any any\n",
    "ip prefix-list EXTRA seq 10 permit 10.9.0.0/16\n",
    "router bfd\n   interval 300 min-rx 300 multiplier 3\n",
    "Management API HTTP-Commands\n   no shutdown\n   vrf MGMT\n      no shutdown\n",
    "no lldp run\nerrdisable recovery cause bpduguard\n",
    "spanning-tree mst configuration\n   name fabric\nspanning-tree mode mstp\n",
    "aaa group server tacacs+ OPS\n   server 192.0.2.9 vrf MGMT\n",
])
def test_lines_eos_places_are_accepted(small_data, write_fabric, eos_cli):
    result = _validate(small_data, write_fabric, eos_cli)
    assert result.exit_code in (0, 1), result.output
    assert "custom_config" not in result.output, result.output


def test_netgens_own_eos_top_level_lines_are_in_the_table():
    """The table knows every top-level command netgen itself renders, and that those it renders
    with lines under them open a mode: a check of the table against EOS configs reviewed by hand
    (tests/platforms/golden/eos)."""
    from netgen.intent.eos_commands import command_of  # noqa: PLC0415

    configs = sorted(GOLDEN_EOS.glob("*/*.cfg"))
    assert configs
    for config in configs:
        lines = config.read_text().splitlines()
        in_banner = False
        for number, line in enumerate(lines):
            if in_banner or line.startswith("banner "):
                in_banner = line != "EOF"
                continue
            if not line or line[0] in " !" or line == "end":
                continue
            known = command_of(line.split())
            assert known is not None, f"{config.name}: {line!r}"
            has_children = number + 1 < len(lines) and lines[number + 1].startswith("   ")
            assert known[1] or not has_children, f"{config.name}: {line!r} has lines under it"


def test_render_says_what_the_check_covered():
    assert "queue-monitor length" in SMALL.read_text()  # the small example has custom EOS lines
    result = run_cli("render", str(SMALL), "--check")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "accepted by their NOS models" not in out, out
    assert "top-level keywords" in out, out
