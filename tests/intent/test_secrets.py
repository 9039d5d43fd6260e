"""Secrets by reference (intent/secrets.py) through services.users: read at render (and by validate,
as render reads them), errors that name the field and the reference and never the value, and hashes
only, never passwords."""

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


def test_validate_reads_what_render_reads_and_show_never_needs_it(small_data, write_fabric, monkeypatch):
    """`validate` passes only where `render` can read the hash (issue 31 #10), and says where the
    reference is; `show` never reads a secret."""
    monkeypatch.delenv("NETGEN_TEST_HASH", raising=False)
    path = _users(small_data, write_fabric, {"env": "NETGEN_TEST_HASH"})
    result = run_cli("validate", "--json", str(path))
    assert result.exit_code == 2, result.output
    (problem,) = json.loads(result.stdout)["input_errors"]
    assert (problem["path"], problem["line"] is not None, problem["column"] is not None) == (
        "services.users[0].sha512", True, True)
    assert "NETGEN_TEST_HASH is not set" in problem["message"]
    assert run_cli("show", str(path), "--device", "z02-rtsw001").exit_code == 0
    monkeypatch.setenv("NETGEN_TEST_HASH", HASH)
    assert run_cli("validate", str(path)).exit_code == 0


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


# --- placeholders for reversible secrets (services.aaa.tacacs.key): filled only by the deploy ----------

def _fill(text, monkeypatch, value=None, ref=None):
    from netgen.intent.secrets import SecretRef, fill_placeholders  # noqa: PLC0415

    if value is not None:
        monkeypatch.setenv("NETGEN_TEST_KEY", value)
    else:
        monkeypatch.delenv("NETGEN_TEST_KEY", raising=False)
    refs = {"services.aaa.tacacs.key": ref or SecretRef(env="NETGEN_TEST_KEY")}
    return fill_placeholders(text, refs, "sw1/sw1.cfg")


def test_a_placeholder_is_filled_everywhere_it_stands(monkeypatch):
    text = "a key 0 <netgen-secret/services.aaa.tacacs.key>\nb key 0 <netgen-secret/services.aaa.tacacs.key>\n"
    assert _fill(text, monkeypatch, "Good.Key-2026") == "a key 0 Good.Key-2026\nb key 0 Good.Key-2026\n"
    assert _fill("no placeholder\n", monkeypatch) == "no placeholder\n"  # nothing read when nothing is needed


@pytest.mark.parametrize("value", ["has space1", "semi#colon1", "a,b,c,d,e", "at@sign12", "co:lon123", "what?ever1",
                                   "pipe|pipe1", "bang!bang1", 'quo"te1234', "short", "x" * 65, "line\nbreak1",
                                   "<netgen-x>1"])
def test_a_key_a_switch_would_not_take_in_one_line_is_refused_without_showing_it(monkeypatch, value):
    from netgen.intent.secrets import SecretError  # noqa: PLC0415

    with pytest.raises(SecretError) as caught:
        _fill("key 0 <netgen-secret/services.aaa.tacacs.key>", monkeypatch, value)
    message = str(caught.value)
    assert message.startswith("services.aaa.tacacs.key: environment variable NETGEN_TEST_KEY must hold 8-64")
    assert value not in message


def test_an_unset_key_or_an_unknown_placeholder_names_the_field(monkeypatch):
    from netgen.intent.secrets import SecretError  # noqa: PLC0415

    with pytest.raises(SecretError, match=r"services\.aaa\.tacacs\.key: environment variable NETGEN_TEST_KEY"):
        _fill("key 0 <netgen-secret/services.aaa.tacacs.key>", monkeypatch)
    with pytest.raises(SecretError, match=r"sw1/sw1.cfg: holds a placeholder for services.snmp.key, which the"):
        _fill("x <netgen-secret/services.snmp.key>", monkeypatch, "Good.Key-2026")


# --- Ansible vault references: encrypted with the real `ansible-vault`, decrypted by Ansible's code ----

VAULT_PASSWORD = "vault-pass-for-tests"


