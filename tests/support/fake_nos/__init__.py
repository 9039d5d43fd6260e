"""A NOS netgen does not ship, to prove what adding one takes: this folder (the bundle, its
renderer, its templates) and one entry point, without a line of netgen changed. tests/test_registry.py
registers it through an entry point of its own (a dist-info folder on PYTHONPATH, as an installed
package would have) and renders a fabric whose zone 2 runs it. One text file per switch."""

from __future__ import annotations

from pathlib import Path

from netgen.registry import NosBundle

NAME = "fakenos"
BUNDLE = NosBundle(
    name=NAME,
    templates=str(Path(__file__).resolve().parent / "templates"),  # its own folder: it lives outside netgen
    renderer="tests.support.fake_nos.renderer:RENDERER",
)
