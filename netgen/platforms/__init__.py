"""Stages 4-5: per-device views and renderer plugins, one sub-package per NOS (sonic/, eos/), with
templates in templates/<nos>/; the shared BGP plan, route policy, services and custom blocks; the
render itself (workers, render cache, atomic output directory) and the reader of a render
directory (output_dir.py)."""
