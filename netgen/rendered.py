"""What a render produces and how it fails, below every stage that renders, stores or reads files:
a device's prepared inputs (Prepared, what the render cache keys), its files (RenderedFile), and the
two ways a render stops (RenderError: a netgen bug; RenderInputError: the fabric file's). The
renderer contract (platforms/base.py), the output directory (output/) and the render cache use
them; it imports nothing of netgen."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RenderedFile:
    name: str  # file name inside the device's output directory, e.g. "config_db.json"
    content: str
    unchecked: str | None = None  # why part of this file could not be checked here (the render says so)


@dataclass(frozen=True, slots=True)
class Prepared:
    """One device's render inputs. `cacheable`: False when the render also runs a check outside
    netgen whose verdict may change with the machine (FRR's parser for custom FRR lines)."""

    device: str
    inputs: object  # picklable and a plain value: frozen dataclasses, tuples, lists, dicts, pydantic models
    cacheable: bool = True


class RenderError(Exception):
    """A rendered file failed its own syntax or model check: a netgen bug, never written out."""


class RenderInputError(Exception):
    """The fabric file asks for something that cannot be rendered (a custom block the NOS refuses, a
    secret reference that does not resolve): input, exit 2, never a netgen bug."""
