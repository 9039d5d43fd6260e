"""The lab backends netgen has, by kind (`netgen lab up --backend`): network namespaces on this
host, or containerlab. A lab that exists is found by asking each in turn (containerlab first)."""

from __future__ import annotations

from collections.abc import Callable

from netgen.lab.backend import LabBackend
from netgen.lab.containerlab import ContainerlabBackend
from netgen.lab.netns import NetnsBackend

BACKENDS: dict[str, Callable[[str], LabBackend]] = {
    ContainerlabBackend.kind: ContainerlabBackend,
    NetnsBackend.kind: NetnsBackend,
}
