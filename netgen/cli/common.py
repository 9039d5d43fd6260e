"""Shared pieces of the `netgen` command line: the group, consoles, exit codes, loading and errors.

The exit codes are documented in netgen/cli/__init__.py.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import json
import os
import secrets
import stat
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click
from rich.console import Console, ConsoleDimensions
from rich.markup import escape as markup_escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from netgen import __version__
from netgen.safe_text import visible, without_controls

if TYPE_CHECKING:  # the models and checks load with the command that needs them, not with `--help`
    from netgen.checks import Finding
    from netgen.context import DesignContext
    from netgen.intent import LoadedFabric, NetgenInputError

EXIT_OK, EXIT_DESIGN, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3



def escape(text: str) -> str:
    """Untrusted text (a name, a path, a device's or a server's answer) for a console line: its
    markup escaped and every control character shown as an escape, so it can neither style nor
    break the line, nor act on the terminal."""
    return markup_escape(visible(text))


# The width of a console that is not a terminal (a pipe, a file): wide enough that no table is cut
# or wrapped, so `netgen show FABRIC | less -S` and `> file` keep every row whole and greppable.
PIPE_WIDTH = 100_000


class SafeConsole(Console):
    """A console that never passes a control character through: what `escape` missed (text put
    in a message without it, a table cell) is shown escaped. netgen's own line breaks stay.

    Writing to a pipe or a file, tables are as wide as their content (PIPE_WIDTH), never cut to a
    terminal's width or rich's 80 columns; COLUMNS, when set, still sets the width."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # rich fixes COLUMNS as it stands when the console is made (at import); read it at each
        # print instead, as the size of a terminal is.
        if options.get("width") is None:
            self._width = None

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(without_controls(text), **options)

    @property
    def size(self) -> ConsoleDimensions:
        size = Console.size.fget(self)  # type: ignore[attr-defined]
        if self._width is None and not self.is_terminal and not self._environ.get("COLUMNS", "").isdigit():
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return cast(ConsoleDimensions, size)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


# No highlighting and no :emoji: codes: user text is printed as given (and markup-escaped).
out = SafeConsole(highlight=False, soft_wrap=True, emoji=False)
err = SafeConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False)

F = TypeVar("F", bound=Callable[..., Any])


def emit_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=False))


def input_failure(exc: NetgenInputError, as_json: bool) -> int:
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_INPUT, "input_errors": [p.as_dict() for p in exc.problems]})
    else:
        for problem in exc.problems:
            err.print(f"[bold red]error[/]: {escape(problem.render())}")
        err.print(f"[red]{len(exc.problems)} input error(s); nothing was checked[/]")
    return EXIT_INPUT


@contextlib.contextmanager
def checking() -> Iterator[None]:
    """A spinner on stderr while the fabric is expanded and checked (a terminal only)."""
    spinner = err.status("expanding fabric and running design checks", spinner="dots") if err.is_terminal else None
    if spinner:
        spinner.start()
    try:
        yield
    finally:
        if spinner:
            spinner.stop()


def load(path: str) -> tuple[LoadedFabric, DesignContext, list[Finding]]:
    """Load, expand and check the fabric at `path`, with a spinner (netgen.api.check)."""
    from netgen import api  # noqa: PLC0415

    checked = api.check(path, kept_to_exit=True, checking=checking)
    return checked.loaded, checked.ctx, checked.findings


def load_or_exit(path: str, as_json: bool) -> tuple[LoadedFabric, DesignContext, list[Finding]]:
    """`load`; input errors are printed (or the JSON error document) and exit 2."""
    from netgen.intent import NetgenInputError  # noqa: PLC0415

    try:
        return load(path)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))


def print_findings(findings: list[Finding]) -> None:
    # One finding per line (plus its fix): readable at any width and easy to grep in CI logs.
    from netgen.checks import Severity  # noqa: PLC0415

    for f in findings:
        style = "bold red" if f.severity is Severity.ERROR else "bold yellow"
        out.print(f"[{style}]{f.severity.value}[/] {f.code} {escape(f.subject)}: {escape(f.message)}")
        out.print(f"    fix: {escape(f.fix)}")


