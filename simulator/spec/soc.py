"""The SoC (device) schema: processors, memories, power and thermal network.

One schema serves phones, server boards (CPU + discrete GPU) and multi-core DSP
boards. A device has CPU clusters (``cpu.<cluster>``), a ``gpu``, a ``dsp`` and
an ``npu``, each optional but at least one in all (a DSP board may have no
application CPU), shared memories (``l3``, ``slc``, ..., and ``dram``), a thermal RC
network, and thermal-governor trip points. Every section may carry a
``source:`` saying where its numbers come from (datasheet, paper, measurement,
or "fitted to <data>").

All quantities are written with units ("2.84 GHz", "512 KiB") and arrive here
as SI floats (see :mod:`simulator.units`).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import (
    Bytes,
    BytesPerSecond,
    Celsius,
    Fraction,
    Hertz,
    Joules,
    JoulesPerByte,
    JoulesPerKelvin,
    Kelvin,
    Seconds,
    Strict,
    Watts,
    WattsPerKelvin,
)
from .processor import (  # noqa: F401  (re-exported: the processor half of the schema)
    OPP,
    PROCESSOR_KINDS,
    BatchPadding,
    CacheLevel,
    LibrarySpec,
    Offload,
    ProcessorPower,
    ProcessorSpec,
)


class MemorySpec(Strict):
    """A device-level memory: a shared cache (L3, SLC, MSMC) or the DRAM."""

    size: Bytes = Field(gt=0)
    bandwidth: BytesPerSecond = Field(gt=0)
    efficiency: Fraction = Field(default=1.0, gt=0, le=1,
                                 description="sustained fraction of the bandwidth")
    line_size: Bytes = Field(default=64.0, gt=0,
                             description="bytes per miss / burst (for strided reads)")
    energy_per_byte: JoulesPerByte = Field(default=0.0, ge=0)
    idle: Watts = Field(default=0.0, ge=0, description="background power")
    source: str | None = None


class ThermalNode(Strict):
    """A node of the thermal RC network with its heat capacity."""

    capacity: JoulesPerKelvin = Field(gt=0)
    source: str | None = None


class ThermalLink(Strict):
    """A thermal conductance between two nodes (``ambient`` is the boundary)."""

    between: tuple[str, str]
    conductance: WattsPerKelvin = Field(gt=0)


class TripPoint(Strict):
    """An Android step-wise thermal trip: above ``temperature`` the frequency
    caps of ``domains`` step down one OPP per poll; below ``temperature -
    hysteresis`` they step back up."""

    sensor: str
    temperature: Celsius
    hysteresis: Kelvin = Field(default=2.0, ge=0)
    domains: list[str] = Field(min_length=1)
    floor: Hertz | None = Field(default=None, gt=0)


class ThermalSpec(Strict):
    """RC thermal network, where the device's remaining power goes, and trip points."""

    ambient: Celsius = 25.0
    step: Seconds = Field(default=0.01, gt=0, description="power/thermal sampling step")
    nodes: dict[str, ThermalNode] = Field(min_length=1)
    links: list[ThermalLink] = Field(min_length=1)
    board_node: str = Field(description="node receiving DRAM and base power")
    skin_node: str | None = None
    poll: Seconds = Field(default=0.25, gt=0, description="thermal governor polling period")
    trips: list[TripPoint] = Field(default_factory=list)
    source: str | None = None

    @model_validator(mode="after")
    def _topology(self) -> ThermalSpec:
        names = set(self.nodes) | {"ambient"}
        for link in self.links:
            for end in link.between:
                if end not in names:
                    raise ValueError(f"thermal link names unknown node {end!r}")
        for node in (self.board_node, self.skin_node):
            if node is not None and node not in self.nodes:
                raise ValueError(f"unknown thermal node {node!r}")
        if not any("ambient" in link.between for link in self.links):
            raise ValueError("the thermal network needs a path to 'ambient'")
        for trip in self.trips:
            if trip.sensor not in self.nodes:
                raise ValueError(f"trip sensor {trip.sensor!r} is not a thermal node")
        return self


class DevicePower(Strict):
    """Power not attributed to a processor or memory (rails, display off, PMIC)."""

    base: Watts = Field(default=0.0, ge=0)
    source: str | None = None


