"""CPU-DSP co-scheduling: the Mandheling dynamic programme over the topological order.

Each operator ``i`` (in topological order) has a profiled latency on the CPU
and on the DSP (infinite where the DSP cannot run it: FP32-only operators
such as normalisation or quantisation, unsupported op kinds); moving from
one processor to the other between ``i`` and ``i+1`` costs ``switch[i]``::

    T[1, CPU] = L1_CPU                 T[1, DSP] = L1_DSP
    T[i+1, CPU] = min(T[i, CPU] + L_{i+1}^CPU,  T[i, DSP] + L_{i+1}^CPU + switch[i])
    T[i+1, DSP] = min(T[i, CPU] + L_{i+1}^DSP + switch[i],  T[i, DSP] + L_{i+1}^DSP)
    T_model = min(T[N, CPU], T[N, DSP])

Back-pointers give the placement. The policy's chain is of *units*
(:mod:`.units`): an operator, or a rescaling site whose operator, ReduceMax
and Shift move together, so the placement it optimises is the one it runs.
Without co-scheduling (the ablation's
starting point) every operator the DSP can run goes there, as a framework's
DSP delegate would do (:func:`dsp_first`).
"""

from __future__ import annotations

import math

from simulator.errors import ConfigError

CPU, DSP = "cpu", "dsp"


def co_schedule(cpu: list[float], dsp: list[float], switch: list[float]) -> list[str]:
    """The placement minimising the chain's latency.

    Args:
        cpu: seconds of each operator on the CPU (inf: cannot run there).
        dsp: seconds on the DSP (inf: cannot run there).
        switch: seconds to change processor between operator ``i`` and ``i + 1``
            (one fewer than the operators).

    Returns:
        ``"cpu"`` or ``"dsp"`` per operator.

    Raises:
        ConfigError: an operator runs on neither processor.
    """
    n = len(cpu)
    if n == 0:
        return []
    t_cpu, t_dsp = [0.0] * n, [0.0] * n
    from_cpu, from_dsp = [CPU] * n, [DSP] * n  # where the best path to (i, X) came from
    t_cpu[0], t_dsp[0] = cpu[0], dsp[0]
    for i in range(1, n):
        s = switch[i - 1]
        stay, move = t_cpu[i - 1] + cpu[i], t_dsp[i - 1] + cpu[i] + s
        t_cpu[i], from_cpu[i] = (stay, CPU) if stay <= move else (move, DSP)
        stay, move = t_dsp[i - 1] + dsp[i], t_cpu[i - 1] + dsp[i] + s
        t_dsp[i], from_dsp[i] = (stay, DSP) if stay <= move else (move, CPU)
        if math.isinf(t_cpu[i]) and math.isinf(t_dsp[i]):
            raise ConfigError(f"operator {i} of the training step runs on neither the CPU "
                              "nor the DSP")
    where = CPU if t_cpu[-1] <= t_dsp[-1] else DSP
    out = [where] * n
    for i in range(n - 1, 0, -1):
        where = from_cpu[i] if where == CPU else from_dsp[i]
        out[i - 1] = where
    return out


def dsp_first(dsp: list[float]) -> list[str]:
    """Every operator the DSP can run on the DSP, the rest on the CPU."""
    return [CPU if math.isinf(d) else DSP for d in dsp]


def chain_latency(placement: list[str], cpu: list[float], dsp: list[float],
                  switch: list[float]) -> float:
    """Seconds of the chain under ``placement`` (the DP's objective)."""
    total = 0.0
    for i, where in enumerate(placement):
        total += cpu[i] if where == CPU else dsp[i]
        if i and where != placement[i - 1]:
            total += switch[i - 1]
    return total