def counts(findings: list[Finding]) -> tuple[int, int]:
    from netgen.checks import Severity  # noqa: PLC0415

    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    return errors, len(findings) - errors


# Set by a command that leaves nothing for the interpreter's teardown to do (files written and closed,
# worker processes joined, no temporary files pending): main() then skips that teardown (its doc).
# In-process callers (tests, CliRunner) do not go through main() and are not affected.
NOTHING_TO_TEAR_DOWN = False


# --- the conventions every command follows (docs/reference/conventions.md) -------------------------
FABRIC_ENV = "NETGEN_FABRIC"
FABRIC_FILE_NAMES = ("fabric.yaml", "fabric.yml")  # as netgen/intent/loader.py (not imported: --help stays light)
STDIN = "-"
EXIT_CODES_TEXT = "0 ok, 1 design errors (or a failed check or lab), 2 usage or input errors, 3 a netgen bug"


def fabric_from_environment() -> str | None:
    """FABRIC when the command line gives none: $NETGEN_FABRIC, else the current directory when it
    holds a fabric file. Never netgen's own examples."""
    named = os.environ.get(FABRIC_ENV, "")
    if named:
        return named
    if any(Path(name).is_file() for name in FABRIC_FILE_NAMES):
        return "."
    return None


def missing_fabric_message() -> str:
    return (f"no FABRIC: give a fabric.yaml or the directory holding it, set {FABRIC_ENV}, or run netgen in the"
            f" directory that holds {FABRIC_FILE_NAMES[0]} ({Path.cwd()} holds none)")


def nos_registry_error(exc: BaseException) -> str | None:
    """The message of a NOS register error (netgen/registry.py: an unregistered NOS, a stale install, a
    bundle part that cannot be imported): input, exit 2. None for any other exception. The register
    is only looked at when it was imported, so `netgen --help` stays light."""
    registry = sys.modules.get("netgen.registry")
    if registry is None or not isinstance(exc, registry.NosRegistryError):
        return None
    return str(exc)