class StorageSpec(Strict):
    """Flash storage (UFS, eMMC): loading and saving models, page-in/page-out.

    A read occupies the storage for ``latency + bytes / read_bandwidth`` (reads
    queue), drawing ``read_power`` meanwhile; the bytes land in DRAM at its
    energy per byte. A model load (:meth:`~simulator.engine.storage.Storage.load`)
    then keeps a CPU core busy for ``load_latency + bytes / load_bandwidth``
    (deserialisation, allocation, initialisation) at ``load_power``. Writes likewise (UFS is full duplex: a read and a write
    may overlap). See :mod:`simulator.engine.storage`.

    Attributes:
        read_bandwidth: sustained sequential read bandwidth.
        write_bandwidth: sustained sequential write bandwidth (default: read's).
        latency: fixed time per request (command, first access).
        read_power: power drawn while reading (device and host interface).
        write_power: power drawn while writing (default: read's).
        load_bandwidth: bytes of model per second the CPU turns into a ready
            model after they are read (parameter deserialisation, memory
            allocation, model initialisation); None: loading costs no CPU work.
        load_latency: fixed CPU time per model load (runtime initialisation).
        load_power: power the loading CPU core draws above idle meanwhile.
        source: where the numbers come from.
    """

    read_bandwidth: BytesPerSecond = Field(gt=0)
    write_bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    latency: Seconds = Field(default=0.0, ge=0)
    read_power: Watts = Field(default=0.0, ge=0)
    write_power: Watts | None = Field(default=None, ge=0)
    load_bandwidth: BytesPerSecond | None = Field(default=None, gt=0)
    load_latency: Seconds = Field(default=0.0, ge=0)
    load_power: Watts = Field(default=0.0, ge=0)
    source: str | None = None


class SocSpec(Strict):
    """A device: SoC (or board) description. See the module docstring.

    ``variants`` names alternative configurations of the same device (power
    modes, e.g. a Jetson's nvpmodel modes): each is a mapping of overrides
    deep-merged over the file (mappings merge key by key; lists and values
    replace), selected as ``soc: <name>@<variant>``
    (:func:`simulator.library.load_soc`).
    """

    name: str
    description: str = ""
    kind: str = "phone"
    source: str | None = None
    cpu: dict[str, ProcessorSpec] = Field(default_factory=dict)
    gpu: ProcessorSpec | None = None
    dsp: ProcessorSpec | None = None
    npu: ProcessorSpec | None = None
    memory: dict[str, MemorySpec]
    power: DevicePower = DevicePower()
    thermal: ThermalSpec
    default_governor: str = "schedutil"
    energy: Joules | None = Field(default=None, description="battery energy, informative")
    storage: StorageSpec | None = Field(default=None, description="flash storage (optional)")
    variants: dict[str, dict] = Field(default_factory=dict,
                                      description="named overrides, selected as name@variant")

    @model_validator(mode="after")
    def _references(self) -> SocSpec:
        if "dram" not in self.memory:
            raise ValueError("memory.dram is required")
        if not self.processors():
            raise ValueError("a device needs at least one processor (cpu, gpu, dsp or npu)")
        for name, proc in self.processors().items():
            for mem in proc.shared_memories:
                if mem not in self.memory:
                    raise ValueError(f"processor {name!r} names unknown memory {mem!r}")
            if proc.thermal_node not in self.thermal.nodes:
                raise ValueError(f"processor {name!r}: unknown thermal node "
                                 f"{proc.thermal_node!r}")
        domains = set(self.processors())
        for trip in self.thermal.trips:
            for domain in trip.domains:
                if domain not in domains:
                    raise ValueError(f"trip domain {domain!r} is not a processor of this SoC")
        return self

    def processors(self) -> dict[str, ProcessorSpec]:
        """All processors by dotted name: ``cpu.gold``, ``gpu``, ``dsp``."""
        out = {f"cpu.{name}": spec for name, spec in self.cpu.items()}
        for name in ("gpu", "dsp", "npu"):
            spec = getattr(self, name)
            if spec is not None:
                out[name] = spec
        return out
