"""A device at run time: processors, DVFS, power integration and thermal state.

The sampler (a chain of SimPy events, see Device._aim) wakes on the grid of
thermal steps, but only at the steps where something happens: a periodic DVFS
governor decides, the thermal governor polls (at least that often the leakage's
temperature is refreshed, trip points or not) or a time-series sample is due.
Power and heat are integrated *lazily*, at those polls and samples and at
power-change points between them (an OPP change more than a step after the last
integration, a pause, the end): it collects each processor's exact energy
integrals, adds leakage (temperature-dependent, at the interval's start), idle,
DRAM and base power, and steps the RC network exactly for the interval's mean
power (a propagator per length, cached). A governor's wake in between reads only
its processor's busiest-core time. With a sample every step (the default 10 ms)
every wake integrates: the old fixed tick, bit for bit. Kernel events never
touch numpy, which keeps the engine fast. A device with flash storage
(``storage:`` in the SoC file) adds its read/write energy as the ``storage``
component (:mod:`simulator.engine.storage`).

While a job fast-forwards (:mod:`simulator.engine.fast_forward`) the sampler
takes ``stride`` base steps at a time and integrates at every one (exact for
the constant power of a replayed iteration; governor periods, thermal polls and
samples still fall on their base-step boundaries) and, with ``replaying`` set,
the DVFS governors keep their OPPs: the memoised iteration already holds their
behaviour.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from functools import reduce
from itertools import repeat
from operator import add, sub, truediv

import numpy as np
import simpy

from ..hardware.cost import CostModel
from ..spec.soc import SocSpec
from .dvfs import FrequencyDomain, Governor
from .links import BandwidthSchedule, Channel
from .processor import _NO_HOLD, Processor, Task
from .queued_event import NORMAL as _NORMAL
from .queued_event import URGENT as _URGENT
from .queued_event import QueuedEvent
from .storage import Storage
from .thermal import StepWiseGovernor, ThermalNetwork

# The most time-series samples a device keeps (each ~26 values on a phone, 12
# bytes a value and 16 a sample while running): ~5 MB. A run with more (164 s at the default 10 ms
# period, 45 h at 10 s) keeps every 2nd, 4th, ... sample instead (Device._halve):
# a long run's memory stays flat, and its series still integrates to its energy.
_MAX_SAMPLES = 2**14
# Integration lengths whose quiet-processor plan is kept (Device._quiet_plan)
_PLAN_CACHE = 64
# Samples kept as raw values before they go to the columns together (Device._flush):
# 8 bytes a value (~0.2 kB a phone's sample); a larger block amortises numpy's
# per-call cost no further (a choice, not a measured optimum)
_PENDING = 256


class Device:
    """Run-time state of one device.

    Args:
        env: the SimPy environment.
        name: device name ("phone", "server", ...).
        spec: the device description.
        governors: a governor for every processor (dotted name -> Governor).
        record_task: receives each finished task.
        record_transfer: receives each channel transfer.
        prefix: prepended to processor names on multi-device systems ("server:").
        initial_temperature: starting temperature of all nodes (°C), ambient if None.
        thermal_governor: whether trip points cap frequencies.
        sample_every: record time-series samples every this many thermal steps.
        slowdown: factor stretching every kernel's time (a slower device of the
            same kind, see :class:`~simulator.hardware.cost.CostModel`).
        keep_samples: keep the time series (False when the run writes neither it
            nor a timeline, whose counters are drawn from it: the sampler still
            integrates at every sample step, so energy and temperatures are the
            same, and keeps no sample).
    """

    def __init__(self, env: simpy.Environment, name: str, spec: SocSpec,
                 governors: dict[str, Governor],
                 record_task: Callable[[Processor, Task, float], None],
                 record_transfer: Callable | None = None, prefix: str = "",
                 initial_temperature: float | None = None, thermal_governor: bool = True,
                 sample_every: int = 1, slowdown: float = 1.0, keep_samples: bool = True):
        self.env = env
        self.name = name
        self.spec = spec
        self.prefix = prefix
        self.cost_model = CostModel.shared(spec, slowdown)
        self.radios: list = []  # radio interfaces (simulator.network.radio.Radio)
        self.thermal = ThermalNetwork(spec.thermal, initial_temperature)
        self.step = spec.thermal.step
        self.domains: dict[str, FrequencyDomain] = {}
        self.processors: dict[str, Processor] = {}
        self.channels: dict[str, Channel] = {}
        for local, pspec in spec.processors().items():
            domain = FrequencyDomain(prefix + local, pspec.opps, pspec.min_frequency)
            self.domains[local] = domain
            self.processors[local] = Processor(env, prefix + local, pspec, domain, record_task)
            if pspec.offload is not None:
                self.channels[local] = Channel(
                    env, f"{prefix}{local}.offload",
                    BandwidthSchedule.constant(pspec.offload.bandwidth),
                    switch=pspec.offload.switch, record=record_transfer)
        self.governors = governors
        self._governor_every = {}
        for local, governor in governors.items():
            governor.start(self.domains[local])
            if governor.period > 0:
                self._governor_every[local] = max(1, round(governor.period / self.step))
        self._periodic: list = []  # (local, ticks per period, domain, governor, processor)
        self._update_periodic()
        self._domain_items = list(self.domains.items())
        self._util_busy = {local: 0.0 for local in self.processors}
        self._util_time = {local: 0.0 for local in self.processors}
        self.trip_governor = (StepWiseGovernor(spec.thermal.trips, self.domains, self.thermal)
                              if thermal_governor and spec.thermal.trips else None)
        self._poll_every = max(1, round(spec.thermal.poll / self.step))
        self._node_of = {local: self.thermal.index[p.thermal_node]
                         for local, p in spec.processors().items()}
        self._board = self.thermal.index[spec.thermal.board_node]
        self.sample_every = max(1, sample_every)
        self.keep_samples = keep_samples
        self.components = [*self.processors, "dram", "memory_idle", "base"]
        # flash storage (model loading, page-in/page-out): its own energy component
        self.storage = (Storage(env, spec.storage, prefix, record_transfer)
                        if spec.storage is not None else None)
        if self.storage is not None:
            self.components.append("storage")
            if spec.storage.load_bandwidth is not None:
                self.components.append("model_load")
        self.energy = dict.fromkeys(self.components, 0.0)  # J, cumulative
        # The time series as columns (name, value per value; time per sample), grown
        # per sample and turned into a table once (:meth:`sample_columns`): 12 bytes
        # a value (the name as a code into a table of labels) and 16 a sample, where
        # a (time, name, value) tuple per value cost ~110 (a long run's samples are
        # most of its memory).
        self._sample_times = array("d")  # s, one per sample
        self._sample_codes = array("I")  # index into self._labels, one per value
        self._sample_values = array("d")
        # Bounded: at most _MAX_SAMPLES samples are kept; past that, neighbours are
        # merged in pairs and only every ``_sample_skip``-th due sample is taken
        # (:meth:`_halve`), so a long run's series costs the same as a shorter one's.
        self._sample_starts = array("q")  # offset of each sample's first value
        self._sample_skip = 1
        self._samples_due = 0
        # samples not yet in the columns: their temperatures (°C) and levels (Hz),
        # cumulative energies (J) and times (s), and the energies and time of the
        # sample before them (see _flush)
        self._unflushed_heads = array("d")  # temperatures and levels, per sample
        self._unflushed_joules = array("d")  # cumulative energy per component
        self._unflushed_times = array("d")  # s
        self._unflushed_base: tuple[list, float] = ([], 0.0)
        self._labels: list[str] = []
        self._label_codes: dict[str, int] = {}
        self.peak = self.thermal.temperatures.copy()
        self.min_frequency = {local: d.frequency for local, d in self.domains.items()}
        for local, domain in self._domain_items:
            domain.listeners.append(self._frequency_listener(local, domain))
            domain.level_watchers.append(self._levels_changed)
        self._levels: list[float] | None = None  # levels() until a domain changes
        self._last_time = env.now  # s: the last integration of power and heat
        self._ticks = 0  # base thermal steps up to the last wake
        self._tick_time = env.now  # s: the last wake (a base-step boundary)
        self._int_ticks = 0  # base steps up to the last integration on a boundary
        self._settled = False  # the last integration was off the base-step grid
        # When a governor last took its processor's busiest-core time between
        # two integrations (local -> s): its signal's period starts there.
        self._took: dict[str, float] = {}
        self._next = None  # the sampler's pending wake (_aim), None once stale
        self._waiting = False  # the sampler waits for its next wake
        self._pending = 0  # base steps from the last wake to the one it waits for
        self._temps = self.thermal.temperatures  # °C at the last integration
        self._temps_list = self._temps.tolist()  # the same, as a list
        self._temps_of = self.thermal.theta  # the theta they are of
        self.stride = 1  # base thermal steps per sampler tick (fast-forward)
        self._paused_stride = False  # a pause strides (begin_pause)
        self.replaying = False  # DVFS governors hold their OPPs (fast-forward)
        # Fast-forward's steady-state watch: called after every tick with the node
        # power (W) and temperatures (°C) of that tick; None without fast-forward.
        self.tick_hook: Callable[[np.ndarray, np.ndarray], None] | None = None
        # What every tick reads, looked up once: the tick runs every thermal step,
        # and attribute lookups and label formatting were most of its cost.
        self._tick_table = [(index, local, proc, proc.spec.units, proc.spec.power,
                             self.domains[local], self._node_of[local])
                            for index, (local, proc) in enumerate(self.processors.items())]
        # table indices of each thermal node's processors (in table order)
        self._node_members: dict[int, list[int]] = {}
        for index, *_, node in self._tick_table:
            self._node_members.setdefault(node, []).append(index)
        self._quiet_plans: dict[float, tuple] = {}  # dt (s) -> _quiet_plan(dt)
        self._calm: dict[float, tuple] = {}  # dt (s) -> a calm device's _collect(dt)
        self._procs = [row[2] for row in self._tick_table]
        self._temp_codes = [self._code(f"{prefix}temp.{name}") for name in self.thermal.names]
        self._domain_labels = [(f"{prefix}freq.{local}", f"{prefix}cap.{local}", domain)
                               for local, domain in self.domains.items()]
        self._level_codes = [self._code(label) for freq_label, cap_label, _domain
                             in self._domain_labels for label in (freq_label, cap_label)]
        self._power_codes: dict[str, int] = {}
        self._power_total_code = self._code(f"{prefix}power.total")
        # a sample's name codes: temperatures and levels, then (see _layout) powers
        self._head_codes = array("I", self._temp_codes + self._level_codes)
        self._layout_codes = self._head_codes
        self._layout_size = -1  # components in _layout_codes (none yet)
        self._dram_energy_per_byte = spec.memory["dram"].energy_per_byte  # J/B
        self._base_power = spec.power.base  # W
        # W, summed once in the order the tick used to sum it (the same float)
        self._memory_idle = sum(m.idle for m in spec.memory.values())
        self._sampled_at = env.now  # s: the previous sample (power is a mean since then)
        # J per component at that sample, and the components (the layout's order)
        self._sampled_joules = list(self.energy.values())
        self._sampled_names = list(self.energy)
        self._record_sample()

    # -- power ------------------------------------------------------------
    def _collect(self, dt: float) -> tuple[dict[str, float], np.ndarray]:
        """Energy per component over the last ``dt`` seconds and power per node
        (neither to be changed: a calm device's are kept and returned again)."""
        util_time, took = self._util_time, self._took
        # Every processor's utilisation time grows by the period (its governor's
        # signal runs from its own take if it took one since the last integration)
        if took:
            now = self.env.now
            for local in util_time:
                since = took.pop(local, None)
                util_time[local] += dt if since is None else now - since
        else:  # one addition per processor, as the loop above, in C
            util_time.update(list(zip(util_time, map(add, util_time.values(),
                                                     repeat(dt)))))
        if self.storage is None and not self.radios:
            for proc in self._procs:
                if proc.stirred:
                    break
            else:
                # Calm: no processor stirred, nothing else drawing. The lines below
                # then depend on ``dt`` alone (a quiet processor's lines are its
                # plan's, and temperatures only enter through a stirred one's
                # leakage): computed by them once per length, the same floats.
                # (An idle server beside a busy client spends whole runs so.)
                calm = self._calm.get(dt)
                if calm is None:
                    if len(self._calm) >= _PLAN_CACHE:  # bounded, as _quiet_plans
                        self._calm.clear()
                    calm = self._calm[dt] = self._lines(dt)
                    calm[1].flags.writeable = False  # shared: read, never changed
                return calm
        return self._lines(dt)

    def _lines(self, dt: float) -> tuple[dict[str, float], np.ndarray]:
        """:meth:`_collect` past the utilisation times: each processor's, the memory's,
        the base's, the radios' and the storage's energy (J) over ``dt`` s, and the
        mean power (W) per node."""
        thermal = self.thermal
        if self._temps_of is thermal.theta:  # the last integration's (theta unchanged)
            temps = self._temps_list
        else:
            temps = thermal.temperatures.tolist()
        # What every processor contributes if quiet (see _quiet_plan); the stirred
        # ones overwrite their part below.
        quiet_energy, quiet_power, quiet_nodes = (self._quiet_plans.get(dt)
                                                  or self._quiet_plan(dt))
        energy = quiet_energy.copy()
        powers = None  # W per processor once one is stirred, else quiet_power
        touched = []  # nodes of stirred processors
        dram_bytes = 0.0
        util_busy = self._util_busy
        # Quiet processors are left out below: their integrals are exact zeros, and
        # the lines below with zero integrals come to the plan's energy and power
        # (adding 0.0 to the DRAM bytes and the utilisation changes nothing). Their
        # integrals are not settled to now: at zero rates a later settle adds 0.0.
        for index, local, proc, units, power, domain, node in self._tick_table:
            if not proc.stirred:
                continue
            integrals = proc.take_integrals()  # (clears stirred once it is quiet)
            dynamic, busy_time, core_busy, dram = integrals
            dram_bytes += dram
            if dt > 0:
                busy = busy_time / dt
                if units < busy:  # min(busy, units), as cheap comparisons
                    busy = units
            else:
                busy = 0.0
            leak = 0.0
            if power.leakage != 0 and busy != 0.0:
                # leakage per powered unit at the domain's voltage and the node's
                # temperature (an idle processor leaks nothing: ``leak * 0.0`` is
                # 0.0, so its power-of-two is not computed)
                voltages = domain.voltages  # domain.voltage, without the property
                leak = power.leakage * (voltages[domain.index] / voltages[-1]) * 2.0 ** (
                    (temps[node] - power.leakage_reference) / power.leakage_doubling)
                leak *= busy
            idle = power.idle * (units - busy)
            joules = dynamic + (leak + idle) * dt
            energy[local] = joules
            if powers is None:
                powers = quiet_power.copy()
            powers[index] = joules / dt if dt > 0 else 0.0
            touched.append(node)
            util_busy[local] += core_busy
        node_power = quiet_nodes.copy()
        for node in touched:
            # a node's processors summed in table order from 0.0, as the tick did
            watts = 0.0
            for index in self._node_members[node]:
                watts += powers[index]
            node_power[node] = watts
        if self.storage is not None:
            now = self.env.now
            energy["storage"] = self.storage.energy(now - dt, now)
            dram_bytes += self.storage.dram_bytes()
            if "model_load" in self.energy:
                energy["model_load"] = self.storage.load_energy(now - dt, now)
        dram = energy["dram"] = dram_bytes * self._dram_energy_per_byte
        memory_idle = energy["memory_idle"] = self._memory_idle * dt
        base = energy["base"] = self._base_power * dt
        if self.radios:
            now = self.env.now
            energy["radio"] = sum(radio.energy(now - dt, now) for radio in self.radios)
        if dt > 0:
            node_power[self._board] += (dram + memory_idle + base + energy.get("radio", 0.0)
                                        + energy.get("storage", 0.0)
                                        + energy.get("model_load", 0.0)) / dt
        return energy, np.array(node_power)

    def _quiet_plan(self, dt: float) -> tuple[dict[str, float], list[float], list[float]]:
        """What the processors contribute over ``dt`` s when all are quiet: energy
        (J, :meth:`_collect`'s lines with zero integrals, the same operations),
        power (W) per processor in table order and per node (summed in table
        order from 0.0). Cached per length: a run integrates over a few lengths
        (a base step, the lazy sampler's gaps), and most processors are quiet at
        most integrations."""
        energy, power = {}, []
        for _index, local, _proc, units, spec_power, _domain, _node in self._tick_table:
            busy = 0.0
            joules = 0.0 + (0.0 + spec_power.idle * (units - busy)) * dt
            energy[local] = joules
            power.append(joules / dt if dt > 0 else 0.0)
        nodes = [0.0] * len(self.thermal.names)
        for row, watts in zip(self._tick_table, power):
            nodes[row[6]] += watts
        if len(self._quiet_plans) >= _PLAN_CACHE:  # bounded: lengths off the grid vary
            self._quiet_plans.clear()
        plan = self._quiet_plans[dt] = (energy, power, nodes)
        return plan

    def attach_radio(self, radio) -> None:
        """Add a radio interface; its energy becomes the ``radio`` component
        (heating the board node)."""
        if not self.radios:
            self.components.append("radio")
            self.energy["radio"] = 0.0
        self.radios.append(radio)

    # -- the sampler --------------------------------------------------------
    # The sampler wakes at the base thermal steps where something observes or
    # changes the device's state (see :meth:`_due`) and integrates power and heat
    # up to there when it must (``stride`` steps at a time while fast-forwarding).
    # It was a SimPy process; it is now a chain of its own events pushed onto
    # SimPy's queue (as kernel completions are, see queued_event), at the same
    # times, priorities and places in the queue as the process's events were
    # (its start and a re-aim: URGENT now, like SimPy's Initialize and Interruption;
    # a wake: NORMAL after the delay, like its Timeout): the same run, without a
    # generator resumed through SimPy's Process per wake.

    def start(self) -> None:
        """Start the sampler (as ``env.process`` would: an urgent event now)."""
        self._push(_URGENT, 0.0, _aim, 0)

    def _push(self, priority: int, delay: float, callback, steps: int) -> _SamplerEvent:
        """Queue a sampler event ``delay`` seconds from now (see queued_event)."""
        env = self.env
        event = _SamplerEvent(env, env._now + delay, priority, callback)
        event.device, event.steps = self, steps
        return event

    def _aim(self) -> None:
        """Schedule the next wake (the old sampler loop's head)."""
        now = self.env._now
        if (now == self._tick_time and self.stride == 1 and self.tick_hook is None
                and (self._every_step or self.sample_every == 1)):
            # what _due and the lines below come to when the next step is due (the
            # default): one step (``step * 1`` is ``step``)
            self._waiting, self._pending = True, 1
            self._next = self._push(_NORMAL, self.step, _woken, 1)
            return
        steps = self._due()
        if now == self._tick_time:
            delay = self.step * steps  # the old tick's own sum, for the same float times
        else:  # rescheduled mid-step: aim at the grid point
            delay = self._tick_time + self.step * steps - now
        self._waiting, self._pending = True, steps
        self._next = self._push(_NORMAL, delay if delay > 0.0 else 0.0, _woken, steps)

    def reschedule(self) -> None:
        """The next wake may have moved earlier (a periodic governor was set, a
        pause ended while fast-forward's long step was pending): aim at it now
        rather than after the pending step (governor decisions and trip polls
        must not wait for it)."""
        if self._waiting and self._due() < self._pending:  # (else the same wake: keep
            self._next = None  # its time to the last bit) the pending wake goes stale
            self._waiting = False  # one re-aim is enough
            self._push(_URGENT, 0.0, _aim, 0)

    @property
    def lazy(self) -> bool:
        """Whether the sampler skips the base steps that would only integrate
        (off while fast-forward watches every step or strides over them)."""
        return self.stride == 1 and self.tick_hook is None

    def _due(self) -> int:
        """Base steps from the last wake to the next one: ``stride`` while
        fast-forward drives the sampler; otherwise the next step at which a
        periodic governor decides, a thermal poll falls (the trip governor's,
        and at least that often the leakage's temperature is refreshed) or a
        sample is taken. Steps that only integrate are skipped: the RC step over
        several base steps is exact for their mean power (one cached matrix
        exponential per length). After a reschedule, the next step not yet past."""
        ticks = self._ticks
        passed = 0
        if self.env.now != self._tick_time:
            # + 1e-9: float rounding of a whole number of steps
            passed = int((self.env.now - self._tick_time) / self.step + 1e-9)
        if not self.lazy:
            return max(self.stride, passed + 1)
        if self.sample_every == 1 or self._every_step:  # the default: the next step
            return passed + 1
        base = ticks + passed
        due = (base // self._poll_every + 1) * self._poll_every
        every = self.sample_every
        if (base // every + 1) * every < due:
            due = (base // every + 1) * every
        for _local, every, _domain, _governor, _proc in self._periodic:
            if (base // every + 1) * every < due:
                due = (base // every + 1) * every
        return due - ticks

    def _wake(self, steps: int) -> None:
        """A wake ``steps`` base steps after the previous one: integrate if a poll,
        a sample or fast-forward needs the state, then run what is due."""
        now = self.env._now  # env.now without the property (every wake)
        before = self._ticks
        ticks = self._ticks = before + steps
        self._tick_time = now
        poll = self._poll_every
        polled = ticks // poll > before // poll
        sampled = ticks // self.sample_every > before // self.sample_every
        hook = self.tick_hook
        node_power = None
        if polled or sampled or self.stride != 1 or hook is not None:  # (not self.lazy)
            node_power = self._integrate()
        util_busy, util_time, took = self._util_busy, self._util_time, self._took
        idle_kept = self._idle_kept
        for local, every, domain, governor, proc in self._periodic:
            if every == 1 or ticks // every > before // every:
                if self._last_time != now:
                    # not integrated (yet: an OPP change integrates): this governor's
                    # signal alone, its processor's other integrals wait for _collect
                    # (a quiet processor's is 0.0: take_core_busy's test, inlined)
                    if proc.running or proc.max_core_busy != 0.0 or proc._held is not _NO_HOLD:
                        util_busy[local] += proc.take_core_busy()
                    elif util_busy[local] == 0.0:
                        # idle all period: the lines below come to a utilisation of
                        # exactly 0.0 (0.0 over a positive time), whatever the time
                        took[local] = now
                        util_time[local] = 0.0
                        if not self.replaying and idle_kept[local] != domain.version:
                            self._idle_update(local, domain, governor)
                        continue
                    util_time[local] += now - took.get(local, self._last_time)
                    took[local] = now
                busy = util_busy[local]
                if busy == 0.0:  # idle all period (most processors at most wakes):
                    # a utilisation of 0.0, what the division below comes to whatever
                    # the time
                    util_time[local] = 0.0
                    if not self.replaying and idle_kept[local] != domain.version:
                        self._idle_update(local, domain, governor)
                    continue
                time_ = util_time[local]
                util = busy / (1e-15 if 1e-15 > time_ else time_)  # max(time_, 1e-15)
                util_busy[local] = util_time[local] = 0.0
                if not self.replaying:
                    governor.update(domain, util)
        if self.trip_governor is not None and polled:
            self.trip_governor.poll()
        if sampled or hook is not None:
            # the temperatures _integrate computed, unless it did not run at this wake
            temps = self._temps if self._last_time == now else self.thermal.temperatures
            if sampled:
                self._record_sample(temps)
            if hook is not None:  # a watched device is not lazy: it integrated above
                hook(node_power, temps)

    def _idle_update(self, local: str, domain: FrequencyDomain, governor: Governor) -> None:
        """A governor's decision at a utilisation of 0.0. If it left the domain as
        it was and the governor decides from the domain alone, the same decision
        would again while the domain's ``version`` stays: :meth:`_wake` skips it
        until then (most processors idle at most wakes, their governors' repeated
        decisions were a call each)."""
        version = domain.version
        governor.update(domain, 0.0)
        if domain.version == version and type(governor).__dict__.get("decides_from_domain"):
            self._idle_kept[local] = version

    def _integrate(self) -> np.ndarray:
        """Account energy and heat from the last integration up to now: exactly
        the old tick's step when now is a base-step boundary and the last
        integration was one too (``steps`` base steps at their mean power, a
        cached propagator), otherwise an exact step of any length. Returns the
        mean node power (W) over it."""
        now = self.env._now
        thermal = self.thermal
        if self._settled or now != self._tick_time:
            dt = now - self._last_time
            energy, node_power = self._collect(dt)
            if dt > 0:
                thermal.advance_exact(node_power, dt)
            # off the grid: the next integration on it is exact as well
            self._settled = now != self._tick_time
        else:
            steps = self._ticks - self._int_ticks
            dt = self.step * steps
            energy, node_power = self._collect(dt)
            thermal.advance(node_power, steps)
        if now == self._tick_time:
            self._int_ticks = self._ticks
        totals = self.energy
        for name, joules in energy.items():
            totals[name] += joules
        self._last_time = now
        temps = self._temps = thermal.temperatures
        # as a list too, for the next _collect and a sample (valid while theta is this)
        self._temps_list, self._temps_of = temps.tolist(), thermal.theta
        np.maximum(self.peak, temps, out=self.peak)
        return node_power

    def settle(self) -> None:
        """Account energy and heat from the last integration up to now: a
        power-change point between two wakes (a pause starts or ends, fast-forward
        ends a replayed block), so that what follows is accounted apart. The step
        is exact (its own matrix exponential, cached per length)."""
        if self.env.now - self._last_time <= 0:
            return
        self._integrate()

    def begin_pause(self, stride: int | None = None) -> None:
        """A job's pause starts now: account what came before apart from it. With
        ``stride`` (fast-forward's long step) the sampler takes that many base
        steps at a time while the device idles (exact for its constant power),
        still waking for every governor period and thermal poll."""
        if stride is None:  # a lazy sampler may be a poll period behind (catch_up)
            self.catch_up()
            return
        self.settle()  # the active time's energy, up to now (a step may be pending)
        self.stride = stride
        self.reschedule()  # its polls come every poll period, not after a long step
        self._paused_stride = True

    def end_pause(self) -> None:
        """The pause :meth:`begin_pause` started ends now: its energy is settled
        apart, and a long sampler step still pending is cut short (the governors
        and trip polls of what follows wait for no long step)."""
        if not self._paused_stride:
            self.catch_up()
            return
        self.settle()
        self.stride = 1
        self.reschedule()
        self._paused_stride = False

    def catch_up(self) -> None:
        """:meth:`settle` if the device is more than one base step behind: a
        lazy sampler may be a whole poll period behind at a power-change point
        (a pause, an OPP change); one step behind is what the 10 ms tick always
        allowed (its step's leakage at the voltage at its end)."""
        if self.env.now - self._last_time > self.step * (1 + 1e-9):  # float rounding
            self._integrate()

    def _frequency_listener(self, local: str, domain: FrequencyDomain):
        """Domain listener: an OPP change is a power-change point (the leakage's
        voltage: a lazy sampler integrates up to it) and the new frequency is one
        the run used (``min_frequency``, also when it lasts less than a step)."""
        min_frequency = self.min_frequency

        def listener(before: bool) -> None:
            if before:
                if self.lazy:  # fast-forward settles its own change points
                    self.catch_up()
                return
            # FrequencyDomain._apply is the only writer of ``index``: every OPP the
            # run uses passes here
            frequency = domain.frequencies[domain.index]
            if frequency < min_frequency[local]:
                min_frequency[local] = frequency
        return listener

    def set_governor(self, local: str, governor) -> None:
        """Replace the DVFS governor of processor ``local`` (a policy pinning
        frequencies, e.g. a framework's CPU setting) and start it."""
        self.governors[local] = governor
        governor.start(self.domains[local])
        self._governor_every.pop(local, None)
        if governor.period > 0:
            self._governor_every[local] = max(1, round(governor.period / self.step))
        self._update_periodic()
        self.reschedule()  # a lazy sampler's next wake may be past this governor's

    def _update_periodic(self) -> None:
        """The periodic governors as the tick walks them (in ``_governor_every``'s order)."""
        self._periodic = [(local, every, self.domains[local], self.governors[local],
                           self.processors[local])
                          for local, every in self._governor_every.items()]
        # a governor decides every base step (schedutil's 10 ms): the sampler wakes at each
        self._every_step = 1 in self._governor_every.values()
        # the domain version at which each governor's idle decision changed nothing
        # (see _idle_update; -1: none yet, as after a governor is replaced)
        self._idle_kept = dict.fromkeys(self._governor_every, -1)

    def dvfs_state(self) -> tuple:
        """What fast-forward keys on: every domain's thermal cap index, and its OPP
        index unless a periodic (utilisation-driven) governor moves it: those
        moves are part of what an iteration does, not a state it runs in."""
        periodic = self._governor_every
        return tuple((domain.cap, None if local in periodic else domain.index)
                     for local, domain in self.domains.items())

    def finish(self) -> None:
        """Account the time since the last integration (keeps energy exact) and
        take a last sample (also when the run ends on a tick that took none: the
        time series must integrate to the energy; it did not, a bug fixed in
        issue 21)."""
        if self.env.now - self._last_time <= 0:
            if self._sampled_at < self.env.now:
                self._record_sample(force=True)
            return
        self._integrate()
        self._record_sample(force=True)

    def levels(self) -> list[float]:
        """Every domain's frequency and cap (Hz), interleaved, in sample order (a
        new list)."""
        return self._level_values().copy()

    def _level_values(self) -> list[float]:
        """:meth:`levels`, kept (not to be changed) between OPP and cap changes,
        which are rarer than samples."""
        if self._levels is None:
            values = []
            for _freq_label, _cap_label, domain in self._domain_labels:
                values.append(domain.frequencies[domain.index])
                values.append(domain.frequencies[domain.cap])
            self._levels = values
        return self._levels

    def _levels_changed(self) -> None:
        """Domain watcher: an OPP or a cap changed."""
        self._levels = None

    def leap(self, dt: float, ticks: int, gain: list[float], samples) -> None:
        """Account ``dt`` s (``ticks`` base steps) of a periodic steady state that
        fast-forward skipped (:mod:`simulator.engine.limit_cycle`); the caller has
        moved the clock already and the state at the end equals the state now.

        Args:
            dt: skipped time (s).
            ticks: skipped base thermal steps.
            gain: energy (J) per component over the skipped time, in
                :attr:`energy`'s order.
            samples: the time series samples that fall in it, each ``(time s,
                temperatures °C, levels Hz as :meth:`levels`, cumulative energy
                J per component)``.
        """
        names = list(self.energy)
        for time_, temps, levels, energy in samples:
            self._record_sample(temps, time_, levels, dict(zip(names, energy)))
        for name, joules in zip(names, gain):
            self.energy[name] += joules
        self._ticks += ticks
        self._int_ticks += ticks
        self._tick_time += dt
        self._last_time += dt
        for proc in self.processors.values():
            proc.skip_to(self.env.now)

    def _record_sample(self, temps=None, now: float | None = None,
                       levels: list[float] | None = None,
                       energy: dict[str, float] | None = None, force: bool = False) -> None:
        """Temperatures, frequencies and caps now, and each component's mean power
        over the period since the previous sample (its energy difference over
        that period), so that the samples integrate to the run's energy at any
        sample period.

        Args:
            temps: the current temperatures (°C), if the caller has them.
            now, levels, energy: a sample at another time (s), with its levels
                (:meth:`levels`) and cumulative energy per component (J): the
                samples of a skipped stretch (:meth:`leap`).
            force: take it even if a long run's series is thinned (the last one).
        """
        if not self.keep_samples:  # nobody reads them (measured: ~17 % of the event
            return  # loop of a ResNet-18 run sampled every 10 ms)
        if self._sample_skip != 1 and not force:
            self._samples_due += 1
            if self._samples_due % self._sample_skip:
                return  # thinned (_halve): the next kept sample's means cover this one
        if now is None:
            now = self.env._now
        if temps is None:
            temps = self.thermal.temperatures
        if levels is None:
            levels = self._levels or self._level_values()  # only read below
        if energy is None:
            energy = self.energy
        period = now - self._sampled_at
        if temps is self._temps and self._temps_of is self.thermal.theta:
            head = self._temps_list  # the last integration's, as a list
        else:
            head = temps.tolist() if isinstance(temps, np.ndarray) else list(temps)
        if period > 0 and len(energy) == self._layout_size and not force:
            # The usual sample (a step of the run, no new component): its raw
            # values kept, turned into the sample with the others in a block (_flush)
            times = self._unflushed_times
            if not times:
                self._unflushed_base = (self._sampled_joules, self._sampled_at)
            joules = list(energy.values())
            self._unflushed_heads.fromlist(head)
            self._unflushed_heads.fromlist(levels)
            self._unflushed_joules.fromlist(joules)
            times.append(now)
            self._sampled_joules, self._sampled_at = joules, now
            if len(times) >= _PENDING:
                self._flush()
            elif len(self._sample_starts) + len(times) > _MAX_SAMPLES:
                self._flush()
            if len(self._sample_starts) > _MAX_SAMPLES:
                self._halve()
            return
        self._flush()  # the samples before this one first
        values = head + levels
        if period > 0:
            joules = energy.values()
            if len(energy) == self._layout_size:  # the usual layout: no new component
                # the loop below in C: differences, their running total from 0.0
                # (the same additions in the same order) and means
                diffs = list(map(sub, joules, self._sampled_joules))
                total = reduce(add, diffs, 0.0)
                values += map(truediv, diffs, repeat(period))  # d / period, each
                values.append(total / period)
                codes = self._layout_codes
            else:
                codes = self._layout(energy)
                before = dict(zip(self._sampled_names, self._sampled_joules))
                total = 0.0
                for name, value in energy.items():
                    value -= before.get(name, 0.0)
                    total += value
                    values.append(value / period)
                values.append(total / period)
                self._sampled_names = list(energy)
            self._sampled_joules = list(joules)
            self._sampled_at = now
        else:  # no period yet (the first sample): no power
            codes = self._head_codes
        self._sample_codes.extend(codes)
        self._sample_starts.append(len(self._sample_values))
        # fromlist: extend() parses every float through PyArg_Parse, ~2x slower
        self._sample_values.fromlist(values)
        self._sample_times.append(now)
        if len(self._sample_starts) > _MAX_SAMPLES:
            self._halve()

    def _flush(self) -> None:
        """Append the samples kept by :meth:`_record_sample` to the columns, with the
        very operations it would have done on each (differences of cumulative
        energies, their running total from 0.0 in component order, means over the
        period), on the whole block at once (measured: +4-5 % kernels/s on the
        10 ms-sampled ResNet-18 case of ``benchmarks/engine.py``)."""
        times = self._unflushed_times
        if not times:
            return
        joules_before, time_before = self._unflushed_base
        count = len(times)
        # copies of the buffers (np.array of an array.array: one memcpy), which can
        # then be emptied
        joules = np.array(self._unflushed_joules).reshape(count, -1)
        heads = np.array(self._unflushed_heads).reshape(count, -1)
        at = np.array(times)
        previous = np.empty_like(joules)
        previous[0] = joules_before
        previous[1:] = joules[:-1]
        diffs = joules - previous  # J per component since the sample before
        period = np.empty(count)  # s
        period[0] = at[0] - time_before
        np.subtract(at[1:], at[:-1], out=period[1:])
        total = np.zeros(count)
        for column in diffs.T:  # added left to right, as reduce(add, diffs, 0.0)
            total += column
        width = heads.shape[1] + diffs.shape[1] + 1
        block = np.empty((count, width))
        block[:, :heads.shape[1]] = heads
        np.divide(diffs, period[:, None], out=block[:, heads.shape[1]:-1])
        np.divide(total, period, out=block[:, -1])
        start = len(self._sample_values)
        self._sample_codes.extend(self._layout_codes * count)
        self._sample_starts.extend(range(start, start + count * width, width))
        self._sample_values.frombytes(memoryview(block).cast("B"))
        self._sample_times.extend(times)
        del self._unflushed_heads[:], self._unflushed_joules[:], times[:]

    def _layout(self, energy: dict[str, float]) -> array:
        """The name codes of a sample with power per component of ``energy``
        (temperatures, levels, then each component's power and the total), kept
        for the samples that follow while the components stay the same."""
        for name in energy:
            if name not in self._power_codes:
                self._power_codes[name] = self._code(f"{self.prefix}power.{name}")
        self._layout_codes = array("I", self._head_codes)
        self._layout_codes.extend(self._power_codes[name] for name in energy)
        self._layout_codes.append(self._power_total_code)
        self._layout_size = len(energy)
        return self._layout_codes

    def _halve(self) -> None:
        """Merge the samples after the first in pairs (the later one's time,
        temperatures and levels; the pair's mean power, weighted by their
        periods, so the series still integrates to the energy) and take every
        other due sample from now on: the effective sample period doubles.

        In place: the merged samples overwrite the first half of the columns,
        which are then cut (a copy of the columns would double a long run's
        peak memory at every halving)."""
        starts = self._sample_starts
        first, width = starts[1], starts[2] - starts[1]
        # every sample after the first has its layout: each equals the one before,
        # compared in place (a comparison in numpy is a temporary of the series')
        with memoryview(self._sample_codes) as codes:  # locks the array until closed
            same = ((len(codes) - first) % width == 0
                    and codes[first + width:] == codes[first:len(codes) - width])
        if not same:
            # Samples of different layouts (a component attached mid-run; radios are
            # attached at build): keep them all and do not double the period, so
            # the series keeps its resolution (the next sample tries again).
            return
        self._sample_skip *= 2
        self._samples_due = 0
        # a sample's powers follow its temperatures and levels (_layout)
        rows = self._merge_pairs(first, width, len(self._head_codes))
        # every kept sample has the layout of the first merged one: codes and
        # offsets of the first ``rows`` are already right
        del self._sample_values[first + rows * width:]
        del self._sample_codes[first + rows * width:]
        del self._sample_times[1 + rows:]
        del self._sample_starts[1 + rows:]

    def _merge_pairs(self, first: int, width: int, power: int) -> int:
        """:meth:`_halve`'s arithmetic on views of the columns (gone on return):
        samples ``2i+1, 2i+2`` become sample ``i+1`` (an odd one out is kept as
        is); returns the number of samples after the first. A sample's values from
        index ``power`` on are powers (W), averaged; the others are the later's.
        No temporary larger than a column of times (8 bytes a sample)."""
        values = np.frombuffer(self._sample_values, dtype=float)
        times = np.frombuffer(self._sample_times, dtype=float)
        body = values[first:].reshape(-1, width)
        period = np.diff(times)  # s since the sample before, per sample after the first
        pairs = len(body) // 2
        early, late = body[0:2 * pairs:2], body[1:2 * pairs:2]
        t_early, t_late = period[0:2 * pairs:2, None], period[1:2 * pairs:2, None]
        # powers are a sample's last columns (_layout): views, merged in place with
        # the operations of (early * t_early + late * t_late) / (t_early + t_late)
        # (the same floats: IEEE addition commutes); the early rows are dropped
        early, late = early[:, power:], late[:, power:]
        late *= t_late
        early *= t_early
        late += early
        late /= t_early + t_late
        # sample 2i+1 to i in blocks that do not overlap (each reads rows past the
        # ones it writes): one copy of ``late`` would be a transient of half the
        # series, and freeing it raises glibc's mmap threshold (heap kept resident)
        done = 0
        while done < pairs:
            end = min(2 * done + 1, pairs)
            body[done:end] = body[2 * done + 1:2 * end:2]
            done = end
        body[pairs:pairs + len(body) - 2 * pairs] = body[2 * pairs:]
        at = times[1:]
        at[:pairs] = at[1:2 * pairs:2]
        at[pairs:pairs + len(at) - 2 * pairs] = at[2 * pairs:]
        return pairs + len(body) - 2 * pairs

    def _code(self, label: str) -> int:
        """The code of a time-series name (added to the table if new)."""
        code = self._label_codes.get(label)
        if code is None:
            code = self._label_codes[label] = len(self._labels)
            self._labels.append(label)
        return code

    # -- queries ----------------------------------------------------------
    def sample_columns(self, final: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], np.ndarray]:
        """The time series so far: each sample's time (s) and number of values, one
        name code and one value per value, and the names the codes index (a value's
        time is its sample's: ``np.repeat(times, widths)``). Copies unless ``final``
        (the run is over: read-only views, no second copy of a long run's samples;
        the device then takes no more samples)."""
        self._flush()
        starts = np.frombuffer(self._sample_starts, dtype=np.int64)
        widths = np.diff(starts, append=len(self._sample_values))
        if final:
            times = np.frombuffer(self._sample_times, dtype=float)
            values = np.frombuffer(self._sample_values, dtype=float)
            codes = np.frombuffer(self._sample_codes, dtype=np.uint32)
        else:  # a view would lock the arrays against growing
            times = np.array(self._sample_times, dtype=float)
            values = np.array(self._sample_values, dtype=float)
            codes = np.array(self._sample_codes, dtype=np.uint32)
        return times, widths, codes, list(self._labels), values

    @property
    def total_energy(self) -> float:
        """Energy (J) drawn so far, all components."""
        return sum(self.energy.values())

    def peak_temperature(self, nodes: list[str] | None = None) -> float:
        """Peak temperature (°C) reached by ``nodes`` (all nodes if None)."""
        names = nodes or self.thermal.names
        return float(max(self.peak[self.thermal.index[n]] for n in names))


def _aim(event: _SamplerEvent) -> None:
    """SimPy callback: the sampler starts, or re-aims after a reschedule."""
    event.device._aim()


def _woken(event: _SamplerEvent) -> None:
    """SimPy callback: the sampler's wake, unless a reschedule made it stale."""
    device = event.device
    if event is device._next:
        device._waiting = False
        device._wake(event.steps)
        device._aim()


class _SamplerEvent(QueuedEvent):
    """One of the sampler's events on SimPy's queue (see Device._aim): its start
    or a re-aim (``steps`` 0), or a wake ``steps`` base steps after the last."""

    __slots__ = ("device", "steps")
