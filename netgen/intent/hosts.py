"""What the GPU hosts on the fabric run: their RoCE NICs and NCCL. Everything the switches decide
(the lossless DSCP and PFC priority, the CTS class, ECN, QP hashing) is taken from the fabric's own
QoS and hashing intent; this section holds only what the switches cannot tell: the NIC family, the
RDMA device names in rail order, the host MTU, and values a site must pin (checked against the
switches by NG7xx)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from netgen.intent.types import IntentModel, SafeName

NicFamily = Literal["connectx", "thor2"]

# RDMA device names the NIC's Linux driver gives, rail (NIC) index 0 first: mlx5_ib names its devices
# mlx5_<n>, bnxt_re bnxt_re<n> (the kernel drivers' ib_register_device name templates).
HCA_NAME_TEMPLATES: dict[str, str] = {"connectx": "mlx5_{rail}", "thor2": "bnxt_re{rail}"}


class HostNccl(IntentModel):
    """NCCL settings a site may pin. Left out, each follows the fabric: the traffic classes from the
    lossless and CTS classes, the QP count from `hashing.qps_per_connection`."""

    traffic_class: int | None = Field(
        default=None, ge=0, le=255,
        description="NCCL_IB_TC as the hosts already run it (the whole ToS byte: DSCP << 2 | ECN);"
                    " omitted = the lossless class's first DSCP << 2. NG701 checks it is lossless.")
    fifo_traffic_class: int | None = Field(
        default=None, ge=0, le=255,
        description="NCCL_IB_FIFO_TC for NCCL's clear-to-send messages; omitted = the CTS class's first"
                    " DSCP << 2. NG702 checks it lands in the strict CTS queue.")
    qps_per_connection: int | None = Field(
        default=None, ge=1, le=128,
        description="NCCL_IB_QPS_PER_CONNECTION; omitted = hashing.qps_per_connection.")
    split_data_on_qps: bool = Field(
        default=False,
        description="NCCL_IB_SPLIT_DATA_ON_QPS: false = each message on one QP, the QPs taken in turn"
                    " (Meta's QP scaling); true = every message cut over all QPs. [Meta: round robin]")
    gid_index: int | None = Field(
        default=None, ge=0, le=255,
        description="NCCL_IB_GID_INDEX; omitted = NCCL (2.21 and later) picks the RoCEv2 GID itself.")


class Hosts(IntentModel):
    """The GPU hosts' NICs and NCCL, for `netgen hosts`."""

    nic: NicFamily = Field(default="connectx", description="Backend NIC family. [Meta: 400G RoCE NICs]")
    hca_names: list[SafeName] | None = Field(
        default=None, min_length=1, max_length=32,
        description="RDMA device names in rail order (NIC 0 first); omitted = the driver's names"
                    " (connectx: mlx5_0, mlx5_1, ...; thor2: bnxt_re0, ...). Must cover nics_per_host.")
    mtu: int = Field(
        default=9000, ge=1500, le=9216,
        description="Host netdev MTU; at most the fabric MTU and room for a RoCE packet of the"
                    " lossless class's roce_mtu plus headers. [industry: 9000 with RoCE MTU 4096]")
    dcqcn: bool | None = Field(
        default=None,
        description="DCQCN (ECN reaction and notification) on the NICs; omitted = follows qos.ecn.enabled"
                    " (NG703 flags the two sides disagreeing).")
    nccl: HostNccl = Field(default_factory=HostNccl, description="NCCL settings a site pins.")

    def rdma_devices(self, rails: int) -> tuple[str, ...]:
        """The RDMA devices of `rails` NICs, rail 0 first: the listed names, else the driver's (a list
        shorter than the rails is NG705's to report; the missing ones follow the driver's rule)."""
        listed = self.hca_names or []
        template = HCA_NAME_TEMPLATES[self.nic]
        return tuple(listed[i] if i < len(listed) else template.format(rail=i) for i in range(rails))

    @model_validator(mode="after")
    def _unique_hcas(self) -> Hosts:
        if self.hca_names is not None and len(set(self.hca_names)) != len(self.hca_names):
            raise ValueError("hca_names must not repeat a device")
        return self
