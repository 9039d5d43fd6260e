"""Day-2 operations on a running fabric: what a drain takes out of service and whether the rest of
the fabric carries the load (targets.py, capacity.py). The graceful drain of an FRR router itself,
its vtysh lines and its read-back, is netgen/platforms/frr_drain.py: the lab's drill uses it too."""
