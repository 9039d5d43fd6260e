"""Secrets by reference: the fabric file names where a secret is, never the secret.

`{env: NAME}` reads an environment variable, `{file: PATH}` a file and `{vault: PATH}` a file
encrypted with `ansible-vault` (paths relative to the fabric file: the loader makes them absolute;
the first line, trailing newline dropped). A reference is resolved where it is used (render for a
hash, deploy for a key) and by `netgen validate`, which reads each as they do, through the same
functions (`read_hash`, `read_shared`; intent/loader.py `check_secrets`), and names the line and
column of the reference. Errors name the field and the reference, never any part of the value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field, model_validator

from netgen.intent.types import FILE_PATH_PATTERN, IntentModel

ENV_NAME_PATTERN = r"^[A-Z_][A-Z0-9_]{0,127}$"
MAX_SECRET_BYTES = 4096


class SecretError(Exception):
    """A secret reference that cannot be resolved: input (exit 2), named by field, never by value."""


class SecretRef(IntentModel):
    """Where a secret is: exactly one of `env`, `file` and `vault`."""

    env: str | None = Field(default=None, pattern=ENV_NAME_PATTERN,
                            description="An environment variable holding the secret (e.g. NETGEN_HASH_NETOPS).")
    file: str | None = Field(default=None, pattern=FILE_PATH_PATTERN,
                             description="A file holding it (first line): absolute, or relative to the fabric file."
                                         " Keep it out of the repository and readable only by you.")
    vault: str | None = Field(default=None, pattern=FILE_PATH_PATTERN,
                              description="A file encrypted with `ansible-vault encrypt` holding it (first line),"
                                          " absolute or relative to the fabric file; its password is read where"
                                          " Ansible reads it: the file ANSIBLE_VAULT_PASSWORD_FILE names (run if"
                                          " executable).")

    @model_validator(mode="after")
    def _one(self) -> SecretRef:
        if sum(value is not None for value in (self.env, self.file, self.vault)) != 1:
            raise ValueError("give exactly one of env, file, vault")
        return self

    @property
    def path(self) -> str | None:
        """The file the secret is in (plain or vault), if it is in one."""
        return self.file if self.file is not None else self.vault

    def describe(self) -> str:
        if self.env:
            return f"environment variable {self.env}"
        return f"file {self.file}" if self.file else f"vault file {self.vault}"

    def resolve(self, field: str) -> str:
        """The secret's value; `field` names the fabric-file path in errors."""
        if self.env is not None:
            value = os.environ.get(self.env)
            if value is None:
                raise SecretError(f"{field}: environment variable {self.env} is not set: export it where netgen"
                                  " renders (it is never written to the fabric file)")
        else:
            data = _read_small(field, Path(str(self.path)).expanduser(),
                               VAULT_MAX_BYTES if self.vault else MAX_SECRET_BYTES)
            if self.vault is not None:
                data = _decrypt_vault(field, self.vault, data)
            try:
                value = data.decode("utf-8").split("\n", 1)[0].rstrip("\r")
            except UnicodeDecodeError:
                raise SecretError(f"{field}: {self.describe()} is not UTF-8 text") from None
        if not value:
            raise SecretError(f"{field}: {self.describe()} is empty")
        return value


VAULT_MAX_BYTES = 64 * 1024  # hex-encoded ciphertext of a small secret, with room to spare
VAULT_PASSWORD_ENV = "ANSIBLE_VAULT_PASSWORD_FILE"  # Ansible's own setting (DEFAULT_VAULT_PASSWORD_FILE)


