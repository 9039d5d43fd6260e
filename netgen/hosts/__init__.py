"""The hosts' side of the fabric (`netgen hosts`): NIC QoS and NCCL settings from the same intent."""
