"""`lock:` of deploy.yaml: where the change lock and the shared drain state live."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from netgen.intent.types import IntentModel

DEFAULT_TTL_S = 60


class LockSettings(IntentModel):
    """The change lock every command that changes a switch takes (docs: how-to/change-lock)."""

    backend: Literal["file", "etcd"] = Field(
        default="file", description="file: a directory (one machine, or one every operator's machine mounts);"
                                    " etcd: an etcd cluster (v3 API, 3.4 or later) for operators on many machines.")
    path: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9_./~-]{1,300}$",
        description="file: the lock directory, relative to the fabric file's folder (default: the state"
                    " directory's lock/, this user's only). Must not be writable by every user.")
    endpoint: str | None = Field(default=None, max_length=300,
                                 description="etcd: the client URL, e.g. https://etcd.ops.example.net:2379.")
    prefix: str = Field(default="/netgen", pattern=r"^/[A-Za-z0-9_/-]{0,100}$",
                        description="etcd: the key prefix netgen keeps its keys under.")
    ttl_s: int = Field(default=DEFAULT_TTL_S, ge=10, le=3600,
                       description="How long a lease lives without renewal; the holder renews it every third.")


__all__ = ["DEFAULT_TTL_S", "LockSettings"]
