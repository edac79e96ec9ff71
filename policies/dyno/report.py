"""Per-run metrics of split inference: stage times, steady throughput, client energy.

From a finished run's kernel and transfer records, per completed inference
(means over the run):

* ``stage_client_s`` (model kernels on the client), ``stage_packing_s``
  (packing kernels), ``stage_transfer_s`` (time on the network links plus
  their latency) and ``stage_server_s`` (unpacking and model kernels on the
  server);
* ``uplink_bytes`` sent over the network per inference, and the uplink's
  bandwidth at time 0, ``uplink_nominal_mbps`` (Mbit/s; an x axis for sweeps);
* ``steady_throughput_per_s``: inferences per second over the second half of
  the run (after the pipeline has filled and the scheduler has settled): the
  completions after the middle one over the time since it; and
  ``steady_latency_s``, the mean latency of that second half (without the
  first inferences' radio promotion, say);
* the client device's energy per inference, split into ``compute``
  (client-kernel share of its processors' active energy), ``packing``
  (packing-kernel share), ``transmission`` (the radio) and ``other`` (base,
  memories, idle units): ``energy_<part>_per_inference_j``. A processor's
  active energy is its energy minus its idle power over its idle unit-time,
  divided between roles by busy unit-seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .plan import Where

PACK_MARK, UNPACK_MARKS = ".pack.", (".unpack.", "jpeg_decode")


def steady_throughput(iterations: list[tuple[float, float]]) -> float:
    """Inferences per second over the second half of the run: the completions after
    the middle one over the time since it (whole run with fewer than 4)."""
    ends = sorted(end for _, end in iterations)
    if len(ends) < 4:
        return float(len(ends) / ends[-1]) if ends and ends[-1] > 0 else 0.0
    middle = len(ends) // 2 - 1
    span = ends[-1] - ends[middle]
    return (len(ends) - 1 - middle) / span if span > 0 else 0.0


def _roles(kernels: pd.DataFrame, client_procs: set[str]) -> pd.Series:
    labels = kernels["label"].astype(str)
    role = np.where(labels.str.contains(PACK_MARK, regex=False), "packing",
                    np.where(labels.str.contains("|".join(UNPACK_MARKS), regex=True),
                             "server", np.where(kernels["processor"].isin(client_procs),
                                                "client", "server")))
    return pd.Series(role, index=kernels.index)


def run_metrics(result, iterations: list[tuple[float, float]], context, job: str,
                where: Where, links: dict) -> dict[str, float]:
    """The metrics listed in the module docstring for ``job``."""
    n = len(iterations)
    out: dict[str, float] = {"steady_throughput_per_s": steady_throughput(iterations)}
    by_end = sorted(iterations, key=lambda span: span[1])
    late = by_end[len(by_end) // 2:]
    if late:
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
    out.update({"energy_compute_per_inference_j": parts["compute"] / n,
                "energy_packing_per_inference_j": parts["packing"] / n,
                "energy_transmission_per_inference_j": radio / n,
                "energy_other_per_inference_j":
                    max(0.0, total - parts["compute"] - parts["packing"] - radio) / n,
                "energy_client_per_inference_j": total / n})
    return out
