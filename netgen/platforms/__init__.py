"""Stages 4-5: per-device views and renderer plugins, one sub-package per NOS (sonic/, eos/), with
templates in templates/<nos>/; the shared BGP plan, route policy, services and custom blocks; the
render itself (render.py: plugin dispatch and worker pool, over netgen/render_cache.py and
netgen/output/) and the reader of a render directory (output_dir.py)."""
