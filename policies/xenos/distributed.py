"""``d-xenos``: one inference model-parallel over several DSP boards (d-Xenos).

Every operator is partitioned across the boards along one dimension: its
output channels (``outC``), rows (``inH``) or columns (``inW``)
(:mod:`.partition`); each board then splits its part across its DSP units as
``xenos`` does (:mod:`.dos`). Between operators the boards exchange data:

* nothing, when the consumer is channel- or position-local and partitioned
  like its producer (a ReLU after a convolution, a 1x1 convolution after a
  row-partitioned one; not a product of two activations such as attention,
  which needs all of both);
* the boundary rows (columns), when a windowed consumer is partitioned along
  the same rows as its producer: each board sends its neighbours a halo;
* otherwise the whole output, gathered on every board: through a **parameter
  server** (``ps``: every board sends its part to the first board, which sends
  the whole tensor to every other) or by **ring all-gather** (``ring``: in
  ``B - 1`` steps every board passes a part to the next board of the ring, so
  every link carries ``(B - 1) / B`` of the tensor: bandwidth-optimal).

Exchanges are ``copy`` kernels of the trace and the engine moves a kernel's
output to consumers on other boards, so link bandwidth and contention come
from the engine: a halo is a copy of the boundary rows on the sending board
(only they cross the link); a gather's copies sit on the receiving boards;
a remote board receives the model input once (one copy its units share).

``partition: mixed`` chooses per operator the dimension with the shortest
estimated time, counting the operator on the boards and the exchange its
choice implies (simulated profiling with the cost model). With one board it
is ``xenos``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from simulator.errors import ConfigError
from simulator.params import PositiveSeconds, one_of
from simulator.policy import POLICIES, Job, Placement, Plan, Policy

from ..rewrite import Rewriter
from .dos import POSITION_LOCAL, RECURRENT, config_for, emit_operator, operator_time
from .partition import AXES, CHANNEL_LOCAL, extent, split
from .policy import L2Fraction, add_traffic, prepare, seconds

PARTITIONS = (*AXES, "mixed")
SYNCS = ("ps", "ring")
Partition = one_of(PARTITIONS)
Sync = one_of(SYNCS)
WINDOWED = ("conv", "dwconv", "deconv", "maxpool", "avgpool")


def exchange(producer: dict, consumer: dict, axis_p: str, axis_c: str) -> str:
    """What must move between boards on the edge: ``local``, ``halo`` or ``gather``."""
    if consumer["op"] == "matmul" and not consumer["weight_bytes"]:
        return "gather"  # a product of two activations (attention) needs all of both
    if axis_p == axis_c:
        op = consumer["op"]
        window = op in WINDOWED and int(consumer.get("kernel") or 1) > 1
        if axis_c == "outC" and (op in CHANNEL_LOCAL):
            return "local"
        if axis_c in ("inH", "inW"):
            if window:
                return "halo"
            if op not in RECURRENT and (op in CHANNEL_LOCAL or op in POSITION_LOCAL
                                        or int(consumer.get("kernel") or 1) <= 1):
                return "local"
    return "gather"


def halo_bytes(producer: dict, consumer: dict, axis: str) -> float:
    """Bytes of boundary rows (columns) one board sends a neighbour."""
    rows = extent(producer, axis)
    halo = max(0, int(consumer.get("kernel") or 1) - max(1, int(consumer.get("stride") or 1)))
    return producer["bytes_out"] * min(1.0, halo / rows)


@POLICIES.register("d-xenos")
class DXenos(Policy):
    """Model-parallel inference over several boards.

    Args:
        boards: device names taking part (default: every device of the run,
            the job's first).
        partition: ``outC``, ``inH``, ``inW`` for every operator, or ``mixed``.
        sync: ``ps`` (parameter server on the first board) or ``ring``.
        processor: the processor of each board that runs the parts.
        horizontal: DSP-aware split within each board (else the vanilla one).
        vertical: fused operators and operator linking.
        l2_fraction: share of each unit's private memory given to weights.
        traffic_period: if given, add ``traffic.<level>`` time series (see ``xenos``).
    """

    name = "d-xenos"
    conformance = {"params": {"processor": "cpu.silver"},
                   "workload": {"model": "lenet5", "batch": 1}}

    def __init__(self, boards: Annotated[list[str], Field(min_length=1)] | None = None,
                 partition: Partition = "mixed", sync: Sync = "ring",
                 processor: str = "dsp", horizontal: bool = True, vertical: bool = True,
                 l2_fraction: L2Fraction = 0.5, traffic_period: PositiveSeconds | None = None):
        self.boards = boards
        self.partition = partition
        self.sync = sync
        self.processor = processor
        self.horizontal = bool(horizontal)
        self.vertical = bool(vertical)
        self.l2_fraction = float(l2_fraction)
        self.traffic_period = traffic_period
        self._period = seconds(traffic_period)
        self._plans: dict[str, Plan] = {}
        self._axes: list[str] = []
        # per job, the estimated time of the plan made (operators plus exchanges)
        self.estimates: dict[str, float] = {}

    # -- set-up -----------------------------------------------------------------
    def _boards(self, job: Job) -> list[str]:
        devices = self.context.devices()
        boards = list(self.boards or [job.device, *(d for d in devices if d != job.device)])
        for board in boards:
            if board not in devices:
                raise ConfigError(f"unknown device {board!r}; devices are "
                                  f"{', '.join(devices)}", path="boards")
            if self.processor not in self.context.processors(board):
                raise ConfigError(f"device {board!r} has no processor {self.processor!r}",
                                  path="processor")
        return boards

    def _where(self, job: Job, board: str) -> str:
        return self.processor if board == job.device else f"{board}:{self.processor}"

    # -- choosing partitions -------------------------------------------------------
    def _valid(self, record: dict, count: int) -> list[str]:
        if record["op"] in RECURRENT:
            return ["outC"]
        axes = [a for a in AXES if extent(record, a) >= count]
        return axes or ["outC"]

    def _sync_time(self, job, boards, kind: str, producer: dict, consumer: dict,
                   axis: str) -> float:
        """Estimated seconds of the exchange on one edge, as :meth:`_inputs` emits it:
        every hop is a transfer and a ``copy`` kernel on the receiving (for a halo:
        the sending) board; transfers that leave or enter one device's network port
        one after another (a parameter server's) add up."""
        if kind == "local" or len(boards) == 1:
            return 0.0
        a, b = self._where(job, boards[0]), self._where(job, boards[1])
        n = len(boards)
        if kind == "halo":
            size = halo_bytes(producer, consumer, axis)
            return self._copy_time(job, size) + self.context.transfer_time(job, a, b, size)
        total = producer["bytes_out"]
        chunk = total / n
        if self.sync == "ring":
            # B - 1 steps; in each every board receives one chunk and copies it
            return (n - 1) * (self.context.transfer_time(job, a, b, chunk)
                              + self._copy_time(job, chunk))
        # parameter server: parts in, one copy of the whole, the whole out to every board
        serial = n - 1 if self._shared_port(job, a, b) else 1
        return (serial * self.context.transfer_time(job, b, a, chunk)
                + self._copy_time(job, total)
                + serial * self.context.transfer_time(job, a, b, total))

    def _shared_port(self, job, a: str, b: str) -> bool:
        """Whether transfers between the boards go through device ports (shared by
        all of a device's links)."""
        return any(channel.ports for channel in self.context.route(a, b, job.device))

    def _copy_time(self, job, size: float) -> float:
        """Seconds of one exchange ``copy`` kernel of ``size`` bytes on one unit."""
        spec = self.context.processor_spec(self.processor, job.device)
        record = {"op": "copy", "pass": "fwd", "precision": "fp32", "flops": 0.0,
                  "bytes_in": size, "bytes_out": size, "weight_bytes": 0.0}
        cost = self.context.cost_model(job.device).kernel_cost(self.processor, 1, record)
        return cost.duration(spec.opps[-1].frequency)

    def _choose(self, job, trace, boards, cfg) -> list[str]:
        """A partition per operator: the one given, or (``mixed``) the cheapest by
        dynamic programming over the operators in order, each choice costing the
        operator's estimated time on the boards plus the exchanges on its input
        edges (branches' shared ancestors are counted once per branch), kept only
        if its whole estimate beats every uniform scheme's."""
        records = trace.table.to_dict("records")
        count = len(boards)
        if self.partition != "mixed":
            out = []
            for record in records:
                valid = self._valid(record, count)
                out.append(self.partition if self.partition in valid else valid[0])
            return out
        op_time = self._op_times(job, records, count, cfg)

        def total(axes: list[str]) -> float:
            return self._estimate(job, trace, boards, axes, op_time)

        best: list[dict[str, float]] = []
        back: list[dict[str, dict[int, str]]] = []
        for row, record in enumerate(records):
            best.append({})
            back.append({})
            for axis in self._valid(record, count):
                seconds = op_time[row, axis]
                choice = {}
                for pred in trace.preds[row]:
                    options = {
                        a: cost + self._sync_time(job, boards,
                                                  exchange(records[pred], record, a, axis),
                                                  records[pred], record, axis)
                        for a, cost in best[pred].items()}
                    choice[pred] = min(options, key=options.get)
                    seconds += options[choice[pred]]
                best[row][axis] = seconds
                back[row][axis] = choice
        chosen: dict[int, str] = {}
        for row in reversed(range(len(records))):
            if row not in chosen:  # a sink (or not reached): its own cheapest
                chosen[row] = min(best[row], key=best[row].get)
            for pred, axis in back[row][chosen[row]].items():
                chosen.setdefault(pred, axis)
        candidates = [[chosen[row] for row in range(len(records))]]
        for axis in AXES:  # the uniform schemes too: keep whichever is estimated fastest
            candidates.append([axis if axis in self._valid(r, count)
                               else self._valid(r, count)[0] for r in records])
        return min(candidates, key=total)

    def _op_times(self, job, records, count: int, cfg) -> dict[tuple[int, str], float]:
        """Estimated seconds of each operator's slowest board part, per valid axis."""
        frequency = self.context.processor_spec(self.processor, job.device).opps[-1].frequency
        cost_model = self.context.cost_model(job.device)
        op_time: dict[tuple[int, str], float] = {}
        for row, record in enumerate(records):
            for axis in self._valid(record, count):
                op_time[row, axis] = max(operator_time(cost_model, part,
                                                       self.processor, cfg, frequency)
                                         for part in split(record, count, axis))
        return op_time

    def _estimate(self, job, trace, boards, axes: list[str], op_time: dict) -> float:
        """Estimated time of a whole assignment (every edge counted once)."""
        records = trace.table.to_dict("records")
        seconds = sum(op_time[row, axis] for row, axis in enumerate(axes))
        for row, record in enumerate(records):
            for pred in trace.preds[row]:
                kind = exchange(records[pred], record, axes[pred], axes[row])
                seconds += self._sync_time(job, boards, kind, records[pred], record,
                                           axes[row])
        return seconds

    # -- the plan ------------------------------------------------------------------
    def plan(self, job: Job) -> Plan:
        boards = self._boards(job)
        spec = self.context.require_processor(self.processor, job.device)
        cfg = config_for(spec, self.context.soc(job.device), None,
                         self.horizontal, self.l2_fraction)
        trace = prepare(job.trace, self.vertical, cfg.units)
        axes = self._axes = self._choose(job, trace, boards, cfg)
        records = trace.table.to_dict("records")
        self.estimates[job.name] = self._estimate(
            job, trace, boards, axes, self._op_times(job, records, len(boards), cfg))
        rw = Rewriter(trace)
        # ids ending each board's share of each operator, and per (row, board) what a
        # consumer on that board waits for when the row's output is gathered
        tails: list[list[list[int]]] = []
        gathered: dict[int, list[list[int]]] = {}
        for row, record in enumerate(records):
            parts = split(record, len(boards), axes[row])
            per_board: list[list[int]] = []
            for b, part in enumerate(parts):
                deps: list[int] = []
                for pred in trace.preds[row]:
                    kind = exchange(records[pred], record, axes[pred], axes[row])
                    deps += self._inputs(rw, job, boards, records, tails, gathered, pred,
                                         record, kind, b)
                where = self._where(job, boards[b])
                part = dict(part, name=f"{record['name']}@{boards[b]}")
                if not deps and boards[b] != job.device:
                    # the model input reaches a remote board once; its units share it
                    deps = [self._copy(rw, job, boards[b], part, part["bytes_in"], [],
                                       "input")]
                per_board.append(emit_operator(rw, part, deps, where, cfg))
            per_board += [[] for _ in range(len(boards) - len(parts))]
            tails.append(per_board)
            rw.finish(row, [kid for ids in per_board for kid in ids])
        new_trace, placements = rw.build(f"d-xenos {self.partition} {self.sync}")
        plan = self._plans[job.name] = Plan(placements, trace=new_trace)
        return plan

    def _inputs(self, rw, job, boards, records, tails, gathered, pred, consumer, kind, b):
        """Ids board ``b``'s part of ``consumer`` waits for on the edge from ``pred``."""
        own = tails[pred][b]
        if kind == "local" or len(boards) == 1:
            return own or [kid for ids in tails[pred] for kid in ids]
        if kind == "halo":
            # the neighbour extracts its boundary rows (a copy on its own board, after
            # its parts): only they cross the link
            deps = list(own)
            for n in (b - 1, b + 1):
                if 0 <= n < len(boards) and tails[pred][n]:
                    size = halo_bytes(records[pred], consumer, "inH")
                    deps.append(self._copy(rw, job, boards[n], records[pred], size,
                                           tails[pred][n], f"halo-to{b}"))
            return deps
        if pred not in gathered:
            gathered[pred] = self._gather(rw, job, boards, records[pred], tails[pred])
        return gathered[pred][b]

    def _copy(self, rw, job, board, record, size, deps, label) -> int:
        """A copy kernel on ``board`` receiving ``size`` bytes (its inputs' transfer)."""
        copy = {"op": "copy", "flops": 0.0, "bytes_in": size, "bytes_out": size,
                "weight_bytes": 0.0, "read_stride": 0.0, "simd_waste": 0.0}
        return rw.emit(dict(record, **copy), Placement(self._where(job, board), 1), deps,
                       name=f"{record['name']}.{label}@{board}")

    def _gather(self, rw, job, boards, record, tails) -> list[list[int]]:
        """Emit the exchange that gives every board the whole output; returns, per
        board, the ids a consumer there waits for."""
        n = len(boards)
        chunk = record["bytes_out"] / n
        if self.sync == "ps":
            gather = self._copy(rw, job, boards[0], record, record["bytes_out"],
                                [k for ids in tails for k in ids], "gather")
            return [[gather] for _ in boards]
        have: list[list[int]] = [list(tails[b]) for b in range(n)]
        for source in range(n):
            holder = tails[source]
            for hop in range(1, n):
                target = (source + hop) % n
                if not holder:
                    break
                relay = self._copy(rw, job, boards[target], record, chunk, holder,
                                   f"ring{source}.{hop}")
                have[target].append(relay)
                holder = [relay]
        return have

    def metrics(self, result, iterations) -> dict[str, float]:
        add_traffic(self.context, result, self._plans, self._period)
        return {f"d-xenos.{axis}_operators": float(self._axes.count(axis)) for axis in AXES}