def _read_small(field: str, path: Path, limit: int) -> bytes:
    try:
        if path.exists() and not path.is_file():  # a FIFO would block the read; a directory is no secret
            raise SecretError(f"{field}: {path} is not a regular file")
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise SecretError(f"{field}: file {path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(data) > limit:
        raise SecretError(f"{field}: file {path} is larger than {limit} bytes: not a secret file")
    return data


def _decrypt_vault(field: str, name: str, data: bytes) -> bytes:
    """Ansible's own vault code decrypts (ansible-core is a dependency already); imported here only,
    since most renders never need it. No message quotes any part of the plaintext."""
    if not data.startswith(b"$ANSIBLE_VAULT;"):
        raise SecretError(f"{field}: vault file {name} is not an Ansible vault (no $ANSIBLE_VAULT header): encrypt"
                          " it with `ansible-vault encrypt`")
    password_file = os.environ.get(VAULT_PASSWORD_ENV)
    if not password_file:
        raise SecretError(f"{field}: vault file {name} needs its password: set {VAULT_PASSWORD_ENV} to the file"
                          " (or script) that holds it, as for ansible-playbook")
    from ansible.errors import AnsibleError  # noqa: PLC0415
    from ansible.parsing.dataloader import DataLoader  # noqa: PLC0415
    from ansible.parsing.vault import VaultLib, get_file_vault_secret  # noqa: PLC0415

    try:
        secret = get_file_vault_secret(filename=password_file, loader=DataLoader())
        secret.load()
        plain: bytes = VaultLib([("default", secret)]).decrypt(data)
    except AnsibleError:
        raise SecretError(f"{field}: vault file {name} cannot be decrypted with the password from"
                          f" {VAULT_PASSWORD_ENV} ({password_file}): a wrong password, or a damaged file") from None
    return plain


# Secrets a switch must hold in a reversible form (a TACACS+ key: the switch encrypts with it) are
# not rendered: a config carries `<netgen-secret/PATH>` (PATH: the secret's fabric-file path) and the
# deploy puts the value in on the way to the switch, so rendered files, diffs and CI artifacts never
# hold one.
PLACEHOLDER = re.compile(r"<netgen-secret/([A-Za-z0-9_.\[\]]{1,200})>")
# What a shared key may hold: the intersection of what each NOS takes in one line. SONiC's YANG
# refuses space, '#' and ',' in a TACACS+ passkey (sonic-system-tacacs.yang) and space, '@' and ':'
# in an SNMP password (sonic-snmp.yang, 8+ characters for auth and priv); on the EOS CLI '?' asks
# for help, '|' pipes, '!' starts a comment and quotes are parsed; '<' and '>' would read as a
# placeholder. (The placeholder itself, `<netgen-secret/PATH>`, passes those YANG patterns.)
SHARED_KEY = re.compile(r"^[A-Za-z0-9$%&()*+\-./;=\[\]^_{}~]{8,64}$")
SHARED_KEY_TEXT = "8-64 characters of letters, digits and $%&()*+-./;=[]^_{}~"


def read_shared(ref: SecretRef, field: str) -> str:
    """A secret a switch keeps in a reversible form, read now and checked as the deploy fills it
    (SecretError naming `field`, never the value)."""
    secret = ref.resolve(field)
    if not SHARED_KEY.match(secret):
        raise SecretError(f"{field}: {ref.describe()} must hold {SHARED_KEY_TEXT} (no space, '#', ',',"
                          " '@', ':', '?', '|', '!', quotes or '<>'): a switch would not take it in one"
                          " config line")
    return secret


def read_hash(ref: SecretRef, field: str, form: re.Pattern[str]) -> str:
    """A local user's password hash, read now and checked against `form` (sha512-crypt) as the
    render reads it (SecretError naming `field`, never the value)."""
    value = ref.resolve(field)
    if not form.match(value):
        raise SecretError(f"{field}: {ref.describe()} does not hold a sha512-crypt hash ($6$salt$hash, as"
                          " `openssl passwd -6` prints it): netgen renders only the hash, never a password")
    return value


def placeholder(field: str) -> str:
    """What a rendered config holds where the secret at fabric-file path `field` goes."""
    return f"<netgen-secret/{field}>"


def fill_placeholders(text: str, secrets: dict[str, SecretRef], where: str,
                      values: dict[str, str] | None = None) -> str:
    """`text` with every placeholder replaced by its secret. SecretError (naming `where` and the
    field, never a value) for a placeholder the fabric has no secret for, or a value a switch would
    not take in one line. `values`: secrets already read (and checked), shared across the files of
    one deploy so that each is read once (a vault costs a key derivation per read)."""
    values = {} if values is None else values

    def value(match: re.Match[str]) -> str:
        field = match.group(1)
        if field not in values:
            ref = secrets.get(field)
            if ref is None:
                raise SecretError(f"{where}: holds a placeholder for {field}, which the fabric file does not set:"
                                  " render again from the fabric file you deploy")
            values[field] = read_shared(ref, field)
        return values[field]

    return PLACEHOLDER.sub(value, text)


def fill_files(files: Mapping[str, Mapping[str, str]], secrets: dict[str, SecretRef]) -> dict[str, dict[str, str]]:
    """Every device's files (device -> file name -> text) with their placeholders filled; files
    without one are passed through untouched. SecretError as fill_placeholders."""
    values: dict[str, str] = {}
    return {device: {name: fill_placeholders(text, secrets, f"{device}/{name}", values) if MARK in text else text
                     for name, text in texts.items()}
            for device, texts in files.items()}


MARK = "<netgen-secret/"


# A secret after its keyword in CLI text: passwords, hashes and keys (with EOS's encoding type), SNMP
# communities. Masked in every report, error and diff (over-masking, e.g. `ssh-key`, is safe).
SECRET_WORDS = re.compile(r"\b(secret|password|key|community)(\s+(sha512|0|5|7|8a))?\s+\S+", re.IGNORECASE)


# SNMPv3 passphrases (or the localized keys EOS shows instead) after `auth ALG` / `priv ALG`.
SNMP_SECRET_WORDS = re.compile(r"\b(auth|priv)\s+(md5|sha|sha256|sha384|sha512|des|3des|aes|aes192|aes256)\s+\S+",
                               re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with every secret after its keyword replaced by ***."""
    text = SECRET_WORDS.sub(lambda m: f"{m.group(1)} ***", text)
    return SNMP_SECRET_WORDS.sub(lambda m: f"{m.group(1)} {m.group(2)} ***", text)


__all__ = ["MARK", "PLACEHOLDER", "SECRET_WORDS", "SHARED_KEY", "SNMP_SECRET_WORDS", "SecretError", "SecretRef",
           "fill_files", "fill_placeholders", "placeholder", "read_hash", "read_shared", "redact"]
