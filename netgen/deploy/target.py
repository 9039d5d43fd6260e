"""What a push needs, gathered and checked before any connection is opened: the checked fabric,
its deploy.yaml, the selected devices, their rendered files, the credentials and the host-key file.

`netgen deploy`, `netgen check`, `netgen rollout` and the Ansible module (roles/netgen_deploy) all
start here, so a problem is refused the same way whichever door the push came through.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path

from netgen.checks import Finding, Severity, load_and_check
from netgen.context import DesignContext
from netgen.deploy.driver import default_ownership, deployable
from netgen.deploy.inventory import (
    DEPLOYABLE_STATUSES,
    SOT_FILE,
    Credentials,
    CredentialsError,
    DeployFile,
    SotFile,
    device_access,
    load_credentials,
    load_deploy,
    load_sot,
)
from netgen.deploy.ownership import Ownership, resolve
from netgen.intent import LoadedFabric
from netgen.intent.secrets import SecretError, fill_files
from netgen.platforms.output_dir import RenderDirError, render_or_read
from netgen.rendered import RenderError, RenderInputError
from netgen.topology.selection import did_you_mean, select, terms_of


class TargetError(Exception):
    """Input that stops a push before it starts; the message says what to fix (never a secret).
    `internal` marks a netgen bug (a render failure) rather than bad input."""

    def __init__(self, message: str, *, internal: bool = False) -> None:
        super().__init__(message)
        self.internal = internal


@dataclass(frozen=True)
class DeployTarget:
    ctx: DesignContext
    fabric_file: Path  # the fabric file as loaded (deploy.yaml sits beside it)
    deploy: DeployFile
    names: list[str]  # selected devices, in topology order
    files: dict[str, dict[str, str]]  # device -> file name -> rendered text
    credentials: Credentials
    known_hosts: Path | None  # None: host keys are not verified (explicitly requested)
    # left out of a change because the source of truth says they are not in service: name -> why
    excluded: dict[str, str] = field(default_factory=dict)
    # files of --configs DIR used though netgen does not vouch for them (--accept-edited-configs):
    # "device/file" -> why (edited since rendered, or not what the fabric renders now)
    edited_configs: dict[str, str] = field(default_factory=dict)

    def ownership(self, remove_unmanaged: bool = False) -> dict[str, Ownership]:
        """Per NOS: deploy.yaml's `ownership:` over the drivers' defaults."""
        return {nos: resolve(self.deploy.ownership.get(nos), default_ownership(nos), remove_unmanaged)
                for nos in deployable()}


def design_errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.ERROR]


def load_context(fabric: str | Path) -> tuple[LoadedFabric, DesignContext]:
    """The checked fabric; input errors raise NetgenInputError, design errors TargetError (one line
    per finding, with its fix)."""
    loaded, ctx, findings = load_and_check(fabric)
    errors = design_errors(findings)
    if errors:
        lines = "; ".join(f"{f.code} {f.subject}: {f.message} (fix: {f.fix})" for f in errors)
        raise TargetError(f"{len(errors)} design error(s), fix them before deploying: {lines}")
    return loaded, ctx


def management_moves(ctx: DesignContext, deploy: DeployFile, names: list[str]) -> list[str]:
    """Switches the deploy would reach over the management network at an address their rendered
    config takes away (services.management gives them another): the SSH session would drop in the
    middle of the change, and the commit-confirm timer would roll it back out of reach of the report.
    Hosts given as DNS names are left to the SSH client: netgen does not resolve them."""
    network = ctx.fabric.services.management
    if network is None:
        return []
    moves: list[str] = []
    for name in names:
        device = ctx.topology.devices[name]
        host, _ = device_access(deploy, device)
        try:
            reached = ip_address(host)
        except ValueError:
            continue
        if device.mgmt_ipv4 is not None and reached in network.prefix and reached != device.mgmt_ipv4.ip:
            moves.append(f"{name} is reached at {reached}, and the intent gives it {device.mgmt_ipv4.ip}")
    return moves


def fill_secrets(ctx: DesignContext, files: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The rendered files with the placeholders of reversible secrets (a TACACS+ key) filled from
    where the fabric file says they are. Only here, on the way to the switch: rendered files, diffs
    and CI artifacts never hold one. TargetError (exit 2) names the field, never the value."""
    try:
        return fill_files(files, ctx.fabric.shared_secrets())
    except SecretError as exc:
        raise TargetError(str(exc)) from None


def _selected(ctx: DesignContext, limit: str | None) -> list[str]:
    """The devices --limit selects, in topology order; none is an error, with a spelling hint for a
    single term."""
    names = select(list(ctx.topology.devices), ctx.topology.devices, limit)
    if not names:
        terms = terms_of(limit or "")
        hint = did_you_mean(terms[0], ctx.topology.devices) if len(terms) == 1 else ""
        raise TargetError(f"--limit {limit!r} matches no device{hint}")
    return names


