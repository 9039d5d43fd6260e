"""The lab: a slice of the fabric in real FRR routers (network namespaces, no images) or exported
to containerlab; its plan from the rendered files, per-NOS adapters, verification and failure
drills, SSH endpoints for deploy tests (with a SONiC CLI stand-in), and the EOS device emulator
the deploy tests drive."""
