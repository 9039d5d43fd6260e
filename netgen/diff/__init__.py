"""Stage 6: semantic diffs of rendered configs (config_db.json per table/key/field, CLI unified).
Lands with the pull-request diff issue; nothing here yet."""
