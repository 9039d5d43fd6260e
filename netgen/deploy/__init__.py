"""Stage 7: Nornir + netmiko deploy (inventory, drivers, pre/post checks, rollout policy).
Lands with the deploy issue; nothing here yet."""
