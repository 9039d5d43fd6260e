"""Stage 6: semantic diffs of rendered configs (config_db.json per table/key/field and RFC 6902
patches, CLI configs unified), and `netgen diff` between git revisions: each revision rendered
by its own netgen, devices grouped by identical change, risk flags."""
