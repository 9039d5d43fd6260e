"""The lab: a slice of the fabric in real FRR routers (network namespaces, no images) or exported
to containerlab; its plan from the rendered files, per-NOS adapters, verification and failure
drills, and SSH management for its routers (`netgen lab up --ssh`), with a SONiC CLI stand-in so
`netgen deploy` can drive its SONiC nodes."""
