"""Stage 7: push rendered configs to the switches and read back what they hold: the deploy target
(fills secret placeholders), inventory, the driver contract (each NOS's driver is a part of its
bundle, netgen/nos/<nos>/driver.py) and the one way to connect to a device and build its driver,
device checks (also run read-only, `netgen check`), the per-device pipeline with commit-confirm and
its journal, rollout batches, a change's plan (the one builder of deploy options), push and
recovery, the Ansible module, runner and collection builder, and the Nornir inventory plugin."""
