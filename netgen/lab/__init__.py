"""The lab: a slice of the fabric in real FRR routers (network namespaces, no images) or exported
to containerlab; its plan from the rendered files (each NOS's lab adapter, a part of its bundle),
verification and failure drills (with traffic that counts its loss: traffic.py, udp_flows.py), and
SSH management for its routers (`netgen lab up --ssh`), with the NOS's CLI stand-in where its
bundle has one (SONiC's) so `netgen deploy` can drive them."""
