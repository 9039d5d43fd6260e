"""Only the build step pyproject.toml cannot express: the wheel carries the repository's top-level
templates/ and roles/ inside the package (netgen/_data/), so an install without the checkout
renders and rolls out (netgen/resources.py finds them). Editable installs read the checkout's."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA = ("templates", "roles")


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        root = Path(__file__).resolve().parent
        for name in DATA:
            target = Path(self.build_lib) / "netgen" / "_data" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(root / name, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithData})
