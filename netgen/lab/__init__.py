"""Lab backends (FRR in network namespaces, containerlab export) and device emulators for tests.
Lands with the lab issue; nothing here yet."""
