"""Deploy inventory: how to reach each device and how to roll out, from the fabric's topology plus
`deploy.yaml` beside `fabric.yaml` (management addresses, SSH settings, rollout policy).

Credentials never live in these files. They come from environment variables or from a file only
its owner can read, are held as `SecretStr`, and never reach output, logs or reports.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from nornir.core import Nornir
from nornir.core.configuration import Config, LoggingConfig, RunnerConfig
from nornir.core.inventory import (
    ConnectionOptions,
    Defaults,
    Group,
    Groups,
    Host,
    Hosts,
    Inventory,
    ParentGroups,
)
from nornir.core.plugins.connections import ConnectionPluginRegister
from nornir.plugins.runners import ThreadedRunner
from pydantic import Field, SecretStr, StringConstraints

from netgen.deploy.ownership import NosOwnership
from netgen.intent.errors import InputProblem, NetgenInputError
from netgen.intent.problems import validate
from netgen.intent.types import IntentModel, SafeName
from netgen.intent.yaml_source import MAX_FILE_BYTES, read_yaml
from netgen.lock.settings import LockSettings
from netgen.registry import NOS
from netgen.topology.model import Device, Topology

DEPLOY_FILE = "deploy.yaml"
SOT_FILE = "deploy.sot.yaml"  # written by `netgen sot pull`, replaced whole by the next pull
# Source-of-truth statuses a deploy may change a switch in; any other (Planned, Offline,
# Decommissioning, Failed, ...) leaves it out of the rollout, said in the report
DEPLOYABLE_STATUSES = frozenset({"Active", "Staged"})
USERNAME_ENV, PASSWORD_ENV, KEY_ENV = "NETGEN_USERNAME", "NETGEN_PASSWORD", "NETGEN_SSH_KEY"

HostName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.:-]{0,252}$")]
HostPattern = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9.:{}_-]{1,200}$")]


class DeviceAccess(IntentModel):
    host: HostName | None = None
    port: int | None = Field(default=None, ge=1, le=65535)


class Management(IntentModel):
    host_pattern: HostPattern = Field(default="{name}", description="Management host per device; {name} expands.")
    port: int = Field(default=22, ge=1, le=65535)
    devices: dict[SafeName, DeviceAccess] = Field(default_factory=dict)


class SshSettings(IntentModel):
    known_hosts: str = Field(default="~/.ssh/known_hosts", pattern=r"^[A-Za-z0-9_./~-]{1,300}$")
    connect_timeout_s: float = Field(default=20.0, gt=0, le=600)
    command_timeout_s: float = Field(default=120.0, gt=0, le=3600)


class RolloutPolicy(IntentModel):
    """How much of the fabric may be in flight at once (see netgen/deploy/rollout.py)."""

    workers: int = Field(default=20, ge=1, le=500, description="Nornir threads (devices at once within a batch).")
    rtsw_batch_size: int = Field(default=16, ge=1, description="RTSWs per batch after the canaries.")
    max_zone_share: float = Field(default=0.25, gt=0, le=1,
                                  description="Most of one zone's RTSWs in one batch (failure-domain share).")
    ctsw_per_zone: int = Field(default=1, ge=1, description="CTSWs of one zone in one batch.")
    atsw_per_batch: int = Field(default=1, ge=1, description="ATSWs in one batch.")
    confirm_timeout_s: int = Field(default=300, ge=30, le=3600,
                                   description="Commit-confirm window: unconfirmed changes roll back after it.")
    max_failures: int = Field(default=0, ge=0, description="Failed devices tolerated before the rollout stops.")


class DeployFile(IntentModel):
    management: Management = Field(default_factory=Management)
    ssh: SshSettings = Field(default_factory=SshSettings)
    rollout: RolloutPolicy = Field(default_factory=RolloutPolicy)
    lock: LockSettings = Field(default_factory=LockSettings,
                               description="Where the change lock and the shared drain state live.")
    ownership: dict[SafeName, NosOwnership] = Field(
        default_factory=dict, description="Per NOS: what a deploy replaces, keeps and may remove (ownership.py).")


class SotDevice(IntentModel):
    host: HostName | None = None  # the management address the source of truth gives
    serial: str = Field(default="", max_length=200)
    status: str = Field(default="", max_length=100)


class SotFile(IntentModel):
    """What `netgen sot pull` read from the source of truth (deploy.sot.yaml)."""

    source: dict[SafeName, str] = Field(default_factory=dict)  # backend, url, pulled (never a token)
    devices: dict[SafeName, SotDevice] = Field(default_factory=dict)


def _read_mapping(path: Path, model: type[Any], allowed: str) -> Any:
    data, marks = read_yaml(path, str(path))
    if data is None:
        return model()
    if not isinstance(data, dict):
        raise NetgenInputError([InputProblem(str(path), "", "the top level must be a mapping", 1, 1, allowed=allowed)])
    return validate(model, data, marks, str(path))


def load_sot(fabric_dir: Path) -> SotFile | None:
    path = fabric_dir / SOT_FILE
    return _read_mapping(path, SotFile, "source:, devices:") if path.exists() else None


def load_deploy(fabric_dir: Path) -> DeployFile:
    """`deploy.yaml` beside the fabric file, or the defaults when there is none; a switch it gives
    no host of its own is reached at the address the source of truth gives (deploy.sot.yaml)."""
    path = fabric_dir / DEPLOY_FILE
    deploy: DeployFile = (_read_mapping(path, DeployFile, "management:, ssh:, rollout:, ownership:")
                          if path.exists() else DeployFile())
    sot = load_sot(fabric_dir)
    if sot is None:
        return deploy
    devices = dict(deploy.management.devices)
    for name, facts in sot.devices.items():
        own = devices.get(name)
        if facts.host and not (own and own.host):
            devices[name] = DeviceAccess(host=facts.host, port=own.port if own else None)
    return deploy.model_copy(update={"management": deploy.management.model_copy(update={"devices": devices})})


@dataclass(frozen=True)
class Credentials:
    username: str
    password: SecretStr | None
    key_file: Path | None
    source: str  # where they came from, for messages (never the values)

    def __repr__(self) -> str:  # never print a secret, even by accident
        return f"Credentials(username={self.username!r}, password=***, key_file={self.key_file}, source={self.source})"


class CredentialsError(Exception):
    """Missing or unsafely stored credentials; the message says how to fix it, never the secret."""


def load_credentials(path: Path | None = None, environ: dict[str, str] | None = None) -> Credentials:
    env = os.environ if environ is None else environ
    if path is not None:
        return _credentials_file(path)
    username = env.get(USERNAME_ENV)
    if not username:
        raise CredentialsError(f"no credentials: set {USERNAME_ENV} and {PASSWORD_ENV} (or {KEY_ENV}), or pass"
                               " --credentials FILE (a YAML file readable only by its owner; Ansible:"
                               " netgen_credentials_file, or netgen_username / netgen_password from vault)")
    password = env.get(PASSWORD_ENV)
    key = env.get(KEY_ENV)
    if not password and not key:
        raise CredentialsError(f"{USERNAME_ENV} is set but neither {PASSWORD_ENV} nor {KEY_ENV}")
    return Credentials(username, SecretStr(password) if password else None, Path(key) if key else None,
                       "environment")


def _credentials_file(path: Path) -> Credentials:
    try:
        info = path.stat()
    except OSError as exc:
        raise CredentialsError(f"{path}: cannot read credentials file ({exc.strerror})") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise CredentialsError(f"{path}: credentials file is readable by others (mode"
                               f" {stat.S_IMODE(info.st_mode):04o}); run `chmod 600 {path}`")
    if info.st_uid != os.geteuid():
        raise CredentialsError(f"{path}: credentials file belongs to another user; it must be your own")
    data = _read_credentials_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("username"), str):
        raise CredentialsError(f"{path}: expected `username:` and `password:` or `key_file:`")
    password, key = data.get("password"), data.get("key_file")
    if not isinstance(password, str | None) or not isinstance(key, str | None) or not (password or key):
        raise CredentialsError(f"{path}: give `password:` or `key_file:` as text")
    return Credentials(data["username"], SecretStr(password) if password else None, Path(key) if key else None,
                       str(path))


CREDENTIAL_KEYS = ("username", "password", "key_file")
CREDENTIALS_SHAPE = ("username: NAME, then password: 'TEXT' (in single quotes, a quote inside written as '')"
                     " or key_file: PATH")
_KEY_LINE = re.compile(r"(username|password|key_file)[ \t]*:(?:[ \t]|$)")
# File-level problems of read_yaml whose whole text is fixed (no part of the file in them); every
# other problem is replaced by one that names only the place.
_SAFE_FILE_PROBLEM = re.compile(
    r"file not found|permission denied|is a directory, expected a YAML file"
    r"|not a regular file \(a device, pipe or socket\)|file is larger than \d+ MiB|not UTF-8 text \(byte \d+\)"
    r"|file is empty; expected a mapping of settings")
# The input limits' problems (yaml_source.py): fixed text but for the limit's figure, with a place in
# the file; kept as they are, so a file over a limit says which, not that its quoting is wrong.
_LIMIT_PROBLEM = re.compile(
    r"the document holds more than [\d,]+ nodes \(lists, mappings and scalars, each alias counted as what it"
    r" repeats\)|the document's keys and values hold more than [\d,]+ characters \(each alias counted as what it"
    r" repeats\)|a list of more than [\d,]+ items|a mapping of more than [\d,]+ keys|nested more than \d+ levels"
    r" deep|recursive YAML alias")


def _read_credentials_yaml(path: Path) -> Any:
    """read_yaml, except that no problem quotes the file: YAML's own messages quote the offending
    token (`!Xy7...` is read as a tag, `*Xy7...` as an alias), so each problem is re-made from the
    file name, line, column and, where it is one of ours, the key; the rest is fixed text."""
    try:
        data, _ = read_yaml(path, str(path))
    except NetgenInputError as exc:
        lines = _text_lines(path)
        raise NetgenInputError([_redacted(str(path), problem, lines) for problem in exc.problems]) from None
    return data


def _text_lines(path: Path) -> list[str]:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _redacted(display: str, problem: InputProblem, lines: list[str]) -> InputProblem:
    if problem.line is None and _SAFE_FILE_PROBLEM.fullmatch(problem.message):
        return InputProblem(display, "", problem.message, allowed=CREDENTIALS_SHAPE)
    if problem.path in CREDENTIAL_KEYS and problem.message.startswith("duplicate key"):
        return InputProblem(display, problem.path, "duplicate key", problem.line, problem.column,
                            allowed="each key once")
    key = problem.path if problem.path in CREDENTIAL_KEYS else _key_above(lines, problem.line)
    if _LIMIT_PROBLEM.fullmatch(problem.message):
        return InputProblem(display, key, problem.message, problem.line, problem.column, allowed=problem.allowed)
    return InputProblem(display, key, "not valid YAML (a credentials file's values are never shown: check the"
                        " quoting of this value)", problem.line, problem.column, allowed=CREDENTIALS_SHAPE)


def _key_above(lines: list[str], line: int | None) -> str:
    """The credentials key whose value holds `line` (1-based): the nearest unindented line at or
    above it, if that line starts with one of our keys; else "" (never any other text of the file)."""
    if line is None:
        return ""
    for text in reversed(lines[: max(line, 0)]):
        if not text.strip() or text.lstrip().startswith("#") or text[:1] in " \t":
            continue
        match = _KEY_LINE.match(text)
        return match.group(1) if match else ""
    return ""


def device_access(deploy: DeployFile, device: Device) -> tuple[str, int]:
    override = deploy.management.devices.get(device.name)
    host = override.host if override and override.host else deploy.management.host_pattern.format(name=device.name)
    port = override.port if override and override.port else deploy.management.port
    return host, port


def nornir_inventory(topology: Topology, deploy: DeployFile, names: list[str], credentials: Credentials,
                     known_hosts: Path | None) -> Inventory:
    """One Nornir host per device, groups per tier and zone, and the connection options that make
    netmiko verify host keys against `known_hosts` (None: verification off, by explicit request)."""
    hosts = Hosts()
    groups = Groups()
    password = credentials.password.get_secret_value() if credentials.password else None
    for name in names:
        device = topology.devices[name]
        host, port = device_access(deploy, device)
        tier = f"tier_{device.role.value}"
        zone = f"zone_{device.zone}" if device.zone is not None else "atsw_layer"
        for group in (tier, zone):
            groups.setdefault(group, Group(name=group))
        extras: dict[str, Any] = {"conn_timeout": deploy.ssh.connect_timeout_s}
        if known_hosts is not None:
            extras |= {"ssh_strict": True, "system_host_keys": False, "alt_host_keys": True,
                       "alt_key_file": str(known_hosts)}
        else:
            extras |= {"ssh_strict": False}
        if credentials.key_file is not None:
            extras |= {"use_keys": True, "key_file": str(credentials.key_file)}
        hosts[name] = Host(
            name=name, hostname=host, port=port, platform=NOS.bundle(device.nos).netmiko_device_type,
            username=credentials.username, password=password,
            groups=ParentGroups([groups[tier], groups[zone]]),
            data={"role": device.role.value, "zone": device.zone, "nos": device.nos, "model": device.model},
            connection_options={"netmiko": ConnectionOptions(extras=extras)},
        )
    return Inventory(hosts=hosts, groups=groups, defaults=Defaults())


def make_nornir(inventory: Inventory, workers: int) -> Nornir:
    """Nornir with its threaded runner and a bounded worker count; no config file, no logging file."""
    if "netmiko" not in ConnectionPluginRegister.available:  # nornir_netmiko's (InitNornir would do this)
        ConnectionPluginRegister.auto_register()
    config = Config(runner=RunnerConfig(plugin="threaded", options={"num_workers": workers}),
                    logging=LoggingConfig(enabled=False))
    return Nornir(inventory=inventory, runner=ThreadedRunner(num_workers=workers), config=config)
