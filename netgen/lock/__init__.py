"""The change lock: one lease per zone a change touches, in a store every operator shares (a
directory or etcd), and the fabric's drain state beside it (docs: how-to/change-lock)."""
