"""netgen's distribution name on PyPI is its own: `netgen` there is another project (a 2015 IP address
plan generator), so `pip install netgen` would install that. The command and the import package stay
`netgen`; every place that says how to install names the distribution."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.render

DISTRIBUTION = "netgen-fabric"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# Where netgen tells people how to install it: the README, the Ansible content, netgen's messages
# and CI's wheel scripts.
SAYS_HOW_TO_INSTALL = [ROOT / "README.md", *sorted((ROOT / "roles").rglob("*.md")),
                       *sorted((ROOT / "roles").rglob("*.py")), *sorted((ROOT / "netgen").rglob("*.py")),
                       *sorted((ROOT / ".ci").iterdir())]


def test_the_distribution_is_netgens_own_name_and_the_command_and_package_stay_netgen():
    from netgen.deploy.collection import DISTRIBUTION as said_by_netgen  # noqa: PLC0415  (absent before)

    assert PYPROJECT["project"]["name"] == said_by_netgen == DISTRIBUTION
    assert PYPROJECT["project"]["scripts"] == {"netgen": "netgen.cli:main"}
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"] == ["netgen*"]


def test_every_install_instruction_names_the_distribution():
    told: dict[str, list[str]] = {}
    for path in SAYS_HOW_TO_INSTALL:
        if path.is_file():
            for name in re.findall(r"\b(?:pip|pipx) install (?:-[-\w]+ )*([A-Za-z][\w.-]*)", path.read_text()):
                told.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert "netgen" not in told, told["netgen"]
    assert told[DISTRIBUTION]  # at least the README and the collection say it
    assert {"README.md", "roles/collection/README.md"} <= set(told[DISTRIBUTION])


def test_the_wheel_is_looked_for_under_the_distributions_file_name():
    """A wheel's file name is the distribution's with `-` as `_` (netgen_fabric-0.1.0-...whl)."""
    wheel = DISTRIBUTION.replace("-", "_")
    for path in (ROOT / ".ci" / "wheel-smoke", ROOT / "README.md", ROOT / "tests" / "packaging" / "test_wheel.py"):
        globs = re.findall(r"([\w.-]+)-\*\.(?:whl|dist-info)", path.read_text())
        assert globs and set(globs) == {wheel}, (path.name, globs)
