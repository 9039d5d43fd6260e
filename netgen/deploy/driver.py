"""The NOS driver contract used by the deploy pipeline: read state for the checks, stage the
intended config and show the diff, commit with a way back, confirm or roll back, and read back
what the device holds after each of those, so a report never states what was only sent.

A driver holds one netmiko connection to one device. A NOS's driver and its default ownership are
parts of its bundle (netgen/registry.py: `driver`, `ownership`), looked up here by NOS
(driver_factory, default_ownership), so a NOS brings its driver in its own folder and the pipeline
never names one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast

from netgen.deploy.checks import Facts
from netgen.deploy.ownership import Ownership
from netgen.registry import NOS
from netgen.topology.model import Device


class DriverError(Exception):
    """The device refused or failed a step; the message says which and what it answered."""


def json_object(device: str, what: str, text: str) -> dict[str, Any]:
    """A device's JSON answer as an object, or a DriverError that names the device and the command."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise DriverError(f"{device}: {what} did not return JSON: {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise DriverError(f"{device}: {what} did not return a JSON object")
    return data


@dataclass(frozen=True)
class StagedChange:
    """What a push would change. `text` is for people (a unified diff, or table/key/field lines);
    `changes` counts the changed lines or fields (0 = the device already runs the intent)."""

    text: str
    changes: int
    detail: dict[str, Any]  # e.g. {"patch": [...RFC 6902...], "frr_diff": "..."}

    @property
    def empty(self) -> bool:
        return self.changes == 0


def digest(text: str) -> str:
    """A short fingerprint of a configuration, to compare what a device holds with what it held
    before a change and right after it (the journal stores these, never the config: it holds secrets)."""
    return hashlib.sha256(text.encode()).hexdigest()[:24]


HOLDS_NEW, HOLDS_OLD, HOLDS_OTHER = "new", "old", "other"


@dataclass(frozen=True)
class Readback:
    """What a device was seen holding, read from it after a step.

    holds: "new" (the running config is the one right after this change's commit), "old" (the one
    before it) or "other" (neither: a partial apply, or someone else's change).
    saved: whether the config the device boots with equals the running one (None: not read).
    pending: what still waits to happen by itself ("" = nothing): an EOS commit timer, a SONiC
    revert timer, with the time left when the device says it."""

    holds: str
    saved: bool | None
    pending: str
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"holds": self.holds, "saved": self.saved, "pending": self.pending, "detail": self.detail}


DRAINED, NOT_DRAINED, PARTLY_DRAINED = "drained", "not drained", "partly drained"


def drain_word(state: bool | None) -> str:
    return DRAINED if state is True else NOT_DRAINED if state is False else PARTLY_DRAINED


@dataclass(frozen=True)
class DrainReadback:
    """A switch's drain as read from it (`netgen drain`): in what it runs and in what it boots with.
    True: drained; False: not drained (also: no BGP policy to drain through, as before a first
    deploy); None: neither (some of its outbound policy carries the drain, or a foreign entry sits
    where the drain's would): never a state netgen leaves a switch in, and the capacity guard counts
    it as drained."""

    running: bool | None
    saved: bool | None
    detail: str
    # the BGP sessions (peer addresses) a link drain holds out of service, in what it runs and boots with
    peers_running: frozenset[str] = frozenset()
    peers_saved: frozenset[str] = frozenset()

    @property
    def state(self) -> bool | None:
        """The switch's drain: what it runs and boots with alike, else None."""
        return self.running if self.running == self.saved else None

    @property
    def peers(self) -> frozenset[str]:
        """The sessions link-drained in what it runs or in what it boots with (either counts)."""
        return self.peers_running | self.peers_saved

    def as_dict(self) -> dict[str, Any]:
        return {"state": drain_word(self.state), "running": drain_word(self.running),
                "saved": drain_word(self.saved), "detail": self.detail,
                "drained_sessions": {"running": sorted(self.peers_running), "saved": sorted(self.peers_saved)}}


class Connection(Protocol):
    """The part of a netmiko connection the drivers use."""

    def send_command(self, command_string: str, *args: Any, **kwargs: Any) -> Any: ...

    def send_command_timing(self, command_string: str, *args: Any, **kwargs: Any) -> Any: ...

    def send_config_set(self, config_commands: Any = None, *args: Any, **kwargs: Any) -> str: ...

    def enable(self, *args: Any, **kwargs: Any) -> str: ...

    def config_mode(self, *args: Any, **kwargs: Any) -> str: ...

    def write_channel(self, out_data: str) -> None: ...

    def read_channel_timing(self, *args: Any, **kwargs: Any) -> str: ...

    def disconnect(self) -> None: ...


