"""Stage 4-5: per-device views and renderer plugins, one sub-package per NOS (sonic/, eos/), with
templates in templates/<nos>/. Lands with the rendering issues; nothing here yet."""
