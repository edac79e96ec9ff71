"""Per-run metrics of split inference: stage times, steady throughput, client energy.

From a finished run's kernel and transfer records, per completed inference
(means over the run):

* ``stage_client_s`` (model kernels on the client), ``stage_packing_s``
  (packing kernels), ``stage_transfer_s`` (time on the network links plus
  their latency) and ``stage_server_s`` (unpacking and model kernels on the
  server);
* ``uplink_bytes`` sent over the network per inference, and the uplink's
  bandwidth at time 0, ``uplink_nominal_mbps`` (Mbit/s; an x axis for sweeps);
* ``steady_throughput_per_s``: inferences per second in steady state
  (:func:`steady_state`): the completions of the window between the warm-up (the
  first quarter of the run, at least ``max_in_flight`` completions: the pipeline
  filling, the scheduler settling, the radio's promotion) and the drain (the last
  ``max_in_flight - 1`` completions, after the last admission, when the backlog
  empties) over the time they span; ``steady_converged`` (1 if the window's two
  halves agree within 5 %, else 0) and ``steady_window`` (completions used); and
  ``steady_latency_s``, the mean latency in that window;
* the client device's energy per inference, split into ``compute``
  (client-kernel share of its processors' active energy), ``packing``
  (packing-kernel share), ``transmission`` (the radio) and ``other`` (base,
  memories, idle units): ``energy_<part>_per_inference_j``. A processor's
  active energy is its energy minus its idle power over its idle unit-time,
  divided between roles by busy unit-seconds. ``energy_client_per_inference_j`` is
  their sum (the client's rails and its modem: what DynO measured) and
  ``energy_system_per_inference_j`` adds the server's (every device's components).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .plan import Where

PACK_MARK, UNPACK_MARKS = ".pack.", (".unpack.", "jpeg_decode")


CONVERGED = 0.05  # the window's halves agree within this (relative)


def _rate(ends: list[float]) -> float:
    """Completions per second between the first and the last of ``ends``."""
    span = ends[-1] - ends[0] if len(ends) > 1 else 0.0
    return (len(ends) - 1) / span if span > 0 else 0.0


def steady_window(n: int, in_flight: int = 1) -> tuple[int, int]:
    """``[first, last)`` completion indices of the steady-state window of a run of ``n``
    inferences with up to ``in_flight`` of them in flight: after the warm-up (a quarter
    of the run, at least ``in_flight`` completions) and before the drain (the last
    ``in_flight - 1`` completions follow the last admission)."""
    first = max(in_flight, n // 4)
    last = n - (in_flight - 1)
    if last - first < 3:  # too short a run: everything but the first completion
        return (min(1, n - 1) if n > 1 else 0), n
    return first, last


def steady_state(iterations: list[tuple[float, float]], in_flight: int = 1
                 ) -> tuple[float, int, bool]:
    """Steady throughput (1/s) of a run's ``(start, end)`` inferences, the number of
    completions it is measured over, and whether it converged (the window's two
    halves within :data:`CONVERGED` of each other)."""
    ends = sorted(end for _, end in iterations)
    if not ends:
        return 0.0, 0, False
    if len(ends) == 1:
        return (1.0 / ends[0] if ends[0] > 0 else 0.0), 1, False
    first, last = steady_window(len(ends), in_flight)
    # the rate counts the intervals after the warm-up's last completion
    window = ends[max(first - 1, 0):last]
    rate = _rate(window)
    half = len(window) // 2
    a, b = _rate(window[:half + 1]), _rate(window[half:])
    converged = len(window) >= 5 and a > 0 and abs(a - b) <= CONVERGED * max(a, b)
    return rate, len(window) - 1, converged


def steady_throughput(iterations: list[tuple[float, float]], in_flight: int = 1) -> float:
    """Steady throughput (1/s): :func:`steady_state`'s rate."""
    return steady_state(iterations, in_flight)[0]


