"""The `netgen` command line.

Exit codes (stable, for scripts):
  0  success (warnings allowed)
  1  design errors, or a lab that failed verification
  2  usage or input errors: bad arguments, unreadable or invalid fabric/catalog files, a lab that
     cannot be built as asked (missing prerequisite, unknown lab, FRR rejected a config)
  3  internal error: a netgen bug (run with --debug for the traceback and report it)

One module per command family; each registers its commands on the shared group.
"""

from __future__ import annotations

from netgen.cli import deploy, diff, fabric, lab  # noqa: F401  (registration side effect)
from netgen.cli.common import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli(prog_name="netgen")
