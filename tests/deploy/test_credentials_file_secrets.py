"""A credentials file never has its values echoed: not by the YAML reader's messages (which quote the
offending token: `!Xy7...` is read as a tag, `*Xy7...` as an alias), not in `given`, `allowed` or any
JSON field, not on stderr. The CLI path is the real one (`netgen check` / `netgen deploy --dry-run`
load the credentials before any connection); only the fabric load is memoised to keep this fast.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from netgen.cli import deploy as deploy_cli
from netgen.deploy.inventory import CredentialsError, load_credentials
from netgen.intent.errors import NetgenInputError
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

# Every YAML indicator character (YAML 1.1/1.2 "c-indicator"): each may start a token.
INDICATORS = "-?:,[]{}#&*!|>'\"%@`"
# Letters and digits that occur nowhere in netgen's messages, the file names or the fabric.
CORE = "Zq8vW3kP"
DEVICE = "z01-rtsw001"


def secrets_for(c: str) -> list[str]:
    """What follows `password: ` in the file: the indicator leading, inside, after a space, and in
    broken quoting (unterminated, an undoubled quote inside quotes, an unknown escape)."""
    head, tail = CORE[:4], CORE[4:]
    return [
        f"{c}{CORE}",
        f"{c}{c}{CORE}{c}",
        f"{head}{c}{tail}",
        f"{head} {c}{tail}",
        f"{head}{c} {tail}",
        f"'{c}{CORE}",
        f'"{c}{CORE}',
        f"'{head}'{c}{tail}'",
        f'"{head}\\{c}{tail}"',
        f"[{head}{c}{tail}",
        f"{{{c}{CORE}: {head}",
    ]


def forbidden(secret: str) -> set[str]:
    """The secret as written and every 4-character piece of it that holds a letter or digit."""
    pieces = {secret[i:i + 4] for i in range(len(secret) - 3)}
    return {secret} | {piece for piece in pieces if any(ch.isalnum() for ch in piece)}


def expected_broken(text: str) -> bool:
    """Independent oracle: PyYAML cannot read it, or it gives no non-empty text password."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return True
    return not (isinstance(data, dict) and isinstance(data.get("password"), str) and data["password"])


def write_private(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o600)
    return path


