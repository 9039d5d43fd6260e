"""Day-2 operations on a running fabric: what a drain takes out of service and whether the rest of
the fabric carries the load (targets.py, capacity.py)."""