def _out_of_service(names: list[str], sot: SotFile, folder: Path) -> dict[str, str]:
    """The selected switches the source of truth says are not in service: name -> why. A change
    leaves them out; a change that would reach none of the selection is refused."""
    excluded: dict[str, str] = {}
    for name in names:
        facts = sot.devices.get(name)
        if facts is not None and facts.status and facts.status not in DEPLOYABLE_STATUSES:
            needed = " or ".join(sorted(DEPLOYABLE_STATUSES))
            excluded[name] = f"{SOT_FILE}: status {facts.status} (a change needs {needed})"
    if all(name in excluded for name in names):
        raise TargetError(f"every selected switch is out of service in {folder / SOT_FILE}:"
                          f" {'; '.join(f'{n}: {why}' for n, why in list(excluded.items())[:3])}")
    return excluded


def _check_drivers(ctx: DesignContext, deploy: DeployFile, names: list[str], folder: Path) -> None:
    """Every selected NOS has a deploy driver, and deploy.yaml's ownership names only those."""
    drivers = deployable()
    unsupported = sorted({ctx.topology.devices[n].nos for n in names} - set(drivers))
    if unsupported:
        raise TargetError(f"no deploy driver for {', '.join(unsupported)}")
    unknown = sorted(deploy.ownership.keys() - set(drivers))
    if unknown:
        raise TargetError(f"{folder / 'deploy.yaml'}: ownership.{unknown[0]}: no deploy driver for"
                          f" {unknown[0]!r}; use one of {', '.join(drivers)}")


def _check_management_moves(ctx: DesignContext, deploy: DeployFile, names: list[str], folder: Path) -> None:
    """Refuse a change that would take away the address the deploy reaches a switch at (management_moves)."""
    moves = management_moves(ctx, deploy, names)
    if moves:
        raise TargetError(f"{folder / 'deploy.yaml'}: {len(moves)} switch(es) would lose the address the"
                          f" deploy reaches them at: {'; '.join(moves[:3])}{' ...' if len(moves) > 3 else ''}. Move"
                          " a management address from the console (or out of band), then point"
                          " management.devices.NAME.host at the new one; or pin the switch's current address in the"
                          " fabric file's services.management.devices")


def _files_to_push(ctx: DesignContext, names: list[str], configs: Path | None,
                   accept_edited_configs: bool) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """The selected devices' files, rendered now or read from `configs`, secrets filled; and the
    edited files accepted (edited_configs). A render failure is netgen's bug, not the input's."""
    try:
        read = render_or_read(ctx, [ctx.topology.devices[n] for n in names], configs,
                              accept_edited=accept_edited_configs)
    except (RenderDirError, RenderInputError) as exc:
        raise TargetError(str(exc)) from None
    except RenderError as exc:
        raise TargetError(f"render error (a netgen bug): {exc}", internal=True) from None
    return fill_secrets(ctx, read.files), read.edited


def _credentials(credentials: Credentials | None, credentials_file: Path | None) -> Credentials:
    """The credentials given directly, else those of the file or the NETGEN_* environment variables."""
    if credentials is not None:
        return credentials
    try:
        return load_credentials(credentials_file)
    except CredentialsError as exc:
        raise TargetError(str(exc)) from None


def _known_hosts_file(deploy: DeployFile, known_hosts: Path | None) -> Path:
    """The host-key file to verify the switches against (--known-hosts over deploy.yaml's); it must exist."""
    hosts_file = (known_hosts or Path(deploy.ssh.known_hosts)).expanduser()
    if not hosts_file.is_file():
        raise TargetError(f"known_hosts file {hosts_file} not found: add the devices' host keys to it, or point"
                          " --known-hosts (Ansible: netgen_known_hosts) at one; --insecure-no-host-key-check"
                          " (Ansible: netgen_verify_host_keys: false) turns verification off")
    return hosts_file


def prepare_target(ctx: DesignContext, fabric_file: Path, *, limit: str | None = None, configs: Path | None = None,
                   credentials: Credentials | None = None, credentials_file: Path | None = None,
                   known_hosts: Path | None = None, verify_host_keys: bool = True,
                   render: bool = True, changes: bool = True, accept_edited_configs: bool = False) -> DeployTarget:
    """Everything but the connection. `credentials` given directly win over `credentials_file`, which
    wins over the NETGEN_* environment variables. `render=False` skips rendering (the caller only
    needs the selection and access, e.g. to hand each device's push to Ansible). `changes=False` for
    what only reads or restores (`netgen check`, `netgen recover`): it may reach a switch anywhere.
    `configs`: read the files from that render directory (platforms/output_dir.py); a file netgen
    does not vouch for is refused unless `accept_edited_configs` (then listed in `edited_configs`)."""
    folder = fabric_file.parent
    deploy = load_deploy(folder)  # NetgenInputError: its problems name the file, the field and the fix
    names = _selected(ctx, limit)
    excluded: dict[str, str] = {}
    sot = load_sot(folder)
    if changes and sot is not None:
        excluded = _out_of_service(names, sot, folder)
        names = [n for n in names if n not in excluded]
    _check_drivers(ctx, deploy, names, folder)
    if changes:
        _check_management_moves(ctx, deploy, names, folder)
    files, edited = _files_to_push(ctx, names, configs, accept_edited_configs) if render else ({}, {})
    credentials = _credentials(credentials, credentials_file)
    hosts_file = _known_hosts_file(deploy, known_hosts) if verify_host_keys else None
    return DeployTarget(ctx, fabric_file, deploy, names, files, credentials, hosts_file, excluded, edited)


__all__ = ["DeployTarget", "TargetError", "design_errors", "fill_secrets", "load_context", "prepare_target"]
