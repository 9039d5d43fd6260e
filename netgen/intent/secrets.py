"""Secrets by reference: the fabric file names where a secret is, never the secret.

`{env: NAME}` reads an environment variable, `{file: PATH}` a file (relative to the fabric file:
the loader makes it absolute; its first line, trailing newline dropped). A reference is resolved
only where it is used (render), so `netgen validate` and `netgen show` never need it. Errors name
the field and the reference, never any part of the value.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import Field, model_validator

from netgen.intent.types import FILE_PATH_PATTERN, IntentModel

ENV_NAME_PATTERN = r"^[A-Z_][A-Z0-9_]{0,127}$"
MAX_SECRET_BYTES = 4096


class SecretError(Exception):
    """A secret reference that cannot be resolved: input (exit 2), named by field, never by value."""


class SecretRef(IntentModel):
    """Where a secret is: exactly one of `env` and `file`."""

    env: str | None = Field(default=None, pattern=ENV_NAME_PATTERN,
                            description="An environment variable holding the secret (e.g. NETGEN_HASH_NETOPS).")
    file: str | None = Field(default=None, pattern=FILE_PATH_PATTERN,
                             description="A file holding it (first line): absolute, or relative to the fabric file."
                                         " Keep it out of the repository and readable only by you.")

    @model_validator(mode="after")
    def _one(self) -> SecretRef:
        if (self.env is None) == (self.file is None):
            raise ValueError("give exactly one of env, file")
        return self

    def describe(self) -> str:
        return f"environment variable {self.env}" if self.env else f"file {self.file}"

    def resolve(self, field: str) -> str:
        """The secret's value; `field` names the fabric-file path in errors."""
        if self.env is not None:
            value = os.environ.get(self.env)
            if value is None:
                raise SecretError(f"{field}: environment variable {self.env} is not set: export it where netgen"
                                  " renders (it is never written to the fabric file)")
        else:
            path = Path(str(self.file)).expanduser()
            try:
                with path.open("rb") as handle:
                    data = handle.read(MAX_SECRET_BYTES + 1)
            except OSError as exc:
                raise SecretError(f"{field}: file {path} cannot be read ({exc.strerror or type(exc).__name__})"
                                  ) from None
            if len(data) > MAX_SECRET_BYTES:
                raise SecretError(f"{field}: file {path} is larger than {MAX_SECRET_BYTES} bytes: not a secret file")
            try:
                value = data.decode("utf-8").split("\n", 1)[0].rstrip("\r")
            except UnicodeDecodeError:
                raise SecretError(f"{field}: file {path} is not UTF-8 text") from None
        if not value:
            raise SecretError(f"{field}: {self.describe()} is empty")
        return value


# A secret after its keyword in CLI text: passwords, hashes and keys (with EOS's encoding type), SNMP
# communities. Masked in every report, error and diff (over-masking, e.g. `ssh-key`, is safe).
SECRET_WORDS = re.compile(r"\b(secret|password|key|community)(\s+(sha512|0|5|7|8a))?\s+\S+", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with every secret after its keyword replaced by ***."""
    return SECRET_WORDS.sub(lambda m: f"{m.group(1)} ***", text)


__all__ = ["SECRET_WORDS", "SecretError", "SecretRef", "redact"]