def _roles(kernels: pd.DataFrame, client_procs: set[str]) -> pd.Series:
    labels = kernels["label"].astype(str)
    role = np.where(labels.str.contains(PACK_MARK, regex=False), "packing",
                    np.where(labels.str.contains("|".join(UNPACK_MARKS), regex=True),
                             "server", np.where(kernels["processor"].isin(client_procs),
                                                "client", "server")))
    return pd.Series(role, index=kernels.index)


def run_metrics(result, iterations: list[tuple[float, float]], context, job: str,
                where: Where, links: dict, in_flight: int = 1) -> dict[str, float]:
    """The metrics listed in the module docstring for ``job``."""
    n = len(iterations)
    rate, window, converged = steady_state(iterations, in_flight)
    out: dict[str, float] = {"steady_throughput_per_s": rate,
                             "steady_window": float(window),
                             "steady_converged": float(converged)}
    by_end = sorted(iterations, key=lambda span: span[1])
    if by_end:
        first, last = steady_window(len(by_end), in_flight)
        late = by_end[first:last] or by_end
        out["steady_latency_s"] = float(np.mean([end - start for start, end in late]))
    if n == 0:
        return out
    client_device, _ = context.resolve(where.client.processor)
    client_procs = {context.kernel_processor(local, client_device)
                    for local in context.processors(client_device)}
    kernels = result.kernels[result.kernels["job"] == job]
    busy = (kernels["end_s"] - kernels["start_s"]) * kernels["units"] * kernels["share"]
    roles = _roles(kernels, client_procs)
    for role, name in (("client", "client"), ("packing", "packing"), ("server", "server")):
        mask = roles == role
        out[f"stage_{name}_s"] = float((kernels["end_s"] - kernels["start_s"])[mask].sum() / n)
    transfers = result.transfers[result.transfers["channel"].isin(list(links))]
    delay = sum(links[c].latency_at(end) for c, end in
                zip(transfers["channel"], transfers["end_s"]))
    out["stage_transfer_s"] = float(((transfers["end_s"] - transfers["start_s"]).sum()
                                     + delay) / n)
    uplink = [name for name in links if name.startswith(f"link.{client_device}-")]
    out["uplink_bytes"] = float(transfers.loc[transfers["channel"].isin(uplink),
                                              "bytes"].sum() / n)
    if uplink:
        out["uplink_nominal_mbps"] = links[uplink[0]].bandwidth.at(0.0) * 8e-6
    # client energy by role
    metrics = result.metrics
    prefix = "" if len(context.devices()) == 1 else f"{client_device}."
    makespan = metrics.get("makespan_s", 0.0)
    parts = {"compute": 0.0, "packing": 0.0}
    for local, spec in context.processors(client_device).items():
        energy = metrics.get(f"{prefix}energy_{local}_j", 0.0)
        mine = kernels["processor"] == context.kernel_processor(local, client_device)
        used = float(busy[mine].sum())
        idle = spec.power.idle * max(0.0, spec.units * makespan - used)
        active = max(0.0, energy - idle)
        if used > 0:
            parts["compute"] += active * float(busy[mine & (roles == "client")].sum()) / used
            parts["packing"] += active * float(busy[mine & (roles == "packing")].sum()) / used
    total = sum(value for key, value in metrics.items()
                if key.startswith(f"{prefix}energy_") and key.endswith("_j")
                and key != "energy_per_iteration_j" and (prefix or key != "energy_j"))
    radio = metrics.get(f"{prefix}energy_radio_j", 0.0)
    # the whole system: every device's components (the client's and the server's)
    system = metrics.get("energy_j", total)
    out.update({"energy_compute_per_inference_j": parts["compute"] / n,
                "energy_packing_per_inference_j": parts["packing"] / n,
                "energy_transmission_per_inference_j": radio / n,
                "energy_other_per_inference_j":
                    max(0.0, total - parts["compute"] - parts["packing"] - radio) / n,
                "energy_client_per_inference_j": total / n,
                "energy_system_per_inference_j": system / n})
    return out
