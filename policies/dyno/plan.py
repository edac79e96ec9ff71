"""Turning a split configuration <s, c> into a runnable trace and placements.

For a split at ``s`` with bitwidth ``c`` the model's kernels ``0 .. s-1`` run on
the client and the rest on the server, each side one operator at a time (as a
framework runs them). Every tensor crossing the cut is packed on the client
by a packing thread (ISQuant, bit shuffle, LZ4 as kernels on the packer,
tensor after tensor), crosses the network as the packed bytes, and is
unpacked on the server (LZ4 decode, bit unshuffle, dequantise) before the
kernels that read it. Packing overlaps client compute (it is another
thread); with pipelined iterations client, packer, network and server work
on different frames at once.

``c = RAW`` sends the tensors unpacked, straight from producer to consumer
(Neurosurgeon). A model input sent as a JPEG (``jpeg_bytes``) is uploaded as
such and decoded by the unpacker.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from simulator.policy import Placement
from simulator.trace import Trace, trace_from_table
from workloads.packing.kernels import pack_rows, unpack_rows
from workloads.splits.cuts import INPUT, SplitPoint
from workloads.splits.profile import RAW, SplitProfile

CLIENT, PACK, UNPACK, SERVER = "client", "pack", "unpack", "server"
JPEG_DECODE_OPS_PER_PIXEL = 40.0  # E: libjpeg-turbo decodes ~100 Mpixel/s per ~4 GHz core


@dataclass(frozen=True)
class Where:
    """Placements of the four roles.

    Attributes:
        client: the client's compute (the model's first part).
        packer: the client's packing thread.
        server: the server's compute.
        unpacker: the server's unpacking thread.
    """

    client: Placement
    packer: Placement
    server: Placement
    unpacker: Placement

    def of(self, role: str) -> Placement:
        return {CLIENT: self.client, PACK: self.packer, SERVER: self.server,
                UNPACK: self.unpacker}[role]


@dataclass
class SplitPlan:
    """A split configuration made runnable.

    Attributes:
        trace: the rewritten trace.
        placements: per row of ``trace``.
        roles: per row: client, pack, unpack or server.
    """

    trace: Trace
    placements: list[Placement]
    roles: list[str]


def jpeg_decode_row(split: SplitPoint, jpeg_bytes: float) -> dict:
    """The server's decoding of a JPEG input of ``jpeg_bytes`` (split 0)."""
    tensor = split.tensors[0]
    return {"name": "input.jpeg_decode", "op": "decompress", "pass": "other",
            "precision": "int8", "flops": JPEG_DECODE_OPS_PER_PIXEL * tensor.elements / 3,
            "bytes_in": float(jpeg_bytes), "bytes_out": float(tensor.elements),
            "weight_bytes": 0.0, "layer": "input"}


def build_split(trace: Trace, profile: SplitProfile, split: SplitPoint, bits: int,
                where: Where, jpeg_bytes: float | None = None) -> SplitPlan:
    """Rewrite ``trace`` for the configuration <``split``, ``bits``>.

    Args:
        trace: the model's inference trace.
        profile: its split profile (packed sizes).
        split: the cut.
        bits: ISQuant bitwidth, ``LOSSLESS`` or ``RAW``.
        where: placements of the roles.
        jpeg_bytes: split 0 only: send the input as a JPEG of this size instead.
    """
    table = trace.table
    records = table.to_dict("records")
    ids = [int(kid) for kid in table["id"]]
    s = split.index
    next_id = max(ids) + 1
    rows: list[dict] = []
    roles: dict[int, str] = {}

    def add(row: dict, role: str, deps: set[int]) -> int:
        nonlocal next_id
        if "id" not in row:
            row = {**row, "id": next_id}
            next_id += 1
        row["deps"] = tuple(sorted(deps))
        rows.append(row)
        roles[row["id"]] = role
        return row["id"]

    previous = None
    for r in range(s):
        deps = set(records[r]["deps"]) | ({previous} if previous is not None else set())
        previous = add(dict(records[r]), CLIENT, deps)

    # The cut's tensors: packed on the client, unpacked on the server.
    arrives: dict[int, int] = {}  # producer row -> kernel whose output the server reads
    if jpeg_bytes is not None and s == 0:
        arrives[INPUT] = add(jpeg_decode_row(split, jpeg_bytes), UNPACK, set())
    elif bits != RAW:
        last_pack = last_unpack = None
        for tensor in split.tensors:
            packed = profile.tensor_bytes(tensor, bits)
            before = {ids[tensor.producer]} if tensor.producer != INPUT else set()
            for row in pack_rows(tensor.layer, tensor.elements, bits, packed):
                deps = before | ({last_pack} if last_pack is not None else set())
                last_pack = before = add(row, PACK, deps)
                before = {last_pack}
            for row in unpack_rows(tensor.layer, tensor.elements, bits, packed):
                deps = before | ({last_unpack} if last_unpack is not None else set())
                last_unpack = add(row, UNPACK, deps)
                before = {last_unpack}
            arrives[tensor.producer] = last_unpack

    previous = None
    for r in range(s, len(records)):
        deps = set()
        for dep in records[r]["deps"]:
            producer = trace.index_of[dep]
            deps.add(ids[producer] if producer >= s or producer not in arrives
                     else arrives[producer])
        if not records[r]["deps"] and INPUT in arrives:
            deps.add(arrives[INPUT])
        if previous is not None:
            deps.add(previous)
        previous = add(dict(records[r]), SERVER, deps)

    rewritten = trace_from_table(pd.DataFrame(rows),
                                 source=f"{trace.source} split at {s} ({bits} bits)")
    order = [roles[int(kid)] for kid in rewritten.table["id"]]
    return SplitPlan(rewritten, [where.of(role) for role in order], order)
