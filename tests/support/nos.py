"""The NOS register from the tests' side: a test that needs another part in a NOS's place (a fake
deploy driver, a renderer that fails) swaps it through the register's own API (deregister, register)
and puts the bundle back afterwards."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Iterator

from netgen.registry import NOS


@contextlib.contextmanager
def bundles_with(names: Iterable[str], **parts: object) -> Iterator[None]:
    """The bundles of `names`, each with `parts` replaced (e.g. driver="tests.x:fake_driver"), for
    the duration of the block."""
    saved = {name: NOS.bundle(name) for name in names}
    try:
        for name, bundle in saved.items():
            NOS.deregister(name)
            NOS.register(dataclasses.replace(bundle, **parts))
        yield
    finally:
        for name, bundle in saved.items():
            if name in NOS.available:
                NOS.deregister(name)
            NOS.register(bundle)
