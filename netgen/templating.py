"""Templating: the Jinja2 environment every text template of netgen is rendered with (the NOS
configs, the hosts' files, the lab's FRR stand-in), one per template folder, its compiled templates
kept between runs.

It sits below every stage that renders text and imports none of them: the templates hold syntax
only, so what they need from netgen is a loader, strict undefined values and whitespace rules.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from functools import cache
from pathlib import Path

import jinja2
import jinja2.bccache

from netgen.resources import TEMPLATES, user_cache_dir, user_owned_dir

# templates/ sits beside the package in the source tree (the layout the project asked for); a
# wheel carries a copy inside the package (netgen/resources.py)
TEMPLATE_ROOT = TEMPLATES


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between runs. Jinja compiles netgen's templates into Python code
    once per process, which for EOS's 30 files is a cost worth saving: in each render worker, and in a
    warm re-render. Jinja checks each entry against its template's source (SHA-1) and its own
    version; the folder's name adds what else the code depends on (this module, which sets the
    environment's options, and the Python release). A folder that is not the user's own and private
    is not used (Jinja's own rule for its default folder), and a failed write is only a miss."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)

    @staticmethod
    def open() -> _CompiledTemplates | None:
        folder = user_cache_dir()
        if folder is None:
            return None
        try:
            digest = hashlib.sha256(f"{sys.version}\0{jinja2.__version__}\0".encode() + Path(__file__).read_bytes())
        except OSError:
            return None
        path = user_owned_dir(folder / f"templates-{digest.hexdigest()[:24]}", private=True)
        return None if path is None else _CompiledTemplates(str(path))


@cache
def template_env(folder: str) -> jinja2.Environment:
    """One compiled environment per template folder: a folder of templates/ (a NOS's, `hosts`), or an
    absolute path (a NOS bundle packaged outside netgen names its own, NosBundle.templates).
    StrictUndefined: a missing view field is a bug, not ''."""
    return jinja2.Environment(
        bytecode_cache=_CompiledTemplates.open(),
        loader=jinja2.FileSystemLoader(TEMPLATE_ROOT / folder),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
