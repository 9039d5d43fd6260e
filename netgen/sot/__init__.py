"""Source of truth: keep Nautobot (and later NetBox) in step with the fabric."""
