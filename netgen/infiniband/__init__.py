"""The InfiniBand alternative's files: what an InfiniBand operator deploys (OpenSM's configuration,
partitions, GUID files, a node-name map), the hosts' NCCL settings for InfiniBand, a cabling plan, and
the fabric as an ibsim net file for the lab; and the side-by-side comparison with the RoCE fabric."""
