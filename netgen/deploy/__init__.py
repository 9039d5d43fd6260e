"""Stage 7: push rendered configs to the switches and read back what they hold: the deploy target
(fills secret placeholders), inventory, per-NOS drivers (EOS config sessions, SONiC checkpoint and
apply-patch), device checks, the per-device pipeline with commit-confirm and its journal, rollout
batches, the Ansible module, runner and collection builder, and the Nornir inventory plugin."""
