"""Hardware-only IRON constructs: explicit stream routes, DMA buffer descriptors, locks,
packet headers, cascade streams and device images. The CPU chip has no switchboxes, DMA
engines or configuration images, so constructing one raises `UnsupportedConstructError`
naming it and the managed alternative (emulating them would be an AIE hardware simulator)."""

from __future__ import annotations

from typing import Any

from .hardware import hardware_only


def _hardware_only(name: str, why: str) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise hardware_only(name, why)

    def from_module(cls: type, *args: Any, **kwargs: Any) -> Any:
        raise hardware_only(f"{name}.from_module", why)

    doc = f"Hardware-only ({why}): constructing it raises `UnsupportedConstructError`."
    return type(name, (), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                           "from_module": classmethod(from_module)})


Flow = _hardware_only("Flow", "an explicit AIE stream route through switchboxes")
PacketFlow = _hardware_only("PacketFlow", "a packet-switched AIE stream route")
PacketDest = _hardware_only("PacketDest", "a destination of a packet-switched route")
FlowEndpoint = _hardware_only("FlowEndpoint", "an end of an explicit AIE stream route")
CascadeFlow = _hardware_only("CascadeFlow", "an AIE cascade stream between neighbouring cores")
Packet = _hardware_only("Packet", "an AIE packet header (type, id)")
TileDma = _hardware_only("TileDma", "a program of a tile's DMA engine")
DmaChannel = _hardware_only("DmaChannel", "a channel of a tile's DMA engine")
DmaEndpoint = _hardware_only("DmaEndpoint", "an endpoint of a tile DMA program")
TileDmaTask = _hardware_only("TileDmaTask", "a task of a tile's DMA engine")
Bd = _hardware_only("Bd", "a DMA buffer descriptor")
Acquire = _hardware_only("Acquire", "a lock acquire in a DMA buffer-descriptor chain")
Release = _hardware_only("Release", "a lock release in a DMA buffer-descriptor chain")
Lock = _hardware_only("Lock", "an AIE hardware lock")
DeviceConfiguration = _hardware_only("DeviceConfiguration", "a device image (PDI) for reconfiguration")

NAMES = ("Flow", "PacketFlow", "PacketDest", "FlowEndpoint", "CascadeFlow", "Packet", "TileDma",
         "DmaChannel", "DmaEndpoint", "TileDmaTask", "Bd", "Acquire", "Release", "Lock",
         "DeviceConfiguration")
