"""A custom_config line refused as a secret is never echoed (issue 36, defect 5).

Whatever else is wrong with the block, and whichever command loads the fabric, in text or JSON: the
error names the block, the line number and the keyword that made the line a secret, and no part of
the line (the secret below, a word of its own) reaches stdout or stderr.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.render

SECRET = "Zq7s3cr3tValu3"


def _block(**fields):
    return {"name": "leaky", **fields}


# (block, the line refused, the keyword that makes it a secret, field)
CASES = [
    pytest.param(_block(eos_cli=f"enable secret 0 {SECRET}\n"), 1, "secret", "eos_cli", id="enable-secret"),
    pytest.param(_block(eos_cli=f"username ops secret 0 {SECRET}\n"), 1, "secret", "eos_cli", id="username-secret"),
    pytest.param(_block(eos_cli=f"queue-monitor length\ntacacs-server host 192.0.2.1 key 0 {SECRET}\n"), 2, "key",
                 "eos_cli", id="tacacs-key-line-2"),
    pytest.param(_block(eos_cli=f"{SECRET}-key 1\n"), 1, "key", "eos_cli", id="secret-is-the-first-word"),
    pytest.param(_block(frr=f"router bgp 65000\n neighbor 10.0.0.1 password {SECRET}\n"), 2, "password", "frr",
                 id="frr-neighbor-password"),
    pytest.param(_block(frr=f"key chain k\n key 1\n  key-string {SECRET}\n"), 1, "key", "frr", id="frr-key-chain"),
]


def _commands(fabric: str, tmp_path) -> list[tuple[str, ...]]:
    return [("validate", fabric), ("validate", "--json", fabric), ("show", fabric), ("show", "--json", fabric),
            ("render", fabric, "-o", str(tmp_path / "out")), ("render", "--json", fabric, "-o", str(tmp_path / "out")),
            ("render", "--check", fabric)]


@pytest.mark.parametrize(("block", "line", "keyword", "field"), CASES)
def test_a_line_refused_as_a_secret_is_never_echoed(small_data, write_fabric, tmp_path, block, line, keyword, field):
    small_data["custom_config"] = [*small_data["custom_config"], block]
    fabric = str(write_fabric(small_data))
    index = len(small_data["custom_config"]) - 1
    for command in _commands(fabric, tmp_path):
        result = run_cli(*command)
        output = result.stdout + result.stderr
        assert result.exit_code == 2, (command, output)
        assert SECRET.lower() not in output.lower(), (command, output)
        assert "Traceback" not in output
        if "--json" in command:
            problems = json.loads(result.stdout)["input_errors"]
            problem = next(p for p in problems if p["path"] == f"custom_config[{index}].{field}")
            assert problem["given"] is None, problem
            message = problem["message"]
        else:
            message = " ".join(output.split())
        assert f"custom_config[{index}].{field}" in message or "--json" in command, message
        assert f"line {line}: looks like a secret" in message and f"'{keyword}'" in message, (command, message)


@pytest.mark.parametrize("block", [
    # the block's first error is elsewhere: the error for line 1 must not echo the block either
    pytest.param(_block(eos_cli=f"queue-monitor length \nenable secret 0 {SECRET}\n"), id="trailing-whitespace-first"),
    pytest.param(_block(eos_cli=f"queue-monitor length\x1b\nenable secret 0 {SECRET}\n"), id="control-character"),
    pytest.param(_block(eos_cli=f"enable secret 0 {SECRET}\n" + "x" * 64_001), id="too-long"),
    pytest.param(_block(eos_cli=f"enable secret 0 {SECRET}\n" + "lldp run\n" * 501), id="too-many-lines"),
    pytest.param(_block(frr=f"log syslog \nneighbor 10.0.0.1 password {SECRET}\n"), id="frr-trailing-whitespace"),
])
def test_a_block_holding_a_secret_is_never_echoed_whatever_its_error(small_data, write_fabric, block):
    small_data["custom_config"] = [block]
    fabric = str(write_fabric(small_data))
    for command in (("validate", fabric), ("validate", "--json", fabric)):
        result = run_cli(*command)
        output = result.stdout + result.stderr
        assert result.exit_code == 2, output
        assert SECRET.lower() not in output.lower(), output
        if "--json" in command:
            assert all(p["given"] is None for p in json.loads(result.stdout)["input_errors"]
                       if p["path"].startswith("custom_config")), result.stdout


def test_a_tagged_value_holding_a_secret_is_not_echoed(small_data, write_fabric):
    # `!!int` on a custom line: PyYAML cannot build it, and the loader reports the value it could not read
    small_data["custom_config"] = [_block(eos_cli="PLACEHOLDER")]
    path = write_fabric(small_data)
    path.write_text(path.read_text().replace("PLACEHOLDER", f"!!int 'enable secret 0 {SECRET}'"))
    for command in (("validate", str(path)), ("validate", "--json", str(path))):
        result = run_cli(*command)
        output = result.stdout + result.stderr
        assert result.exit_code == 2, output
        assert SECRET.lower() not in output.lower(), output
        assert "looks like a secret" in output, output
