"""Where-is-it details of input errors that the broader bad-input suite does not pin down."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.render


def test_duplicate_key_names_its_dotted_path(write_fabric):
    path = write_fabric(text="name: a\nzones:\n  - id: 1\n    racks: 2\n    racks: 3\n")
    result = run_cli("validate", str(path))
    assert result.exit_code == 2
    assert f"{path}:5:5: zones[0].racks: duplicate key 'racks' (first defined on line 4)" in result.stderr


def test_duplicate_hostile_key_is_escaped(write_fabric):
    path = write_fabric(text='name: a\n"x\\x1b[31m": 1\n"x\\x1b[31m": 2\n')
    result = run_cli("validate", str(path))
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr
    assert "duplicate key 'x\\x1b[31m'" in result.stderr
