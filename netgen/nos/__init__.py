"""The NOSes netgen ships, one folder each (sonic/, eos/): a bundle of a NOS's renderer plugin and
per-device view, its model check, deploy driver, default ownership and lab parts, registered by an
entry point of the group `netgen.nos` (pyproject.toml; netgen/registry.py reads them). Their
templates are in templates/<nos>/. No bundle imports another."""
