"""netgen's public API: what the `netgen` command line does, as functions that return data.

In the manner of pyavd's API: a few functions, each a whole step a caller (a script, a notebook, a CI
job, the command line) takes, with its inputs and outputs typed and documented. They print nothing
and never exit; failures are exceptions that say what is wrong (netgen.intent.NetgenInputError
carries every input problem, each with its file, line and fix). The command line is one caller:
each of its commands parses its options, calls one function here or in the stage that owns the
step, and prints what comes back.

    from netgen import api

    checked = api.check("inventory/small")
    if checked.ok:
        outcome = api.render(checked.loaded, Path("out"))
        print(outcome.result.files, "files")

The stages themselves (netgen.intent, netgen.topology, netgen.checks, netgen.platforms,
netgen.deploy, ...) stay importable; this module is the part whose names and behaviour are kept
stable. Importing it loads the intent's models only: each function imports the stages it runs
(the deploy stack alone is slow to import).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from netgen.intent.errors import InputProblem, NetgenInputError

if TYPE_CHECKING:  # the stages load with the function that runs them (netgen --help stays light)
    from netgen.checks import Finding
    from netgen.context import DesignContext
    from netgen.deploy.change import ChangePlan, ChangeRequest
    from netgen.deploy.readonly_check import DeviceCheckReport
    from netgen.deploy.target import DeployTarget
    from netgen.intent import LoadedFabric
    from netgen.platforms.render import RenderResult
    from netgen.whatif.study import EcmpStudy

class Checking(Protocol):
    """What makes the context the loading, the expansion and the design checks run in (the command
    line shows a spinner in it); `contextlib.nullcontext` by default."""

    def __call__(self) -> AbstractContextManager[object]: ...


class Progress(Protocol):
    """What makes a progress display of `total` steps under `label`: a context that yields the
    function advancing it by one step (the command line's progress bars). By default, none."""

    def __call__(self, total: int, label: str, /) -> AbstractContextManager[Callable[[], None]]: ...


@contextlib.contextmanager
def no_progress(_total: int, _label: str) -> Iterator[Callable[[], None]]:
    """No progress display (the default)."""
    yield lambda: None


def _errors(findings: list[Finding]) -> int:
    from netgen.checks import Severity  # noqa: PLC0415

    return sum(1 for f in findings if f.severity is Severity.ERROR)


@dataclass(frozen=True)
class CheckedFabric:
    """A fabric loaded, expanded and checked: what every later step reads.

    Attributes:
        loaded: The validated fabric and catalog, and where the fabric file is.
        ctx: The design context: the intent, the catalog and the expanded topology.
        findings: Every design check's finding, errors and warnings, in check order.
        input_warnings: Secret references a deploy fills in that cannot be read here (validate only).
    """

    loaded: LoadedFabric
    ctx: DesignContext
    findings: list[Finding]
    input_warnings: list[InputProblem] = field(default_factory=list)

    @property
    def errors(self) -> int:
        """The number of design errors: a fabric with any is not rendered, exported or deployed."""
        return _errors(self.findings)

    @property
    def warnings(self) -> int:
        return len(self.findings) - self.errors

    @property
    def ok(self) -> bool:
        return not self.errors


class UnreadableSecrets(NetgenInputError):
    """Secret references the render reads (local users' hashes) that cannot be read: each problem
    names the reference's line and column. Nothing was rendered."""


@dataclass(frozen=True)
class RenderOutcome:
    """What `render` did.

    Attributes:
        result: The files rendered (and written, with an output directory); None: not rendered,
            because of design errors (`findings`).
        warnings: The number of design warnings.
        findings: The design findings; empty when `unchanged`.
        unchanged: The output directory already held this render of every device (the render
            cache): reported from its manifest without expanding, checking or keying the fabric.
    """

    result: RenderResult | None
    warnings: int
    findings: list[Finding] = field(default_factory=list)
    unchanged: bool = False

    @property
    def errors(self) -> int:
        return _errors(self.findings)


@dataclass(frozen=True)
class RenderKeys:
    """Each device's render key (what `netgen diff` compares between revisions), or why there are none.

    Attributes:
        checked: The fabric as checked; with design errors no device is keyed.
        keys: Device name -> its render key (None where the device's key cannot be known ahead).
        skipped: NOS -> the devices of a NOS netgen has no renderer for.
    """

    checked: CheckedFabric
    keys: dict[str, str | None] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        devices = self.checked.ctx.topology.devices
        return {"devices": {name: {"key": key, "tier": devices[name].role.value, "zone": devices[name].zone}
                            for name, key in self.keys.items()},
                "skipped": self.skipped}


def load(fabric: str | Path) -> LoadedFabric:
    """Read and validate a fabric file and its platform catalog.

    Args:
        fabric: A fabric.yaml, the directory holding one, or `-` for standard input.

    Returns:
        The validated fabric, its catalog and where each field is in the file.

    Raises:
        NetgenInputError: With every problem of the files, each at its line and column.
    """
    from netgen.intent import load_fabric  # noqa: PLC0415

    return load_fabric(fabric)


def check(fabric: str | Path | LoadedFabric, *, kept_to_exit: bool = False,
          checking: Checking = contextlib.nullcontext) -> CheckedFabric:
    """Load (unless given loaded), expand and run every design check.

    Args:
        fabric: A path as for `load`, or a fabric `load` returned.
        kept_to_exit: The caller keeps the fabric until its process ends (a command): its objects
            are then left out of the cyclic garbage collector's scans (netgen.checks.check_loaded).
        checking: A context the loading, the expansion and the checks run in (e.g. a spinner).

    Returns:
        The checked fabric; design errors are findings, not exceptions.

    Raises:
        NetgenInputError: The files cannot be loaded.
    """
    from netgen.checks import check_loaded  # noqa: PLC0415

    with checking():
        loaded = load(fabric) if isinstance(fabric, (str, Path)) else fabric
        ctx, findings = check_loaded(loaded, kept_to_exit=kept_to_exit)
    return CheckedFabric(loaded, ctx, findings)


def validate(fabric: str | Path, *, kept_to_exit: bool = False,
             checking: Checking = contextlib.nullcontext) -> CheckedFabric:
    """`check`, and every secret reference read as its user reads it: a local user's hash as the
    render does, a key a deploy fills in as the deploy does (unreadable here: `input_warnings`,
    since the machine that validates need not be the one that deploys).

    Raises:
        NetgenInputError: The files cannot be loaded, or a hash the render reads cannot be read.
    """
    from netgen.intent.loader import check_secrets  # noqa: PLC0415

    checked = check(fabric, kept_to_exit=kept_to_exit, checking=checking)
    secrets = check_secrets(checked.loaded)
    if secrets.errors:
        raise NetgenInputError(secrets.errors)
    return CheckedFabric(checked.loaded, checked.ctx, checked.findings, secrets.warnings)


def _selected(ctx: DesignContext, devices: Sequence[str]) -> list[str]:
    from netgen.topology.selection import match_devices  # noqa: PLC0415

    return match_devices(ctx.topology.devices, tuple(devices)) if devices else []


def render(fabric: str | Path | LoadedFabric, output: Path | None, *, devices: Sequence[str] = (),
           reuse: bool = True, verify: bool = False, kept_to_exit: bool = False,
           checking: Checking = contextlib.nullcontext, progress: Progress = no_progress) -> RenderOutcome:
    """Render every device's configuration (or `devices`'), check each against what its NOS accepts,
    and write them into `output`, replaced whole and atomically.

    With the render cache: a render of every device into a directory that holds this render
    (same fabric, catalog, secrets, netgen and templates) is that render already and is reported
    from the directory's manifest; otherwise each device whose render key is unchanged keeps its
    files (`reuse`). Nothing is written on any error.

    Args:
        fabric: A path as for `load`, or a fabric `load` returned.
        output: The output directory (DIR/<device>/<file>); None: render and check, write nothing.
        devices: Names, globs or role:/zone: tokens (as `netgen render --device`); empty: every device.
        reuse: Keep the files of devices whose render key is the one `output` was written with.
        verify: Read and hash every file `output`'s manifest lists before replacing it or keeping
            any of it. Otherwise a file whose inode, size and mtime are those the (authenticated)
            manifest recorded when netgen wrote it, not within 2 s of the manifest's seal, is taken
            as unchanged without being read, as git and rsync do: an edit in place that keeps the
            size and puts the mtime back goes unseen. A deploy never relies on that: it reads and
            checks every file it pushes.
        kept_to_exit: As for `check`.
        checking: As for `check`.
        progress: A progress display, advanced once per device rendered.

    Returns:
        What was rendered, or the design findings that stopped it.

    Raises:
        NetgenInputError: The files cannot be loaded (UnreadableSecrets: a hash the render reads).
        netgen.topology.selection.SelectionError: A name or pattern of `devices` matches no device.
        netgen.output.inspection.OutputDirError: `output` may not be replaced, or the OS refused.
        netgen.rendered.RenderInputError: A custom block or secret reference of the fabric.
        netgen.rendered.RenderError: A netgen bug.
    """
    from netgen.output.lookahead import InspectionAhead  # noqa: PLC0415
    from netgen.platforms.render import render_fabric  # noqa: PLC0415

    loaded = load(fabric) if isinstance(fabric, (str, Path)) else fabric
    key, cached = _render_cache(loaded, output, devices, reuse, verify)
    if cached is not None:
        return cached
    # DIR's first look, taken during the checks
    ahead = None if output is None else InspectionAhead.start(output, verify=verify)
    try:
        checked = check(loaded, kept_to_exit=kept_to_exit, checking=checking)
        if checked.errors:
            return RenderOutcome(None, checked.warnings, checked.findings)
        chosen = _selected(checked.ctx, devices)
        _read_hashes(loaded)
        with progress(len(chosen or checked.ctx.topology.devices), "rendering") as advance:
            result = render_fabric(checked.ctx, output, chosen or None, progress=lambda _device: advance(),
                                   reuse=reuse, whole=None if key is None else (key, checked.warnings), ahead=ahead,
                                   verify=verify)
        return RenderOutcome(result, checked.warnings, checked.findings)
    finally:
        if ahead is not None:
            ahead.close()


def _render_cache(loaded: LoadedFabric, output: Path | None, devices: Sequence[str],
                  reuse: bool, verify: bool) -> tuple[str | None, RenderOutcome | None]:
    """The fabric's key for a render of every device into `output` (None: a render of some devices,
    or nothing written), and that render when `output` holds it already and may be `reuse`d."""
    from netgen.platforms.render import unchanged_render  # noqa: PLC0415

    if output is None or devices:
        return None, None
    key = _whole_render_key(loaded)
    same = unchanged_render(output, key, verify=verify) if reuse and key is not None else None
    return key, None if same is None else RenderOutcome(same[0], same[1], unchanged=True)


def _whole_render_key(loaded: LoadedFabric) -> str | None:
    """fabric_key, or None where a local user's hash cannot be read: the render then reports that
    where it always has, after the design checks (design errors come first)."""
    from netgen.platforms.render import fabric_key  # noqa: PLC0415
    from netgen.rendered import RenderInputError  # noqa: PLC0415

    try:
        return fabric_key(loaded.fabric, loaded.catalog)
    except RenderInputError:
        return None


def _read_hashes(loaded: LoadedFabric) -> None:
    """The secret references the render reads, each at its line and column when unreadable."""
    from netgen.intent.loader import check_secrets  # noqa: PLC0415

    unread = check_secrets(loaded, deploy=False).errors
    if unread:
        raise UnreadableSecrets(unread)


def render_keys(fabric: str | Path | LoadedFabric, *, devices: Sequence[str] = (), kept_to_exit: bool = False,
                checking: Checking = contextlib.nullcontext, progress: Progress = no_progress) -> RenderKeys:
    """Each device's render key, with its tier and zone; nothing is written. `netgen diff` renders
    only the devices whose keys differ between two revisions.

    Args:
        fabric, devices, kept_to_exit, checking: As for `render`.
        progress: A progress display, advanced once per device keyed.

    Returns:
        The keys, or (design errors) the checked fabric alone.

    Raises:
        As `render`, but for the secrets and the output directory.
    """
    from netgen.platforms.render import render_keys as keys_of  # noqa: PLC0415

    checked = check(fabric, kept_to_exit=kept_to_exit, checking=checking)
    if checked.errors:
        return RenderKeys(checked)
    devices_ = checked.ctx.topology.devices
    names = _selected(checked.ctx, devices) or list(devices_)
    with progress(len(names), "keying") as advance:
        keys, skipped = keys_of(checked.ctx, [devices_[n] for n in names], progress=lambda _device: advance())
    return RenderKeys(checked, dict(keys), {nos: sorted(found) for nos, found in skipped.items()})


def deploy_target(checked: CheckedFabric, **options: Any) -> DeployTarget:
    """The devices a change or a check reaches, with their files and access: deploy.yaml beside the
    fabric file, the devices `limit` selects, their files rendered now or read from `configs`, the
    credentials and the SSH host keys (keyword options: netgen.deploy.target.prepare_target's).

    Raises:
        NetgenInputError: deploy.yaml, the credentials or a secret reference.
        netgen.deploy.target.TargetError: The selection or the access cannot work (the message says why).
    """
    from netgen.deploy.target import prepare_target  # noqa: PLC0415

    return prepare_target(checked.ctx, checked.loaded.source, **options)


def plan_deploy(target: DeployTarget, request: ChangeRequest) -> ChangePlan:
    """Plan a change: the rollout policy (deploy.yaml's with `request.policy` over it), its
    failure-domain batches (canaries first), and the push options (change id, commit-confirm window
    checked against the post-checks, journal, what the change may remove). The one builder of
    deploy options: `netgen deploy`, `netgen rollout` and the netgen_deploy Ansible module use it.

    Args:
        target: What `deploy_target` returned.
        request: netgen.deploy.change.ChangeRequest: the change id, dry run, timeouts, overrides.

    Returns:
        netgen.deploy.change.ChangePlan: the policy, the batches and the options.

    Raises:
        netgen.deploy.change.ChangeRefused: An option out of bounds, named as the caller spells it.
    """
    from netgen.deploy.change import plan_change  # noqa: PLC0415

    return plan_change(target, request)


def check_devices(target: DeployTarget, workers: int | None = None) -> DeviceCheckReport:
    """Run the device checks read-only on every device of `target` (model, every BGP session, PFC,
    watchdog, remaining diff, LLDP cabling), `workers` at once (default: deploy.yaml's).

    Returns:
        netgen.deploy.readonly_check.DeviceCheckReport: every check's result; a device that
            could not be reached has one `connect` result saying why.
    """
    from netgen.deploy.readonly_check import check_devices as run  # noqa: PLC0415

    return run(target, workers)


def ecmp_study(ctx: DesignContext, *, failed: str | None = None, qps: Sequence[int] | None = None,
               trials: int | None = None, seed: int | None = None, progress: Progress = no_progress) -> EcmpStudy:
    """The ECMP what-if: per tier, how evenly ECMP spreads the fabric's flows by QPs per connection
    (the exact P(a link carries 1.5x the mean), a seeded Monte Carlo's E[max/mean] and p99), and the
    smallest QP count that keeps P(1.5x) under 5%; with `failed`, also with that switch down. The
    same study `netgen whatif ecmp`, the report and NG706 give.

    Args:
        ctx: The design context (`check(...).ctx`).
        failed: A switch to study failed, by name.
        qps: The QP counts to compare (default: netgen.whatif.study.COMPARED_QPS).
        trials: Monte Carlo draws (default: netgen.whatif.ecmp.TRIALS).
        seed: The random seed: equal seeds, equal figures (default: netgen.whatif.ecmp.SEED).
        progress: A progress display, advanced once per count studied and per recommendation.

    Returns:
        netgen.whatif.study.EcmpStudy: every stage's figures, the recommendation, the hosts' count.

    Raises:
        ValueError: `failed` is not a switch of the fabric.
    """
    from netgen.hosts.plan import qps_per_connection  # noqa: PLC0415
    from netgen.whatif.ecmp import SEED, TRIALS  # noqa: PLC0415
    from netgen.whatif.study import COMPARED_QPS  # noqa: PLC0415
    from netgen.whatif.study import ecmp_study as study  # noqa: PLC0415

    device = None
    if failed is not None:
        device = ctx.topology.devices.get(failed)
        if device is None:
            raise ValueError(f"{failed[:80]} is not a switch of this fabric")
    return study(ctx.fabric, qps_per_connection(ctx.fabric), device, COMPARED_QPS if qps is None else tuple(qps),
                 trials=TRIALS if trials is None else trials, seed=SEED if seed is None else seed, progress=progress)


__all__ = [
    "CheckedFabric",
    "Checking",
    "Progress",
    "RenderKeys",
    "RenderOutcome",
    "UnreadableSecrets",
    "check",
    "check_devices",
    "deploy_target",
    "ecmp_study",
    "load",
    "plan_deploy",
    "render",
    "render_keys",
    "validate",
]
