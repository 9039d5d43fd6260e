"""Stages 4-5: the renderer plugin contract (each NOS's plugin and per-device view are in its
bundle, netgen/nos/<nos>/, its templates in templates/<nos>/); the shared BGP plan, route policy,
services and custom blocks; the render itself (render.py: plugin dispatch and worker pool, over
netgen/render_cache.py and netgen/output/) and the reader of a render directory (output_dir.py)."""
