"""`netgen diff`: the rendered-config change between two git revisions, for pull requests."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from netgen.cli.common import EXIT_DESIGN, EXIT_OK, cli, emit_json, fail
from netgen.diff.revisions import RevisionError, as_markdown, as_text, diff_revisions


@cli.command()
@click.argument("fabric", default="inventory/small/fabric.yaml")
@click.option("--base", required=True, help="The git revision to compare from (e.g. origin/main).")
@click.option("--head", help="The revision to compare to (default: the working tree).")
@click.option("--repo", type=click.Path(file_okay=False, exists=True, path_type=Path), default=Path("."),
              show_default=True, help="The git repository (the project checkout).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="markdown is a pull-request comment.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when anything changes (like `git diff --exit-code`).")
def diff(fabric: str, base: str, head: str | None, repo: Path, fmt: str, exit_code: bool) -> None:
    """Render FABRIC (a path inside the repository) at --base and at --head with each revision's own
    netgen, templates and intent, and show per-device diffs: config_db.json as table / key / field
    changes, frr.conf and EOS configs as unified diffs, with risk flags.

    Exit codes: 0 compared (changes or not; 1 with --exit-code when something changes),
    2 a revision cannot be read or rendered.
    """
    try:
        result = diff_revisions(repo.resolve(), fabric, base, head)
    except RevisionError as exc:
        fail(str(exc), fmt == "json")
    code = EXIT_DESIGN if exit_code and result.changed else EXIT_OK
    if fmt == "json":
        emit_json({"ok": True, "exit_code": code, **result.as_dict()})
    else:
        click.echo(as_markdown(result) if fmt == "markdown" else as_text(result), nl=False)
    sys.exit(code)

