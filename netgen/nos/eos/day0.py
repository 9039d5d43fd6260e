"""What a replacement EOS switch boots with (`netgen replace --day0`, netgen/day2/replace.py): its
rendered config with the drain (netgen/nos/eos/drain.py), as the file EOS's zero-touch provisioning
fetches: DHCP option 67 (bootfile-name) names a startup-config, which the switch downloads and
reloads with (Arista's own ZTP sample, arista-northwest/ztp-reimage: etc/dhcp/dhcpd.conf
`option bootfile-name "http://.../startup-config"`, README: "HTTP GET startup-config", "RELOAD").
"""

from __future__ import annotations

from collections.abc import Mapping

from netgen.nos.eos import drain as eos_drain
from netgen.topology.model import Device

ZTP_FILE = "startup-config"


def day0_files(device: Device, files: Mapping[str, str], url: str) -> dict[str, str]:
    config = files[f"{device.name}.cfg"]
    scope = eos_drain.scope_of(config)
    if scope is None:
        raise ValueError(f"{device.name}: the rendered config has no outbound route-map to drain through")
    return {ZTP_FILE: eos_drain.with_drain(config, scope)}