@pytest.fixture(autouse=True)
def no_env_credentials(monkeypatch):
    for name in ("NETGEN_USERNAME", "NETGEN_PASSWORD", "NETGEN_SSH_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One device's files rendered once by `netgen render`, pushed with --configs (as reviewed files are)."""
    folder = tmp_path_factory.mktemp("rendered")
    result = run_cli("render", str(SMALL), "-o", str(folder), "--device", DEVICE)
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture
def fast_fabric(monkeypatch, configs):
    """The small fabric loaded and checked once per test, not once per command."""
    real = deploy_cli.load_checked

    @cache
    def memo(fabric: str, as_json: bool, refusal: str) -> Any:
        return real(fabric, as_json, refusal)

    monkeypatch.setattr(deploy_cli, "load_checked", memo)
    return configs


def command(number: int, creds: Path, configs: Path, tmp_path: Path) -> list[str]:
    """`netgen check` or `netgen deploy --dry-run` (by turns), limited to one device. There is no
    known_hosts file: a valid credentials file gets as far as the host-key check (exit 2), which
    comes after the credentials are read and before any connection."""
    access = ["--limit", DEVICE, "--configs", str(configs), "--credentials", str(creds),
              "--known-hosts", str(tmp_path / "none")]
    verb = ["check"] if number % 2 == 0 else ["deploy", "--dry-run"]
    return [*verb, str(SMALL), *access]


@pytest.mark.parametrize("indicator", list(INDICATORS))
def test_credentials_file_errors_never_echo_the_password(indicator, tmp_path, fast_fabric):
    for number, secret in enumerate(secrets_for(indicator)):
        for field in ("password", "username"):
            text = (f"username: {secret}\npassword: 'ok-pw'\n" if field == "username"
                    else f"username: netops\npassword: {secret}\n")
            creds = write_private(tmp_path / f"creds{number}-{field}.yaml", text)
            broken = expected_broken(text) if field == "password" else _username_broken(text)
            args = command(number, creds, fast_fabric, tmp_path)
            for as_json in (False, True):
                result = run_cli(*args, *(["--json"] if as_json else []))
                where = f"{field}: {secret!r} via {args[0]}{' --json' if as_json else ''}"
                output = result.stdout + result.stderr
                leaked = sorted(piece for piece in forbidden(secret) if piece in output)
                assert not leaked, f"{where} leaked {leaked}:\n{output}"
                assert result.exit_code == 2, f"{where}: exit {result.exit_code}\n{output}"
                assert "Traceback" not in output
                if as_json:
                    payload = json.loads(result.stdout)
                    assert payload["exit_code"] == 2
                    reached_host_keys = "known_hosts" in payload.get("error", "")
                    assert reached_host_keys is not broken, f"{where}: {payload}"
                    for problem in payload.get("input_errors", []):
                        assert problem["file"] == str(creds) and problem["given"] is None, problem
                elif broken:
                    assert str(creds) in result.stderr, f"{where}: the file is not named\n{output}"


def _username_broken(text: str) -> bool:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return True
    return not (isinstance(data, dict) and isinstance(data.get("username"), str))


def test_a_yaml_error_names_file_line_column_and_key_only(tmp_path):
    creds = write_private(tmp_path / "credentials.yaml", f"username: netops\npassword: !{CORE}\n")
    with pytest.raises(NetgenInputError) as caught:
        load_credentials(creds)
    [problem] = caught.value.problems
    assert (problem.file, problem.line, problem.column, problem.path) == (str(creds), 2, 11, "password")
    assert problem.given is None and "not valid YAML" in problem.message
    assert CORE not in str(caught.value) and CORE not in json.dumps(problem.as_dict())
    assert str(caught.value).startswith(f"{creds}:2:11: password: not valid YAML")


def test_an_unknown_key_line_is_never_named(tmp_path):
    """Only our own keys are named: a line that is not `username:`/`password:`/`key_file:` may itself
    be the secret (a password pasted on its own line)."""
    creds = write_private(tmp_path / "c.yaml", f"username: netops\npassword: x\n*{CORE}: y\n")
    with pytest.raises(NetgenInputError) as caught:
        load_credentials(creds)
    assert [p.path for p in caught.value.problems] == [""]
    assert CORE[:4] not in str(caught.value)


def test_a_duplicate_key_is_said_without_values(tmp_path):
    creds = write_private(tmp_path / "c.yaml", f"username: netops\npassword: {CORE}\npassword: {CORE}x\n")
    with pytest.raises(NetgenInputError) as caught:
        load_credentials(creds)
    [problem] = caught.value.problems
    assert (problem.path, problem.line, problem.message) == ("password", 3, "duplicate key")
    assert CORE not in str(caught.value)


def test_non_text_values_are_refused_without_echo(tmp_path):
    for number, value in enumerate(["12345678", "[Zq8v, W3kP]", "{Zq8v: W3kP}", "2024-01-02", "~", "true"]):
        creds = write_private(tmp_path / f"c{number}.yaml", f"username: netops\npassword: {value}\n")
        with pytest.raises(CredentialsError) as caught:
            load_credentials(creds)
        assert "as text" in str(caught.value) and value not in str(caught.value)
        for piece in ("Zq8v", "W3kP", "1234", "2024"):
            assert piece not in str(caught.value)


@pytest.mark.parametrize("indicator", list(INDICATORS))
def test_quoted_passwords_with_every_indicator_still_work(indicator, tmp_path, fast_fabric):
    secret = f"{indicator}{CORE[:4]}'{indicator} #{CORE[4:]}{indicator}"
    single = "'" + secret.replace("'", "''") + "'"
    double = json.dumps(secret)  # a JSON string is a valid YAML double-quoted scalar
    for number, written in enumerate((single, double)):
        creds = write_private(tmp_path / f"c{number}.yaml", f"username: netops\npassword: {written}\n")
        loaded = load_credentials(creds)
        assert loaded.username == "netops" and loaded.password is not None
        assert loaded.password.get_secret_value() == secret
        assert secret not in repr(loaded)
        result = run_cli(*command(number, creds, fast_fabric, tmp_path), "--json")
        payload = json.loads(result.stdout)
        assert result.exit_code == 2 and "known_hosts" in payload["error"], payload  # past the credentials
        assert not any(piece in result.output for piece in forbidden(secret))


def test_file_level_problems_keep_their_fixed_messages(tmp_path):
    empty = write_private(tmp_path / "empty.yaml", "")
    with pytest.raises(NetgenInputError, match="file is empty"):
        load_credentials(empty)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"username: netops\npassword: \xff" + CORE.encode() + b"\n")
    os.chmod(binary, 0o600)
    with pytest.raises(NetgenInputError) as caught:
        load_credentials(binary)
    assert "not UTF-8" in str(caught.value) and CORE not in str(caught.value)
    control = write_private(tmp_path / "control.yaml", f"username: netops\npassword: {CORE}\x07{CORE}\n")
    with pytest.raises(NetgenInputError) as caught:
        load_credentials(control)
    [problem] = caught.value.problems
    assert problem.path == "password" and problem.line == 2 and CORE not in str(caught.value)
    assert "U+0007" not in str(caught.value)  # not even the offending character


def test_a_file_over_an_input_limit_says_which_limit_without_values(tmp_path):
    """A credentials file past the input limits (intent/yaml_source.py) is said to be so, with the
    key it is under, never as a quoting mistake and never with what it holds."""
    items = "".join(f"  - {CORE}{n}\n" for n in range(50_001))
    creds = write_private(tmp_path / "c.yaml", f"username: netops\npassword:\n{items}")
    with pytest.raises(NetgenInputError) as caught:
        load_credentials(creds)
    [problem] = caught.value.problems
    assert problem.message == "a list of more than 50,000 items" and problem.path == "password"
    assert problem.line == 50_003
    assert CORE not in str(caught.value) and CORE not in json.dumps(problem.as_dict())
