"""The paper's CPU configurations: which cores a framework's thread pool uses, how fast.

``cpu`` names a thread pool as the Mandheling paper does (Table 7):

=========  ==================================================================
``big4``   4 threads on the big cores; on three-cluster SoCs "big" is the
           prime and the gold cores together (SD888: the X1 and three A78).
           A SoC with fewer big cores uses all of them (SD750G: its 2 A77):
           the paper's baselines run on "the big cores".
``big2``   2 threads (SD888: the X1 and one A78)
``big1``   1 thread on the fastest core (the prime core)
``little4``, ``little1``  4 / 1 threads on the little cluster
``all8``   every core
=========  ==================================================================

Threads get equal shares of each operator's work (a framework's thread pool),
so a pool mixing fast and slow cores waits for its slowest thread.
``cpu_freq`` pins the CPU clusters' frequency: ``max`` (performance governor),
``min`` (powersave: the lowest frequency the phone's OS allows, its
``min_frequency`` floor: the paper's "L") or ``governor`` (leave the
experiment's DVFS governor).
"""

from __future__ import annotations

from simulator.engine.dvfs import Performance, Powersave
from simulator.errors import ConfigError
from simulator.params import one_of
from simulator.policy import Placement

CPU_CONFIGS = {"big4": ("big", 4), "big2": ("big", 2), "big1": ("big", 1),
               "little4": ("little", 4), "little1": ("little", 1), "all8": ("all", 8)}
CPU_FREQS = ("max", "min", "governor")
BIG_CLUSTERS = ("prime", "gold", "big")
LITTLE_CLUSTERS = ("silver", "little")
# Work that a thread's share scales; weights are read whole by every thread.
SHARED_COLUMNS = ("flops", "bytes_in", "bytes_out")


# parameter types of the CPU thread pool and its frequency (simulator.params)
CpuConfig = one_of(tuple(CPU_CONFIGS))
CpuFreq = one_of(CPU_FREQS)


def thread_pool(specs: dict, cpu: str, library: str | None) -> list[tuple[Placement, float]]:
    """The pool of configuration ``cpu`` on a SoC's processors ``specs``.

    Returns:
        (placement, share of each operator's work) per cluster used, fastest first.

    Raises:
        ConfigError: the SoC lacks the phone clusters or enough cores.
    """
    kind, threads = CPU_CONFIGS[cpu]
    big = [f"cpu.{c}" for c in BIG_CLUSTERS if f"cpu.{c}" in specs]
    little = [f"cpu.{c}" for c in LITTLE_CLUSTERS if f"cpu.{c}" in specs]
    if not big or not little:
        raise ConfigError(f"CPU configuration {cpu!r} needs a phone's clusters "
                          f"(prime/gold/silver or big/little); this SoC has "
                          f"{', '.join(n for n in specs if n.startswith('cpu.'))}", path="cpu")
    order = {"little": little, "big": big, "all": big + little}[kind]
    if kind == "big":
        threads = min(threads, sum(specs[name].units for name in big))
    parts, left = [], threads
    for name in order:
        take = min(left, specs[name].units)
        if take:
            parts.append((Placement(name, take, library=library), take / threads))
        left -= take
    if left:
        raise ConfigError(f"CPU configuration {cpu!r} needs {threads} cores; this SoC has "
                          f"{threads - left} of that kind", path="cpu")
    return parts


def pin_frequency(context, device: str, cpu_freq: str) -> None:
    """Set every CPU cluster of ``device`` to ``cpu_freq`` (``governor``: leave it)."""
    if cpu_freq == "governor":
        return
    for local in context.processors(device):
        if local.startswith("cpu."):
            governor = Performance() if cpu_freq == "max" else Powersave()
            context.pin_governor(local, governor, device)


def thread_share(record: dict, fraction: float) -> dict:
    """One thread's part of a kernel: ``fraction`` of its work, the whole weights."""
    part = dict(record)
    for column in SHARED_COLUMNS:
        part[column] = record[column] * fraction
    return part


def pool_duration(context, job, record: dict, pool: list[tuple[Placement, float]]) -> float:
    """Seconds of one kernel on a thread pool at top OPPs: its slowest thread."""
    return max(context.duration(job, thread_share(record, fraction), placement.processor,
                                placement.units, placement.library)
               for placement, fraction in pool)
