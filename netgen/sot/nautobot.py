"""Nautobot as netgen's source of truth, over its REST API (API version 3.2, Nautobot 3.2; checked
against a real Nautobot in tests/sot). Through netgen's HTTP client (netgen/httpclient.py: the token
only ever sent to the configured server, redirects refused, timeouts, a deadline and a size limit
per request): one request per page or per batch of up to `BATCH` objects (Nautobot's list
endpoints take a list and are all-or-nothing per request). Every answer netgen reads is checked
against the shape Nautobot gives it (the `_Page` and record models below) before it is used.

How netgen's objects land (the `Wanted` kinds, netgen/sot/objects.py):
* location (location type "netgen fabric"), manufacturers, device types (model = catalog model),
  roles (for dcim.device), platforms (the NOS), namespace (the fabric's name);
* devices with status Active, their interfaces (type from the speed, MTU, description "peer:port"),
  cables (status Connected, type smf / dac-passive, length in m), container prefixes for the pools,
  network prefixes for the rack subnets, IP addresses in the fabric's namespace assigned to their
  interfaces (ip-address-to-interface);
* ASNs as the BGP models app's autonomous systems where it is installed, and always as the
  device's `netgen_asn` custom field;
* netgen's mark: the custom field `netgen_fabric` = the fabric's name, on everything netgen makes.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Annotated, Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from netgen.httpclient import HttpClient, HttpLimits, ServerError, printable
from netgen.sot.base import DeviceFacts, Held, SotError
from netgen.sot.objects import Wanted

BATCH = 50
PARALLEL = 4  # requests at once; a Nautobot server runs several workers
API_VERSION = "3.2"
# One list read page by page: a `next` link seen before is a loop; these bound a server that makes
# up new ones forever (Nautobot serves up to 1,000 records a page; far more than any fabric holds)
MAX_PAGES = 20_000
MAX_RECORDS = 2_000_000
LOCATION_TYPE = "netgen fabric"
MARK = "netgen_fabric"
ASN_FIELD = "netgen_asn"
BGP_ASN = "/api/plugins/bgp/autonomous-systems/"
MARKED = ["dcim.device", "dcim.interface", "dcim.cable", "ipam.prefix", "ipam.ipaddress"]
ENDPOINTS = {
    "location": "/api/dcim/locations/", "manufacturer": "/api/dcim/manufacturers/",
    "device_type": "/api/dcim/device-types/", "role": "/api/extras/roles/", "platform": "/api/dcim/platforms/",
    "namespace": "/api/ipam/namespaces/", "device": "/api/dcim/devices/", "interface": "/api/dcim/interfaces/",
    "cable": "/api/dcim/cables/", "prefix": "/api/ipam/prefixes/", "ip_address": "/api/ipam/ip-addresses/",
    "asn": BGP_ASN,
}


# --- what netgen reads from Nautobot's answers, checked before any of it is used -----------------
# Only the fields netgen reads are declared (the rest of a record is ignored), each with the type
# Nautobot gives it; text netgen keeps is bounded, so a list cannot fill memory through one field.
Id = Annotated[str, Field(min_length=1, max_length=100)]
Text = Annotated[str, Field(max_length=1000)]


class _Answer(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class _Ref(_Answer):
    """A related object: {id, object_type, url} by default, the object itself at depth 1."""

    id: Id | None = None
    name: Text | None = None
    model: Text | None = None
    address: Text | None = None


class _Choice(_Answer):
    value: Text


Choice = _Choice | Text | None  # a choice field: {value, label}; a plain value accepted too


class _Fields(_Answer):
    """The custom fields netgen writes (the rest are someone else's)."""

    netgen_fabric: Text | None = None
    netgen_asn: int | None = None


class _Record(_Answer):
    id: Id


class _Marked(_Record):
    custom_fields: _Fields | None = None

    def marked(self, fabric: str) -> bool:
        return self.custom_fields is not None and self.custom_fields.netgen_fabric == fabric


class _CustomField(_Record):
    key: Text


class _Location(_Record):
    name: Text
    description: Text = ""


class _Named(_Record):
    name: Text


class _DeviceType(_Record):
    model: Text


class _Device(_Marked):
    name: Text | None = None  # Nautobot allows unnamed devices; netgen's all have names
    device_type: _Ref | None = None
    role: _Ref | None = None
    platform: _Ref | None = None
    location: _Ref | None = None
    primary_ip4: _Ref | None = None
    serial: Text | None = None
    status: _Ref | None = None


class _Interface(_Marked):
    name: Text
    device: _Ref | None = None  # None: a module's interface
    type: Choice = None
    mtu: int | None = None
    description: Text = ""


class _Cable(_Marked):
    termination_a_id: Id | None = None
    termination_b_id: Id | None = None
    type: Choice = None
    length: int | float | None = None


class _Prefix(_Marked):
    prefix: Text
    type: Choice = None
    description: Text = ""


class _IpOnInterface(_Record):
    ip_address: _Ref | None = None
    interface: _Ref | None = None  # None: on a virtual machine's interface


class _IpAddress(_Marked):
    address: Text
    description: Text = ""


class _Asn(_Marked):
    asn: int
    description: Text = ""


R = TypeVar("R", bound=_Record)


class _Page(_Answer, Generic[R]):
    """One page of a list endpoint (Django REST framework's envelope)."""

    count: int | None = Field(default=None, ge=0)  # not used: a page's own results are what counts
    next: Text | None = None
    previous: Text | None = None
    results: list[R]


def _name(ref: _Ref | None, attr: str = "name") -> str:
    value = getattr(ref, attr, None) if ref is not None else None
    return str(value) if value is not None else ""


def _value(choice: Choice) -> object:
    return choice.value if isinstance(choice, _Choice) else choice


def _problem(exc: ValidationError) -> str:
    """The first thing wrong with an answer, where it is and what, in a few words; never the
    offending value itself (it is the server's, and may be anything)."""
    first = exc.errors(include_url=False)[0]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
    if first["type"] in ("model_type", "model_attributes_type", "dict_type"):
        what = f"an object expected, not {_json_kind(first.get('input'))}"
    elif first["type"] == "missing":
        what = "missing"
    else:
        what = first["msg"]
    more = exc.error_count() - 1
    return f"{where or 'the answer'}: {what}" + (f" (and {more} more problem(s))" if more else "")


def _json_kind(value: object) -> str:
    kinds = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true/false", dict: "an object"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


class Nautobot:
    name = "nautobot"

    def __init__(self, url: str, token: str, limits: HttpLimits | None = None) -> None:
        try:
            parsed = urllib.parse.urlsplit(url)
        except ValueError:  # e.g. an unclosed [IPv6 address
            parsed = urllib.parse.urlsplit("")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise SotError(f"--nautobot {printable(url, 200)!r}: give the base URL, e.g. https://nautobot.example.net")
        if not token or not all(33 <= ord(char) < 127 for char in token):  # it goes into a header as it is
            raise SotError("NAUTOBOT_TOKEN: a token is printable ASCII without spaces (Nautobot's: 40 hex digits)")
        try:
            self._http = HttpClient(url, server="Nautobot", option="--nautobot",
                                    headers={"Accept": f"application/json; version={API_VERSION}"},
                                    secret_headers={"Authorization": f"Token {token}"}, secrets=[token],
                                    limits=limits)
        except ServerError as exc:
            raise SotError(str(exc), exc.status) from None
        self.url = self._http.base_text
        self._bgp: bool | None = None
        self._ids: dict[str, dict[tuple[str, ...], str]] = {}  # kind -> key -> id, from the last read

    def __enter__(self) -> Nautobot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- HTTP ---------------------------------------------------------------------------------
    def request(self, method: str, target: str | httpx.URL, body: object = None) -> tuple[Any, httpx.URL]:
        """The answer's JSON document (None for an empty one) and the URL it came from; every
        failure, the server's refusals included, as a SotError naming the request and why."""
        try:
            return self._http.request_json(method, target, body)
        except ServerError as exc:
            if exc.status in (401, 403):
                path = self._http.shown(target) if isinstance(target, httpx.URL) else printable(target, 200)
                raise SotError(f"Nautobot refused the token ({exc.status}) at {self.url} ({method} {path}):"
                               " set NAUTOBOT_TOKEN to a token with write permission", exc.status) from None
            raise SotError(str(exc), exc.status) from None

    def pages(self, path: str, record: type[R], **query: str | list[str]) -> Iterator[R]:
        """Every record of a list endpoint, page after page, each checked against RECORD. A `next`
        link off the configured server, or back to a page already read, ends it with a SotError."""
        params = urllib.parse.urlencode({"limit": "1000", **query}, doseq=True)
        page: httpx.URL | None = self._url(f"{path}?{params}")
        seen: set[httpx.URL] = set()
        read = 0
        while page is not None:
            if page in seen:
                raise self._wrong("GET", page, "its `next` link leads back to a page already read (a loop)")
            if len(seen) >= MAX_PAGES:
                raise self._wrong("GET", page, f"the list goes on past {MAX_PAGES} pages")
            seen.add(page)
            data, answered = self.request("GET", page)
            seen.add(answered)
            try:
                checked = _Page[record].model_validate(data)  # type: ignore[valid-type]
            except ValidationError as exc:
                raise self._wrong("GET", page, f"the answer is not a page of a Nautobot list: {_problem(exc)}") \
                    from None
            read += len(checked.results)
            if read > MAX_RECORDS:
                raise self._wrong("GET", page, f"the list goes on past {MAX_RECORDS} records")
            yield from checked.results
            page = None if checked.next is None else self._following(page, answered, checked.next)

    def _following(self, page: httpx.URL, answered: httpx.URL, link: str) -> httpx.URL:
        try:
            following = self._http.url_of(link, relative_to=answered)
        except ServerError as exc:
            raise SotError(str(exc)) from None
        if not self._http.same_origin(following):
            raise self._wrong("GET", page, f"its `next` link points to {self._http.shown(following)}, off"
                                           f" {self.url}: netgen reads pages only from the server given to"
                                           " --nautobot (behind a proxy, Nautobot must be told its public URL)")
        return following

    def _url(self, target: str) -> httpx.URL:
        try:
            return self._http.url_of(target)
        except ServerError as exc:
            raise SotError(str(exc)) from None

    def _wrong(self, method: str, url: httpx.URL, reason: str) -> SotError:
        return SotError(str(self._http.failure(method, url, reason)))

    def _batches(self, method: str, path: str, bodies: list[dict[str, Any]]) -> None:
        """Batches of one kind side by side (they do not refer to each other): Nautobot spends its
        time per object, and its workers take one request each. The first failure ends the kind:
        batches not started yet are dropped, those under way are waited for, and it is raised."""
        chunks = [bodies[start:start + BATCH] for start in range(0, len(bodies), BATCH)]
        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            futures: list[Future[tuple[Any, httpx.URL]]] = [
                pool.submit(self.request, method, path, chunk) for chunk in chunks]
            try:
                for done in as_completed(futures):
                    done.result()
            finally:
                for future in futures:
                    future.cancel()

    def _id(self, kind: str, key: tuple[str, ...], needed_by: str) -> str:
        """The id of an object netgen read or wrote earlier in this push; a Nautobot that does not
        list it (it answered a write as done, then left the object out of the list) is an error."""
        found = self._ids.get(kind, {}).get(key)
        if found is None:
            raise SotError(f"Nautobot at {self.url} does not list the {kind} {printable(':'.join(key), 200)}"
                           f" netgen wrote or found earlier in this push: cannot write {needed_by}")
        return found

    # --- the contract -------------------------------------------------------------------------
    def bgp(self) -> bool:
        if self._bgp is None:
            try:
                for _ in self.pages(BGP_ASN, _Record, limit="1"):
                    break
                self._bgp = True
            except SotError as exc:
                if exc.status != 404:  # only "no such endpoint" means the app is not installed
                    raise
                self._bgp = False
        return self._bgp

    def supports(self, kind: str) -> str | None:
        if kind == "asn" and not self.bgp():
            return "the BGP models app (nautobot-bgp-models) is not installed: ASNs are the devices' netgen_asn field"
        return None

    def prepare(self, fabric: str, dry_run: bool) -> list[str]:
        """The custom fields (netgen's mark, the device ASN) and the location type."""
        done = []
        fields = {f.key for f in self.pages("/api/extras/custom-fields/", _CustomField)}
        marked = [*MARKED, *(["nautobot_bgp_models.autonomoussystem"] if self.bgp() else [])]
        for key, label, kind, types in ((MARK, "netgen fabric", "text", marked),
                                        (ASN_FIELD, "netgen ASN", "integer", ["dcim.device"])):
            if key not in fields:
                done.append(f"custom field {key}")
                if not dry_run:
                    self.request("POST", "/api/extras/custom-fields/",
                                 {"key": key, "label": label, "type": kind, "content_types": types,
                                  "description": "written by netgen sot push"})
        if not list(self.pages("/api/dcim/location-types/", _Record, name=LOCATION_TYPE)):
            done.append(f"location type {LOCATION_TYPE}")
            if not dry_run:
                self.request("POST", "/api/dcim/location-types/",
                             {"name": LOCATION_TYPE, "content_types": ["dcim.device", "ipam.prefix"]})
        return done

    def held(self, fabric: str, kind: str) -> dict[tuple[str, ...], Held]:
        reader = getattr(self, f"_held_{kind}")
        found: dict[tuple[str, ...], Held] = reader(fabric)
        self._ids[kind] = {key: h.id for key, h in found.items()}
        return found

    def create(self, fabric: str, kind: str, objects: list[Wanted]) -> None:
        bodies = [self._body(fabric, w) for w in objects]
        self._batches("POST", ENDPOINTS[kind], bodies)
        self.held(fabric, kind)  # the new objects' ids, for the kinds that refer to them
        if kind == "ip_address":
            self._assign(fabric, objects)

    def update(self, fabric: str, kind: str, changes: list[tuple[Held, Wanted]]) -> None:
        bodies = [{"id": held.id, **self._body(fabric, want)} for held, want in changes]
        self._batches("PATCH", ENDPOINTS[kind], bodies)
        if kind == "ip_address":
            self._assign(fabric, [want for held, want in changes
                                  if (held.fields.get("device"), held.fields.get("interface"))
                                  != (want.fields.get("device"), want.fields.get("interface"))])

    def device_facts(self, fabric: str) -> dict[str, DeviceFacts]:
        if not self._location_exists(fabric):
            return {}
        facts = {}
        for r in self.pages(ENDPOINTS["device"], _Device, location=fabric, depth="1"):
            if r.name is None:
                continue
            primary = _name(r.primary_ip4, "address")
            try:  # where `netgen deploy` connects to: an address, nothing else
                management = str(ipaddress.ip_interface(primary).ip) if primary else None
            except ValueError:
                raise SotError(f"Nautobot at {self.url}: device {printable(r.name, 100)}: its primary IPv4"
                               f" {printable(primary, 100)!r} is not an address") from None
            facts[r.name] = DeviceFacts(management=management, serial=r.serial or "",
                                        status=_name(r.status))
        return facts

    def record_serial(self, fabric: str, device: str, serial: str) -> str:
        """Set the serial number of the fabric's `device` (a replacement read from the switch, `netgen
        replace --join`) and return what Nautobot holds afterwards, read back. Only a device netgen
        made (its mark) is written; SotError otherwise."""
        if not serial or len(serial) > 255 or not serial.isprintable():
            raise SotError(f"{device}: serial {printable(serial, 60)!r} is not one to record")
        held = self._held_device(fabric).get((device,))
        if held is None:
            raise SotError(f"Nautobot at {self.url}: fabric {fabric} has no device {device}: `netgen sot push` first")
        if not held.netgen:
            raise SotError(f"Nautobot at {self.url}: device {device} was not made by netgen for {fabric}: not changed")
        path = f"{ENDPOINTS['device']}{held.id}/"
        self.request("PATCH", path, {"serial": serial})
        answer, _ = self.request("GET", path)
        return str((answer or {}).get("serial") or "")

    # --- reading ------------------------------------------------------------------------------
    def _location_exists(self, fabric: str) -> bool:
        return bool(list(self.pages(ENDPOINTS["location"], _Record, name=fabric)))

    def _namespace_exists(self, fabric: str) -> bool:
        return bool(list(self.pages(ENDPOINTS["namespace"], _Record, name=fabric)))

    def _held_location(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return {(r.name,): Held(r.id, {"description": r.description})
                for r in self.pages(ENDPOINTS["location"], _Location, name=fabric)}

    def _named(self, kind: str) -> dict[tuple[str, ...], Held]:
        return {(r.name,): Held(r.id) for r in self.pages(ENDPOINTS[kind], _Named)}

    def _held_manufacturer(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return self._named("manufacturer")

    def _held_device_type(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return {(r.model,): Held(r.id) for r in self.pages(ENDPOINTS["device_type"], _DeviceType)}

    def _held_role(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return self._named("role")

    def _held_platform(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return self._named("platform")

    def _held_namespace(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return {(r.name,): Held(r.id) for r in self.pages(ENDPOINTS["namespace"], _Named, name=fabric)}

    def _held_device(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._location_exists(fabric):
            return {}
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["device"], _Device, location=fabric, depth="1"):
            if r.name is None:  # an unnamed device is not one of netgen's
                continue
            fields: dict[str, object] = {"device_type": _name(r.device_type, "model"), "role": _name(r.role),
                                         "platform": _name(r.platform), "location": _name(r.location),
                                         "asn": r.custom_fields.netgen_asn if r.custom_fields else None}
            held[(r.name,)] = Held(r.id, fields, r.marked(fabric))
        return held

    def _held_interface(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._location_exists(fabric):
            return {}
        devices = {i: name for (name,), i in self._ids.get("device", {}).items()}
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["interface"], _Interface, location=fabric):
            device = devices.get(_name(r.device, "id"), "")
            fields = {"type": _value(r.type), "mtu": r.mtu, "description": r.description}
            held[(device, r.name)] = Held(r.id, fields, r.marked(fabric))
        return held

    def _held_cable(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._location_exists(fabric):
            return {}
        ends = {i: key for key, i in self._ids.get("interface", {}).items()}
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["cable"], _Cable, location=fabric):
            a = ends.get(str(r.termination_a_id), ("", ""))
            b = ends.get(str(r.termination_b_id), ("", ""))
            fields = {"type": _value(r.type) or "", "length": r.length}
            mark = r.marked(fabric)
            # either end names the cable: netgen's A end may be the other's B end
            held[a] = Held(r.id, {**fields, "b_device": b[0], "b_port": b[1]}, mark)
            held[b] = Held(r.id, {**fields, "b_device": a[0], "b_port": a[1]}, mark)
        return held

    def _held_prefix(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._namespace_exists(fabric):
            return {}
        return {(r.prefix,): Held(r.id, {"type": _value(r.type), "description": r.description}, r.marked(fabric))
                for r in self.pages(ENDPOINTS["prefix"], _Prefix, namespace=fabric)}

    def _held_ip_address(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._namespace_exists(fabric):
            return {}
        on: dict[str, tuple[str, ...]] = {}  # ip id -> (device, interface)
        if self._location_exists(fabric):
            interfaces = {i: key for key, i in self._ids.get("interface", {}).items()}
            for link in self.pages("/api/ipam/ip-address-to-interface/", _IpOnInterface, limit="1000"):
                where = interfaces.get(_name(link.interface, "id"))
                if where is not None:
                    on[_name(link.ip_address, "id")] = where
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["ip_address"], _IpAddress, namespace=fabric):
            device, interface = on.get(r.id, ("", ""))
            fields: dict[str, object] = {"device": device, "interface": interface}
            if r.description:
                fields["description"] = r.description
            held[(r.address,)] = Held(r.id, fields, r.marked(fabric))
        return held

    def _held_asn(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return {(str(r.asn),): Held(r.id, {"description": r.description}, r.marked(fabric))
                for r in self.pages(BGP_ASN, _Asn)}

    # --- writing ------------------------------------------------------------------------------
    def _body(self, fabric: str, want: Wanted) -> dict[str, Any]:
        f, mark = want.fields, {"custom_fields": {MARK: fabric}}
        kind, key = want.kind, want.key
        if kind == "location":
            return {"name": key[0], "location_type": {"name": LOCATION_TYPE}, "status": "Active", **f}
        if kind in ("manufacturer", "platform", "namespace"):
            return {"name": key[0]}
        if kind == "device_type":
            return {"model": key[0], "manufacturer": {"name": f["manufacturer"]}}
        if kind == "role":
            return {"name": key[0], "content_types": ["dcim.device"]}
        if kind == "device":
            return {"name": key[0], "device_type": {"model": f["device_type"]}, "role": {"name": f["role"]},
                    "platform": {"name": f["platform"]} if f["platform"] else None,
                    "location": {"name": f["location"]}, "status": "Active",
                    "custom_fields": {MARK: fabric, ASN_FIELD: f["asn"]}}
        if kind == "interface":
            return {"device": self._id("device", (key[0],), f"its interface {key[1]}"), "name": key[1],
                    "type": f["type"],
                    "mtu": f.get("mtu"), "description": f["description"], "status": "Active", **mark}
        if kind == "cable":
            cable = f"the cable on {':'.join(key)}"
            return {"termination_a_type": "dcim.interface", "termination_a_id": self._id("interface", key, cable),
                    "termination_b_type": "dcim.interface",
                    "termination_b_id": self._id("interface", (str(f["b_device"]), str(f["b_port"])), cable),
                    "type": f["type"], "length": f["length"], "length_unit": "m", "status": "Connected", **mark}
        if kind == "prefix":
            return {"prefix": key[0], "namespace": {"name": fabric}, "type": f["type"], "status": "Active",
                    "description": f.get("description", ""), **mark}
        if kind == "ip_address":
            return {"address": key[0], "namespace": {"name": fabric}, "status": "Active",
                    "description": f.get("description", ""), **mark}
        if kind == "asn":
            return {"asn": int(key[0]), "status": "Active", "description": f["description"], **mark}
        raise SotError(f"netgen cannot write a {kind} to Nautobot")  # a netgen bug: every kind is above

    def _assign(self, fabric: str, objects: list[Wanted]) -> None:
        """Each address on its interface (ip-address-to-interface), once the addresses exist."""
        wanted = [w for w in objects if w.fields.get("interface")]
        if not wanted:
            return
        self._ids["ip_address"] = {(r.address,): r.id
                                   for r in self.pages(ENDPOINTS["ip_address"], _IpAddress, namespace=fabric)}
        bodies = []
        for w in wanted:
            on = (str(w.fields["device"]), str(w.fields["interface"]))
            bodies.append({"ip_address": self._id("ip_address", w.key, f"its assignment to {':'.join(on)}"),
                           "interface": self._id("interface", on, f"the assignment of {w.key[0]}")})
        self._batches("POST", "/api/ipam/ip-address-to-interface/", bodies)


__all__ = ["Nautobot"]
