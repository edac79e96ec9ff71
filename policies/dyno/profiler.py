"""DynO's profiler: offline estimates corrected at run time.

* **Offline**: the time of every kernel on the client, packer, unpacker and
  server placements, from the device descriptions (the simulator's stand-in
  for DynO's calibration run: the cost model at the top OPP, without
  contention); data sizes and accuracy per <s, c> from the split profile.
* **Run time**: after each inference, the measured client time (compute and
  packing) over its offline estimate gives the scaling factor
  ``SF = T_real / T_offline`` (a proxy for the device's load, DVFS state,
  thermal throttling), applied to every other configuration's estimate; the
  same on the server. ``SF`` is smoothed: ``SF <- (1 - a) SF + a * measured``.
* **Network**: a transfer of ``d`` bytes takes ``L + d / B``, plus the radio's
  promotion when its tail (known to the client) is shorter than the time
  between inferences. Each observed
  transfer on the link gives ``B = d / busy time`` and ``L = arrival - end``;
  a real-time moving average over the last few transfers (used while a
  transfer happened within ``window`` seconds on the current network type)
  and, per network type (as the OS reports it: Wi-Fi, 4G...), a slower
  historical one starting from the type's nominal values.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from simulator.network.presets import LINK_PRESETS
from simulator.policy import IterationReport, Job, Placement, PolicyContext
from workloads.packing.kernels import pack_rows, unpack_rows
from workloads.splits.profile import RAW, SplitProfile

from .plan import CLIENT, PACK, SERVER, SplitPlan, Where, jpeg_decode_row


class MovingAverage:
    """Exponentially weighted moving average with the time of its last update."""

    def __init__(self, value: float, alpha: float):
        self.value = value
        self.alpha = alpha
        self.updated = -math.inf

    def update(self, measured: float, now: float) -> None:
        self.value = (1 - self.alpha) * self.value + self.alpha * measured
        self.updated = now


class LinkEstimate:
    """Real-time and historical estimates of one channel's bandwidth and latency.

    The real-time estimate is the mean of the last ``samples`` transfers, used
    while the newest is at most ``window`` old and was made on the current
    network type. Otherwise the historical estimate of the current network
    type is used: an exponential average of that type's transfers, starting
    from the type's nominal values (a preset's, or the channel's at time 0).

    Args:
        channel: the channel (its network type over time, direction, nominal values).
        window: a real-time estimate older than this (s) is not used.
        samples: transfers in the real-time average.
        alpha_history: weight of a new measurement in the historical average.
    """

    def __init__(self, channel, window: float, samples: int = 3,
                 alpha_history: float = 0.05):
        self.channel = channel
        self.switch = channel.switch
        self.window = window
        self.alpha = alpha_history
        self.history: dict[str | None, tuple[MovingAverage, MovingAverage]] = {}
        self.recent: deque[tuple[float, float, float, str | None]] = deque(maxlen=samples)

    def _history(self, network: str | None) -> tuple[MovingAverage, MovingAverage]:
        if network not in self.history:
            preset = LINK_PRESETS.get(network) if network else None
            if preset is not None:
                nominal = (preset.uplink if self.channel.uplink else preset.downlink,
                           preset.rtt / 2)
            else:
                nominal = (self.channel.bandwidth.at(0.0), self.channel.latency_at(0.0))
            self.history[network] = (MovingAverage(nominal[0], self.alpha),
                                     MovingAverage(nominal[1], self.alpha))
        return self.history[network]

    def observe(self, nbytes: float, ready: float, start: float, end: float,
                arrival: float) -> None:
        """One transfer: free channel at ``ready``, data flowing ``start``..``end``.
        A radio promotion (``start - ready``) is not the link's latency: it depends on
        how long the radio was idle, which the estimates model apart."""
        busy = end - start - self.switch
        if nbytes <= 0 or busy <= 0:
            return
        bandwidth, latency = nbytes / busy, arrival - end
        network = self.channel.network_at(start)
        history = self._history(network)
        history[0].update(bandwidth, end)
        history[1].update(latency, end)
        self.recent.append((bandwidth, latency, end, network))

    def current(self, now: float) -> tuple[float, float]:
        """(bandwidth B/s, latency s) to plan with at ``now``."""
        network = self.channel.network_at(now)
        fresh = [(b, lat) for b, lat, t, net in self.recent
                 if net == network and now - t <= self.window]
        if fresh and self.recent[-1][3] == network:
            return (float(np.mean([b for b, _ in fresh])),
                    float(np.mean([lat for _, lat in fresh])))
        bandwidth, latency = self._history(network)
        return bandwidth.value, latency.value


class Profiler:
    """Estimates of every candidate configuration of one job.

    Args:
        context: the run's policy context.
        job: the job.
        profile: the model's split profile.
        where: placements of the four roles.
        configs: candidate ``(split, bits)`` pairs.
        window: validity of real-time network estimates (s).
        alpha: weight of a new measurement in the scaling factors.
        jpeg_bytes: ``split -> bytes`` of the input sent as a JPEG (split 0 with
            ``bits`` None), decoded on the server; None: no JPEG configuration.
        (Otherwise a configuration with ``bits`` None sends nothing: device-only.)
    """

    def __init__(self, context: PolicyContext, job: Job, profile: SplitProfile, where: Where,
                 configs: list, window: float = 300.0, alpha: float = 0.5,
                 jpeg_bytes=None):
        self.context = context
        self.job = job
        self.profile = profile
        self.where = where
        self.configs = configs
        self.alpha = alpha
        trace = job.trace
        n = len(trace)
        self.client_row = np.array([self.duration(row, where.client) for row in
                                    trace.table.to_dict("records")])
        self.server_row = np.array([self.duration(row, where.server) for row in
                                    trace.table.to_dict("records")])
        client_prefix = np.concatenate([[0.0], np.cumsum(self.client_row)])
        server_suffix = np.concatenate([np.cumsum(self.server_row[::-1])[::-1], [0.0]])
        flops = trace.table["flops"].to_numpy(dtype=float)
        flops_prefix = np.concatenate([[0.0], np.cumsum(flops)])
        splits = [split.index for split, _ in configs]
        self.client = client_prefix[splits]
        self.server = server_suffix[splits]
        self.device_flops = flops_prefix[splits] / max(flops_prefix[-1], 1.0)
        self.pack = np.zeros(len(configs))
        self.unpack = np.zeros(len(configs))
        self.up_bytes = np.zeros(len(configs))
        self.host_bytes = np.zeros(len(configs))  # unpacked bytes moved to the server processor
        self.drop = np.zeros(len(configs))
        self.plans: dict[int, SplitPlan] = {}
        self._row_offline: dict[int, np.ndarray] = {}
        for k, (split, bits) in enumerate(configs):
            self.drop[k] = profile.drop(split, bits) if bits is not None else 0.0
            if split.index == n:
                continue
            if bits is None and split.index == 0 and jpeg_bytes is not None:
                size = jpeg_bytes(split)  # the input as a JPEG, decoded on the server
                self.up_bytes[k] = size
                self.unpack[k] = self.duration(jpeg_decode_row(split, size), where.unpacker)
                continue
            if bits is None or bits == RAW:
                self.up_bytes[k] = split.nbytes if bits == RAW else 0.0
                continue
            self.up_bytes[k] = profile.nbytes(split, bits)
            self.host_bytes[k] = split.nbytes
            for tensor in split.tensors:
                packed = profile.tensor_bytes(tensor, bits)
                self.pack[k] += sum(self.duration(row, where.packer) for row in
                                    pack_rows(tensor.layer, tensor.elements, bits, packed))
                self.unpack[k] += sum(self.duration(row, where.unpacker) for row in
                                      unpack_rows(tensor.layer, tensor.elements, bits, packed))
        self.output_bytes = float(trace.table["bytes_out"].iloc[-1])
        self.links = self._link_estimates(window)

    # -- offline estimates -------------------------------------------------------
    def duration(self, row: dict, placement: Placement) -> float:
        """Offline seconds of one kernel row on ``placement`` (its units and kernel
        library) at its top OPP."""
        return self.context.duration(self.job, row, placement.processor,
                                     placement.units, placement.library) / placement.share

    def set_plan(self, k: int, plan: SplitPlan) -> None:
        """Record configuration ``k``'s plan and the offline time of each of its rows
        (what its measured times are compared with)."""
        records = plan.trace.table.to_dict("records")
        self._row_offline[k] = np.array([self.duration(row, place) for row, place in
                                         zip(records, plan.placements)])
        self.plans[k] = plan

    def _route(self, src: Placement, dst: Placement) -> list:
        return self.context.route(src.processor, dst.processor, self.job.device)

    def _link_estimates(self, window: float) -> dict[str, LinkEstimate]:
        estimates = {}
        for route in (self._route(self.where.packer, self.where.unpacker),
                      self._route(self.where.client, self.where.server),
                      self._route(self.where.server, self.where.client),
                      self._route(self.where.unpacker, self.where.server)):
            for channel in route:
                estimates.setdefault(channel.name, LinkEstimate(channel, window))
        return estimates

    def _transfer(self, route: list, nbytes: np.ndarray, now: float) -> np.ndarray:
        total = np.zeros_like(nbytes, dtype=float)
        for channel in route:
            bandwidth, latency = self.links[channel.name].current(now)
            total = total + np.where(nbytes > 0, channel.switch + nbytes / bandwidth
                                     + latency, 0.0)
        return total

    # -- run-time corrections ----------------------------------------------------
    def observe(self, report: IterationReport, k: int, scale: dict[str, float]) -> None:
        """Update the scaling factors (in ``scale``) and the network estimates from
        an iteration that ran configuration ``k``."""
        plan = self.plans.get(k)
        offline = self._row_offline.get(k)
        if plan is not None and offline is not None:
            measured = {CLIENT: 0.0, SERVER: 0.0}
            expected = {CLIENT: 0.0, SERVER: 0.0}
            for row, _, start, end in report.kernels:
                side = CLIENT if plan.roles[row] in (CLIENT, PACK) else SERVER
                measured[side] += end - start
                expected[side] += offline[row]
            for side, key in ((CLIENT, "client"), (SERVER, "server")):
                if expected[side] > 0 and math.isfinite(expected[side]):
                    ratio = measured[side] / expected[side]
                    scale[key] = (1 - self.alpha) * scale[key] + self.alpha * ratio
        for channel, nbytes, ready, start, end, arrival in report.transfers:
            estimate = self.links.get(channel)
            if estimate is not None:
                estimate.observe(nbytes, ready, start, end, arrival)

    def snapshot(self, now: float) -> dict[str, float]:
        """The monitored network figures (for the re-invocation test)."""
        out = {}
        for name, estimate in self.links.items():
            bandwidth, latency = estimate.current(now)
            out[f"{name}.bandwidth"] = bandwidth
            out[f"{name}.latency"] = latency
        return out

    def estimates(self, scale: dict[str, float], now: float, in_flight: int = 1
                  ) -> dict[str, np.ndarray]:
        """Metrics of every configuration (see :mod:`.scheduler`).

        With ``in_flight`` > 1 inferences are pipelined: the throughput is that of
        the slowest stage (client compute, packing, the uplink, the server), but
        at most ``in_flight`` inferences per latency (Little's law).
        """
        sf_client, sf_server = scale["client"], scale["server"]
        client = self.client * sf_client
        pack = self.pack * sf_client
        packed = np.array([bits not in (None, RAW) for _, bits in self.configs])
        up_route = self._route(self.where.packer, self.where.unpacker)
        raw_route = self._route(self.where.client, self.where.server)
        up = np.where(packed, self._transfer(up_route, self.up_bytes, now),
                      self._transfer(raw_route, self.up_bytes, now))
        host = self._transfer(self._route(self.where.unpacker, self.where.server),
                              self.host_bytes, now)
        remote = self.server > 0
        down = np.where(remote, self._transfer(self._route(self.where.server,
                                                           self.where.client),
                                               np.full(len(self.configs), self.output_bytes),
                                               now), 0.0)
        server = (self.server + self.unpack) * sf_server + host
        latency = client + pack + up + server + down
        # The client knows its radio's timers: sending once per inference, a radio whose
        # tail is shorter than the time between sends is promoted again for every send.
        for channel in {id(c): c for c in (*up_route, *raw_route)}.values():
            if channel.radio is not None:
                profile = channel.radio.profile
                latency = latency + np.where((self.up_bytes > 0)
                                             & (latency > profile.tail_time),
                                             profile.promotion, 0.0)
        throughput = 1.0 / latency
        if in_flight > 1:
            occupancy = np.where(self.up_bytes > 0, self._occupancy(up_route, raw_route,
                                                                    packed, now), 0.0)
            slowest = np.maximum.reduce([client, pack, occupancy, server,
                                         np.full(len(client), 1e-9)])
            throughput = np.minimum(1.0 / slowest, in_flight * throughput)
        return {"latency": latency, "throughput": throughput, "server_cost": server,
                "device_cost": client + pack, "accuracy_drop": self.drop,
                "uplink": up}

    def _occupancy(self, up_route, raw_route, packed: np.ndarray, now: float) -> np.ndarray:
        """Seconds the busiest channel of the uplink is occupied per inference."""
        def busiest(route):
            out = np.zeros(len(self.configs))
            for channel in route:
                bandwidth, _ = self.links[channel.name].current(now)
                out = np.maximum(out, channel.switch + self.up_bytes / bandwidth)
            return out

        return np.where(packed, busiest(up_route), busiest(raw_route))