class Driver(Protocol):
    nos: ClassVar[str]
    name: str

    # --- read (DeviceState, for the checks) ---
    def new_round(self) -> None:
        """A new round of checks starts: anything read and kept before may be stale now."""
        ...

    def facts(self) -> Facts: ...

    def bgp_peers(self) -> dict[str, str]: ...

    def pfc_priorities(self) -> dict[str, set[int]]: ...

    def pfc_storms(self) -> list[str]: ...

    def interface_errors(self) -> dict[str, int]: ...

    def config_diff(self) -> str: ...

    def route_widths(self) -> dict[str, int]: ...

    def lldp_neighbors(self) -> dict[str, list[tuple[str, str]]]: ...

    # --- change ---
    def stage(self) -> StagedChange:
        """Compute (EOS: load into a config session) the change from running to intended."""
        ...

    def discard(self) -> None:
        """Drop a staged change without applying it (dry run, or nothing to do)."""
        ...

    def commit(self, confirm_timeout_s: int) -> None:
        """Apply the staged change so that it can still be undone: EOS `commit timer`, SONiC a
        checkpoint taken before `config apply-patch`."""
        ...

    def confirm(self) -> None:
        """Make the committed change permanent (EOS confirm the session and save it, SONiC disarm
        the revert timer and save). Safe to repeat after a reconnect."""
        ...

    def save(self) -> None:
        """Make what the device runs the config it boots with (EOS `copy running-config
        startup-config`, SONiC `config save` and frr.conf), and nothing else: for a change the device
        has confirmed already (a confirm whose answer was lost), so the confirm is never sent twice.
        Safe to repeat."""
        ...

    def rollback(self) -> None:
        """Return to the config the device ran before `commit` (safe to repeat, also from a driver
        rebuilt after a reconnect: it relies on what is on the device, not on this object)."""
        ...

    def running_digest(self) -> str:
        """The fingerprint of what the device runs now (see `digest`)."""
        ...

    def readback(self, before: str, after: str | None) -> Readback:
        """What the device holds now, compared with the fingerprints before and after this change's
        commit; whether it is saved; what is pending (timers)."""
        ...

    # --- drain (`netgen drain`, `netgen undrain`; docs/explanation/drain.md) ---
    def drain_state(self) -> DrainReadback:
        """Whether the switch is drained, read from its running and its saved config."""
        ...

    def drain(self) -> None:
        """Drain the switch gracefully (its sessions stay up, its neighbours stop choosing it) and
        make the drain what it boots with. Repeat-safe."""
        ...

    def undrain(self) -> None:
        """Remove exactly what drain() added, running and saved. Repeat-safe."""
        ...

    def drain_sessions(self, peers: Sequence[str]) -> None:
        """Drain these BGP sessions only (a link's, `netgen drain A--B`): the neighbours at their
        other end stop choosing this switch over them, running and saved. Repeat-safe."""
        ...

    def undrain_sessions(self, peers: Sequence[str]) -> None:
        """Remove exactly what drain_sessions(peers) added, running and saved. Repeat-safe."""
        ...

    def serial(self) -> str:
        """The switch's serial number, as it reports it ("" when it reports none)."""
        ...

    def keep_drained(self, seen: DrainReadback) -> None:
        """From now on the intended config is the rendered one with the drain `seen` read (the
        switch's, its drained sessions'): a deploy to a drained switch (--keep-drained) and the
        remaining-diff check leave its drain as it is."""
        ...


# (connection, device, rendered files, change id, command timeout in seconds, what the deploy may remove)
DriverFactory = Callable[[Connection, Device, Mapping[str, str], str, float, Ownership], Driver]


def driver_factory(nos: str) -> DriverFactory:
    """The driver factory of `nos` (its bundle's `driver` part); NosRegistryError for a NOS without
    one, or a part that is not callable."""
    factory = NOS.part(nos, "driver")
    if not callable(factory):
        raise NOS.wrong_part(nos, "driver", "a driver factory (connection, device, files, change id, timeout,"
                                            " ownership) -> Driver")
    return cast(DriverFactory, factory)


def default_ownership(nos: str) -> Ownership:
    """What a deploy to `nos` may remove unless deploy.yaml says otherwise (its bundle's `ownership`)."""
    ownership = NOS.part(nos, "ownership")
    if not isinstance(ownership, Ownership):
        raise NOS.wrong_part(nos, "ownership", "an Ownership (netgen/deploy/ownership.py)")
    return ownership


def deployable() -> list[str]:
    """The NOSes netgen can deploy to: those whose bundle names a driver (nothing is imported)."""
    return NOS.names("driver")


CHANGE_ID = re.compile(r"^[a-z0-9-]{1,32}$")


def check_change_id(change_id: str) -> str:
    """Change ids name EOS sessions and SONiC checkpoints: keep them short and shell-safe."""
    if not CHANGE_ID.match(change_id):
        raise DriverError(f"change id {change_id!r}: use 1-32 lowercase letters, digits and '-'")
    return change_id
