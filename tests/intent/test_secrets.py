"""Secrets by reference (intent/secrets.py) through services.users: resolved only at render, errors
that name the field and the reference and never the value, and hashes only, never passwords."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.render

# sha512-crypt of a throwaway password (openssl passwd -6 -salt netgentest 'throwaway-test')
HASH = "$6$netgentest$E8aJybsohSJsDlx83X9VIMq2TPWVBtTtSyadKfk3oJjYm7f2anfye1arltkWxFQ1QCTYK8w0PWNViRmWEZaEY0"


def _users(small_data, write_fabric, sha512, name="ops2"):
    small_data["services"]["users"] = [{"name": name, "sha512": sha512}]
    return write_fabric(small_data)  # write_fabric copies the example's secrets/ beside it


def test_the_hash_is_read_at_render_from_the_environment(small_data, write_fabric, monkeypatch):
    monkeypatch.setenv("NETGEN_TEST_HASH", HASH)
    path = _users(small_data, write_fabric, {"env": "NETGEN_TEST_HASH"})
    result = run_cli("render", str(path), "-o", str(path.parent / "out"), "--device", "z02-rtsw001",
                     "--device", "z01-rtsw001")
    assert result.exit_code == 0, result.stderr
    eos = (path.parent / "out" / "z02-rtsw001" / "z02-rtsw001.cfg").read_text()
    assert f"\n!\nusername ops2 privilege 15 role network-admin secret sha512 {HASH}\n!\n" in eos
    sonic = "".join(p.read_text() for p in (path.parent / "out" / "z01-rtsw001").iterdir())
    assert HASH not in sonic and "ops2" not in sonic  # NG509: not rendered for SONiC yet


def test_validate_and_show_never_need_the_secret(small_data, write_fabric, monkeypatch):
    monkeypatch.delenv("NETGEN_TEST_HASH", raising=False)
    path = _users(small_data, write_fabric, {"env": "NETGEN_TEST_HASH"})
    assert run_cli("validate", str(path)).exit_code == 0
    assert run_cli("show", str(path), "--device", "z02-rtsw001").exit_code == 0


@pytest.mark.parametrize(("sha512", "value", "expected"), [
    ({"env": "NETGEN_TEST_HASH"}, None,
     "services.users[0].sha512: environment variable NETGEN_TEST_HASH is not set"),
    ({"env": "NETGEN_TEST_HASH"}, "hunter2-in-clear",
     "services.users[0].sha512: environment variable NETGEN_TEST_HASH does not hold a sha512-crypt hash"),
    ({"env": "NETGEN_TEST_HASH"}, "", "services.users[0].sha512: environment variable NETGEN_TEST_HASH is empty"),
    ({"file": "secrets/missing.sha512"}, None, "services.users[0].sha512: file "),
])
def test_a_secret_that_cannot_be_used_is_exit_2_and_never_shown(small_data, write_fabric, monkeypatch, sha512,
                                                                 value, expected):
    if value is None:
        monkeypatch.delenv("NETGEN_TEST_HASH", raising=False)
    else:
        monkeypatch.setenv("NETGEN_TEST_HASH", value)
    path = _users(small_data, write_fabric, sha512)
    result = run_cli("render", str(path), "--check", "--json")
    assert result.exit_code == 2, result.stdout + result.stderr
    payload = json.loads(result.stdout)
    assert payload["written"] is False and expected in payload["error"], payload["error"]
    assert "Traceback" not in result.output and (not value or value not in result.output)


@pytest.mark.parametrize(("user", "expected"), [
    ({"name": "x", "sha512": {"env": "A", "file": "b"}}, "give exactly one of env, file"),
    ({"name": "x", "sha512": {}}, "give exactly one of env, file"),
    ({"name": "x", "sha512": {"env": "lower_case"}}, "services.users[0].sha512.env"),
    ({"name": "x", "sha512": "$6$abc$def"}, "services.users[0].sha512"),  # a hash inline: never
    ({"name": "x", "sha512": {"env": "A"}, "password": "p"}, "services.users[0].password"),
    ({"name": "x;y", "sha512": {"env": "A"}}, "services.users[0].name"),
])
def test_bad_user_entries_are_exit_2_naming_the_field(small_data, write_fabric, user, expected):
    small_data["services"]["users"] = [user]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert expected in result.stderr, result.stderr


def test_user_names_are_unique(small_data, write_fabric):
    small_data["services"]["users"] = [{"name": "x", "sha512": {"env": "A"}}, {"name": "x", "sha512": {"env": "B"}}]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2 and "users: 'x' is given twice" in result.stderr