class NetgenCommand(click.Command):
    """A command that follows the conventions: FABRIC from the argument, $NETGEN_FABRIC or the
    current directory (`fabric_optional`: none at all is fine, e.g. `netgen schema`); FABRIC `-`
    reads the fabric file from standard input unless the command needs the files beside it
    (`fabric_stdin=False`); its --help ends with the conventions it follows."""

    def __init__(self, *args: Any, fabric_stdin: bool = True, fabric_optional: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fabric_stdin = fabric_stdin
        self.fabric_optional = fabric_optional

    def _takes_fabric(self) -> bool:
        return any(isinstance(p, click.Argument) and p.name == "fabric" for p in self.params)

    def _takes_json(self) -> bool:
        return any(p.name == "as_json" for p in self.params)

    def invoke(self, ctx: click.Context) -> Any:
        if self._takes_fabric():
            as_json = bool(ctx.params.get("as_json"))
            fabric = ctx.params.get("fabric")
            if fabric is None:
                fabric = fabric_from_environment()
                if fabric is None and not self.fabric_optional:
                    fail(missing_fabric_message(), as_json)
                ctx.params["fabric"] = fabric
            if fabric == STDIN and not self.fabric_stdin:
                fail(f"FABRIC {STDIN} (standard input) does not suit `{ctx.command_path}`: it reads the files beside"
                     " the fabric file (deploy.yaml, secrets, the git tree); give the fabric's path", as_json)
        try:
            return super().invoke(ctx)
        except Exception as exc:
            message = nos_registry_error(exc)
            if message is None:
                raise
            fail(message, bool(ctx.params.get("as_json")))

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        rows = []
        if self._takes_fabric():
            stdin = ("`-`: the fabric file from standard input (paths in it from the current directory)"
                     if self.fabric_stdin else "not `-`: this command reads the files beside the fabric file")
            fallback = "else none" if self.fabric_optional else "else exit 2"
            rows.append(("FABRIC", f"a fabric.yaml or the directory holding it; {stdin}. Not given: ${FABRIC_ENV},"
                                   f" else the current directory if it holds {FABRIC_FILE_NAMES[0]}, {fallback}."))
        if self._takes_json():
            rows.append(("--json", "one JSON document on stdout, with `ok` and `exit_code` (errors too)."))
        rows.append(("exit codes", EXIT_CODES_TEXT + "."))
        with formatter.section("Conventions (docs: \"Command conventions\")"):
            formatter.write_dl(rows)


class ConventionGroup(click.Group):
    """A command group below `netgen` (lab, sot, whatif): its commands follow the conventions too."""

    command_class = NetgenCommand


class NetgenGroup(click.Group):
    """Turns every failure into an exit code and a one-line message; tracebacks only with --debug.

    Commands load lazily: `lazy` maps a command name to the module that registers it and its one-line
    help, so `netgen --help` and each command import only what they use (the deploy stack alone is
    slow to import)."""

    lazy: dict[str, tuple[str, str]]
    command_class = NetgenCommand
    group_class = ConventionGroup

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            importlib.import_module(self.lazy[cmd_name][0])  # its module registers it on this group
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.lazy[name][1] if name in self.lazy else self.commands[name].get_short_help_str())
                for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # usage errors quote what was typed: shown, never acted on
            vars(exc)["message"] = visible(exc.message)  # click types it Final; it is a plain instance attribute
            raise
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            err.print("[red]interrupted[/]")
            sys.exit(130)
        except Exception as exc:  # a bug: say so plainly, keep the traceback behind --debug
            message = nos_registry_error(exc)
            if message is not None:
                fail(message, False)
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            err.print(f"[bold red]internal error[/]: {escape(type(exc).__name__)}: {escape(str(exc))}")
            err.print("this is a netgen bug; run with --debug for the traceback and report it")
            sys.exit(EXIT_INTERNAL)


@click.group(cls=NetgenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="netgen")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Generate, check and roll out configs for RoCE AI-training backend fabrics.

    Exit codes: 0 ok, 1 design errors or failed lab verification, 2 usage or input errors, 3 internal error.
    Commands take --json; FABRIC defaults to $NETGEN_FABRIC, else the current directory (docs: "Command
    conventions").
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


# FABRIC: optional on the command line; NetgenCommand.invoke fills it in ($NETGEN_FABRIC, the current directory)
fabric_argument = click.argument("fabric", required=False,
                                 type=click.Path(dir_okay=True, file_okay=True, allow_dash=True, path_type=str))
json_option = click.option("--json", "as_json", is_flag=True,
                           help="One JSON document on stdout (with ok and exit_code), nothing else.")
DEVICE_PATTERN_HELP = ("names, globs (z01-rtsw*) or role:ctsw / zone:2 tokens, comma-separated (as --limit);"
                       " an unknown name or a pattern matching nothing is exit 2")


def _stdout_for_dash(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    return None if value is not None and str(value) == STDIN else value


def output_file_option(help_text: str) -> Callable[[F], F]:
    """-o FILE: the one file a command writes (replaced whole, see write_replacing); `-` or no -o:
    standard output."""
    return click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
                        metavar="FILE", callback=_stdout_for_dash,
                        help=f"{help_text} Replaced whole (a new file gets the umask's mode, a replaced one keeps its"
                             " mode and owner). No -o, or `-o -`: standard output.")


def named_devices(ctx: DesignContext, patterns: tuple[str, ...], as_json: bool) -> list[str]:
    """The devices --device names (each value a pattern: names, globs, role:/zone: tokens), in
    fabric order, with `--limit`'s matcher. Exit 2 for an unknown name (with the closest names) or
    a pattern that matches nothing."""
    from netgen.topology.selection import SelectionError, match_devices  # noqa: PLC0415

    try:
        return match_devices(ctx.topology.devices, patterns)
    except SelectionError as exc:
        fail(f"--device: {exc}", as_json)


def read_text_input(path: str, what: str, as_json: bool) -> tuple[str, str]:
    """(text, its name in messages) of a file a command reads, `-` for standard input."""
    if path == STDIN:
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(path).read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"{what} {path}: cannot read it: {reason}", as_json)