def _vault(tmp_path, plaintext: str, name: str = "secret.vault"):
    """`plaintext` encrypted by the ansible-vault of this environment, and the password file."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    password = tmp_path / "vault-password"
    password.write_text(VAULT_PASSWORD + "\n")
    target = tmp_path / name
    target.write_text(plaintext)
    vault = Path(sys.executable).parent / "ansible-vault"
    subprocess.run([str(vault), "encrypt", str(target), "--vault-password-file", str(password)],
                   check=True, capture_output=True)
    assert target.read_text().startswith("$ANSIBLE_VAULT;1.1;AES256")
    return target, password


def test_a_hash_in_an_ansible_vault_is_rendered(small_data, write_fabric, monkeypatch, tmp_path):
    path = _users(small_data, write_fabric, {"vault": "ops2.vault"})  # relative to the fabric file
    _, password = _vault(path.parent, HASH + "\n", "ops2.vault")
    monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD_FILE", str(password))
    monkeypatch.chdir(tmp_path)  # rendered from elsewhere: the path is the fabric file's
    result = run_cli("render", str(path), "-o", str(path.parent / "out"), "--device", "z02-rtsw001")
    assert result.exit_code == 0, result.stderr
    eos = (path.parent / "out" / "z02-rtsw001" / "z02-rtsw001.cfg").read_text()
    assert f"username ops2 privilege 15 role network-admin secret sha512 {HASH}\n" in eos


def test_a_vault_password_script_is_run_as_ansible_runs_it(monkeypatch, tmp_path):
    from netgen.intent.secrets import SecretRef  # noqa: PLC0415

    target, _ = _vault(tmp_path, "Vaulted.Key-1\nsecond line ignored\n")
    script = tmp_path / "vault-client"
    script.write_text(f"#!/bin/sh\necho {VAULT_PASSWORD}\n")
    script.chmod(0o700)
    monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD_FILE", str(script))
    assert SecretRef(vault=str(target)).resolve("services.aaa.tacacs.key") == "Vaulted.Key-1"


@pytest.mark.parametrize(("password", "plain", "expected"), [
    ("wrong-password", False, "cannot be decrypted with the password from ANSIBLE_VAULT_PASSWORD_FILE"),
    (None, False, "needs its password: set ANSIBLE_VAULT_PASSWORD_FILE"),
    (VAULT_PASSWORD, True, "is not an Ansible vault (no $ANSIBLE_VAULT header)"),
])
def test_vault_problems_name_the_field_and_never_the_secret(monkeypatch, tmp_path, password, plain, expected):
    from netgen.intent.secrets import SecretError, SecretRef  # noqa: PLC0415

    target, _ = _vault(tmp_path, "Top.Secret-Key-9\n")
    if plain:
        target.write_text("Top.Secret-Key-9\n")
    if password is None:
        monkeypatch.delenv("ANSIBLE_VAULT_PASSWORD_FILE", raising=False)
    else:
        (tmp_path / "given-password").write_text(password + "\n")
        monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD_FILE", str(tmp_path / "given-password"))
    with pytest.raises(SecretError) as caught:
        SecretRef(vault=str(target)).resolve("services.aaa.tacacs.key")
    message = str(caught.value)
    assert message.startswith(f"services.aaa.tacacs.key: vault file {target}") and expected in message, message
    assert "Top.Secret" not in message and VAULT_PASSWORD not in message


def test_a_reference_names_exactly_one_place(small_data, write_fabric):
    path = _users(small_data, write_fabric, {"file": "a", "vault": "b"})
    result = run_cli("validate", str(path))
    assert result.exit_code == 2 and "give exactly one of env, file, vault" in result.stderr


def test_redaction_masks_snmp_passphrases_and_keys_but_not_the_group_line():
    from netgen.intent.secrets import redact  # noqa: PLC0415

    assert redact("snmp-server user netmon netgen-ro v3 auth sha Pa55-word.x priv aes Pr1v-word.y") == (
        "snmp-server user netmon netgen-ro v3 auth sha *** priv aes ***")
    assert redact("snmp-server user u g v3 localized f5717f00 auth sha256 0a1b priv aes256 2c3d") == (
        "snmp-server user u g v3 localized f5717f00 auth sha256 *** priv aes256 ***")
    assert redact("snmp-server group netgen-ro v3 priv read netgen-all") == (
        "snmp-server group netgen-ro v3 priv read netgen-all")


def test_a_hash_is_read_once_per_render_and_again_for_the_next(small_data, write_fabric, monkeypatch):
    """Every EOS switch of a render asks for the users; a vault read costs a key derivation each."""
    from netgen.checks import DesignContext  # noqa: PLC0415
    from netgen.intent import load_fabric  # noqa: PLC0415
    from netgen.platforms.services import local_users  # noqa: PLC0415
    from netgen.topology import expand  # noqa: PLC0415

    monkeypatch.setenv("NETGEN_TEST_HASH", HASH)
    loaded = load_fabric(_users(small_data, write_fabric, {"env": "NETGEN_TEST_HASH"}))
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    assert local_users(ctx)[0].sha512 == HASH
    rotated = HASH.replace("$netgentest$", "$rotatedsal$")
    monkeypatch.setenv("NETGEN_TEST_HASH", rotated)
    assert local_users(ctx)[0].sha512 == HASH  # the same render: not read again
    fresh = DesignContext(loaded.fabric, loaded.catalog, ctx.topology)
    assert local_users(fresh)[0].sha512 == rotated  # the next render reads the rotated hash
