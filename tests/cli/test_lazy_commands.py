"""Commands load lazily (netgen/cli/__init__.py COMMANDS): `netgen --help` imports none of the
command modules, and each command imports only its own family."""

from __future__ import annotations

import subprocess
import sys

import pytest

from netgen.cli import COMMANDS, cli
from tests.conftest import run_cli

pytestmark = pytest.mark.render


def _loaded_after(args: list[str]) -> set[str]:
    code = ("import sys\nfrom click.testing import CliRunner\nfrom netgen.cli import cli\n"
            f"result = CliRunner().invoke(cli, {args!r})\nassert result.exit_code == 0, result.output\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('netgen', 'pydantic', 'nornir'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_help_imports_no_command_module_and_no_model():
    assert _loaded_after(["--help"]) == {"netgen", "netgen.cli", "netgen.cli.common", "netgen.safe_text"}


def test_a_command_imports_its_family_only():
    loaded = _loaded_after(["schema"])
    assert "netgen.cli.fabric" in loaded
    assert not {"netgen.cli.deploy", "netgen.cli.lab", "netgen.deploy", "nornir"} & loaded


def test_the_table_names_every_registered_command_and_its_module():
    for module in {module for module, _ in COMMANDS.values()}:
        __import__(module)
    assert set(cli.commands) == set(COMMANDS)
    for name, (module, short) in COMMANDS.items():
        assert cli.commands[name].callback.__module__ == module, name
        assert 20 < len(short) <= 80 and short.endswith("."), name


def test_help_lists_every_command_with_its_line():
    result = run_cli("--help")
    assert result.exit_code == 0
    for name, (_, short) in COMMANDS.items():
        assert f"  {name}" in result.output and short.split()[0] in result.output