class ProgressBars:
    """Progress bars on stderr, one per stage, for interactive use: silent when disabled (--json)
    or when stderr is not a terminal (CI logs, pipes). The one progress display of the CLI:
    render, lab build/convergence, deploy and rollout all report through `update`."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled and err.is_terminal
        self._bar: Progress | None = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> ProgressBars:
        if self.enabled:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=err, transient=True)
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, stage: str, *, total: int | None = None, done: int | None = None, advance: int = 0,
               note: str | None = None) -> None:
        """Set (`done`) or advance the bar of `stage`; `note` replaces its label for now (e.g. the
        device that just finished)."""
        if self._bar is None:
            return
        if stage not in self._tasks:
            self._tasks[stage] = self._bar.add_task(stage, total=total)
        label = f"{stage}: {escape(note)}" if note else stage
        self._bar.update(self._tasks[stage], total=total, completed=done, advance=advance, description=label)


@contextlib.contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """One bar of `total` steps; the returned function advances it by one."""
    with ProgressBars() as bars:
        yield lambda: bars.update(label, total=total, advance=1)


def output_dir_failure(message: str, path: object, as_json: bool) -> NoReturn:
    """An output directory netgen may not replace, or that the OS refused: exit 2, nothing written."""
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_INPUT, "error": message, "path": str(path), "written": False})
    else:
        err.print(f"[bold red]error[/]: {escape(message)}")
    sys.exit(EXIT_INPUT)


def fail(message: str, as_json: bool, code: int = EXIT_INPUT) -> NoReturn:
    """A one-line error (or a JSON error document) and the exit code; never a traceback."""
    if as_json:
        emit_json({"ok": False, "exit_code": code, "error": message})
    else:
        err.print(f"[bold red]error[/]: {escape(message)}")
    sys.exit(code)


def lock_failure(exc: Exception, as_json: bool) -> NoReturn:
    """A change the change lock refused (exit 1, the holder named: netgen.lock.lease.LockHeld), one
    that lost its lock under way (exit 1), or a lock store that cannot be used (exit 2)."""
    from netgen.lock.lease import LockHeld  # noqa: PLC0415

    code = int(getattr(exc, "exit_code", EXIT_INPUT))
    if as_json:
        held = {"scope": exc.scope, "holder": exc.holder.as_dict()} if isinstance(exc, LockHeld) else {}
        emit_json({"ok": False, "exit_code": code, "error": str(exc), "lock": held or None})
    else:
        err.print(f"[bold red]{'refused' if code == EXIT_DESIGN else 'error'}[/]: {escape(str(exc))}")
    sys.exit(code)


def load_checked(fabric: str, as_json: bool, refusal: str) -> tuple[LoadedFabric, DesignContext]:
    """Load and check FABRIC for a command that must not run on a fabric with design errors:
    input errors exit 2, design errors are printed and exit 1 with `refusal` said."""
    loaded, ctx, findings = load_or_exit(fabric, as_json)
    errors, warnings = counts(findings)
    if errors:
        message = f"{errors} design error(s): {refusal}"
        if as_json:
            emit_json({"ok": False, "exit_code": EXIT_DESIGN, "error": message, "errors": errors,
                       "warnings": warnings, "findings": [f.as_dict() for f in findings]})
            sys.exit(EXIT_DESIGN)
        print_findings(findings)
        fail(message, as_json, EXIT_DESIGN)
    return loaded, ctx


def shared_drains(loaded: LoadedFabric, ctx: DesignContext, as_json: bool) -> dict[str, float]:
    """The switches the fabric's shared drain state (deploy.yaml `lock:`, netgen/deploy/lock.py) says
    netgen left drained: name -> since. A record that cannot be trusted is named on stderr and left
    out; a store that cannot be read is exit 2 naming it (never an empty answer that looks true)."""
    from netgen.deploy.lock import shared_drain_state  # noqa: PLC0415
    from netgen.intent import NetgenInputError  # noqa: PLC0415
    from netgen.lock.lease import LockError  # noqa: PLC0415

    try:
        state = shared_drain_state(ctx, None if str(loaded.source) == STDIN else Path(loaded.source))
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except LockError as exc:
        fail(f"the shared drain state: {exc} (--ignore-drains: go on as if no switch were drained)", as_json)
    for name, why in state.skipped.items():
        err.print(f"[yellow]warning[/]: drain record {escape(name)} skipped: {escape(why)}")
    return state.since()


def write_output(path: Path, text: str, as_json: bool) -> None:
    """The one FILE a command writes (write_replacing); one the OS refuses is exit 2, naming the
    file and the reason."""
    try:
        write_replacing(path, text)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", as_json)


def write_replacing(path: Path, text: str) -> None:
    """FILE replaced whole and atomically: written to a temporary file beside it, then renamed over
    it, so a reader sees the old file or the new one, never part of either. Every file netgen writes
    at a path the user names goes through here.

    Mode and owner: a new FILE gets 0666 less the umask, as `>` in a shell would (the kernel applies
    the umask and any default ACL of the directory; a set-group-ID directory's group); a FILE being
    replaced keeps its mode, and its owner and group as far as the OS lets this user set them (root:
    both; others: a group they are in). A scheduler daemon running as its own user (Debian's
    slurmctld as `slurm`) reads what netgen writes as root, and an overwrite never narrows or widens
    who may read it. ACLs and extended attributes of a replaced file are not copied; a replaced file's
    other hard links keep the old content.

    Links: FILE being a symbolic link is refused (OSError ELOOP), so a command run as root never
    writes through a link someone else planted (nor silently turns a link into a file); name the file
    it points to. The rename itself never follows a link: a link put at FILE after the check is
    replaced, not written through. Anything else that is not a regular file (a device such as
    /dev/null, a FIFO, a socket) is refused too (OSError EINVAL) rather than replaced."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        before: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        before = None
    if before is not None and stat.S_ISLNK(before.st_mode):
        raise OSError(errno.ELOOP, "is a symbolic link; netgen does not write through links: name the file it"
                                   " points to", str(path))
    if before is not None and not stat.S_ISREG(before.st_mode):
        raise OSError(errno.EINVAL, "is not a regular file; netgen replaces only regular files", str(path))
    # a private name (O_EXCL: never an existing file or link), short enough beside a 255-byte name
    temp = folder / f".{path.name[:200]}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    # new: 0666 less the umask, by the kernel; replacing: private until the old mode is set below
    handle = os.open(temp, flags, 0o666 if before is None else 0o600)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            if before is not None:
                _keep_owner(stream.fileno(), before)
                os.fchmod(stream.fileno(), stat.S_IMODE(before.st_mode))  # after chown, which clears setuid bits
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())  # the content is on disk before the name points at it
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _keep_owner(descriptor: int, before: os.stat_result) -> None:
    """The replaced file's owner and group on the new one, as far as this user may set them."""
    made = os.fstat(descriptor)
    if (made.st_uid, made.st_gid) == (before.st_uid, before.st_gid):
        return
    for uid, gid in ((before.st_uid, before.st_gid), (-1, before.st_gid)):
        try:
            os.fchown(descriptor, uid, gid)
            return
        except OSError:  # EPERM: not root (owner) or not in that group; EINVAL: an id the file system cannot hold
            continue
