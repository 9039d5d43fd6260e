"""`netgen diff`: the rendered-config change between two git revisions, for pull requests."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_OK,
    NetgenCommand,
    cli,
    emit_json,
    err,
    fabric_argument,
    fail,
    json_option,
    write_output,
)
from netgen.diff.format import as_markdown, as_text
from netgen.diff.git_export import RevisionError
from netgen.diff.revisions import diff_revisions


class DiffCommand(NetgenCommand):
    """`--format json`, the spelling before --json, kept as a deprecated alias: said on stderr,
    then the same as --json (errors included, FABRIC's among them)."""

    def invoke(self, ctx: click.Context) -> Any:
        if ctx.params.get("fmt") == "json":
            err.print("[yellow]deprecated[/]: `--format json` is `--json` now (the same document); it stays for"
                      " scripts that use it")
            ctx.params.update(fmt="text", as_json=True)
        return super().invoke(ctx)


@cli.command(cls=DiffCommand, fabric_stdin=False)
@fabric_argument
@click.option("--base", required=True, help="The git revision to compare from (e.g. origin/main).")
@click.option("--head", help="The revision to compare to (default: the working tree).")
@click.option("--repo", type=click.Path(file_okay=False, exists=True, path_type=Path), default=Path("."),
              show_default=True, help="The git repository (the project checkout).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="text, or markdown (a pull-request comment). `json` is a deprecated spelling"
                                      " of --json.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when anything changes (like `git diff --exit-code`).")
@click.option("--json-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the whole result, the --json document, to this file (replaced atomically): a"
                   " pull request's markdown comment is folded, the file has every pattern and device.")
@click.option("--base-cache", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Keep the base revision's render in DIR (yours, mode 0700; the last 3 bases): a later diff against"
                   " the same base re-renders none of it when the change reaches every switch.")
@json_option
def diff(fabric: str, base: str, head: str | None, repo: Path, fmt: str, exit_code: bool, json_file: Path | None,
         base_cache: Path | None, as_json: bool) -> None:
    """Render FABRIC at --base and at --head with each revision's own netgen, templates and intent,
    and show what changed: the intent's own changes (YAML path, old -> new, file and line), risk
    flags with their reach by tier, the effect as patterns (the same edit on many ports once, with
    counts), then each distinct change once with the devices it reaches. --json has every pattern
    and device.

    FABRIC given on the command line is a path inside --repo; from $NETGEN_FABRIC or the current
    directory, the path as seen from here, which must lie inside --repo.

    Exit codes: 0 compared (changes or not; 1 with --exit-code when something changes),
    2 a revision cannot be read or rendered.
    """
    if as_json and fmt != "text":
        fail(f"--json and --format {fmt} exclude each other: --json is the whole result as JSON", as_json)
    root = repo.resolve()
    if click.get_current_context().get_parameter_source("fabric") is not click.core.ParameterSource.COMMANDLINE:
        fabric = _inside(fabric, root, as_json)
    try:
        result = diff_revisions(root, fabric, base, head, base_cache)
    except RevisionError as exc:
        fail(str(exc), as_json)
    code = EXIT_DESIGN if exit_code and result.changed else EXIT_OK
    document = {"ok": True, "exit_code": code, **result.as_dict()}
    if json_file is not None:
        write_output(json_file, json.dumps(document, indent=2) + "\n", as_json)
    if as_json:
        emit_json(document)
    else:
        click.echo(as_markdown(result) if fmt == "markdown" else as_text(result), nl=False)
    sys.exit(code)


def _inside(fabric: str, root: Path, as_json: bool) -> str:
    """FABRIC found by the conventions ($NETGEN_FABRIC, the current directory) as a path inside the
    repository, which is how each revision's tree names it."""
    where = Path(os.path.realpath(fabric))
    if not where.is_relative_to(root):
        fail(f"FABRIC {fabric} ({where}) is not inside the repository {root}: give it as a path inside --repo", as_json)
    return str(where.relative_to(root))
