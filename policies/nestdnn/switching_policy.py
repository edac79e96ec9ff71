"""``nestdnn-switching``: NestDNN's model-switching benchmark.

Every app's model starts resident at a random descendant (loaded beforehand,
not counted). Then ``switches`` times an app is drawn at random and switched
to a random other descendant, one switch after the other: the page-in bytes
of the switch are read from the SoC's flash storage (multi-capacity models
read only the extra filters of an upgrade and nothing on a downgrade;
independent models read the whole new model). No inference runs; the run
ends after the last switch, so its ``energy_j`` is the energy of the switches
(storage, DRAM and the phone's background power while they take place).

Metrics: ``switches``, ``page_in_mb``, ``page_out_mb``, ``switching_time_s``,
``energy_per_switch_j``.
"""

from __future__ import annotations

from simulator.errors import ConfigError
from simulator.params import NonNegativeInt, one_of
from simulator.policy import POLICIES, Job, Placement, Plan, Policy
from workloads.multicapacity.profile import load_profiles
from workloads.multicapacity.switching import SCHEMES, switch_traffic

from .manager import MB

Scheme = one_of(SCHEMES)


@POLICIES.register("nestdnn-switching")
class NestDNNSwitching(Policy):
    """Random descendant switches of the workload's apps, costed by the storage model.

    Args:
        switches: number of switches.
        scheme: ``multi-capacity`` (nested descendants) or ``independent`` models.
        profile: multi-capacity profile (bundled name or YAML path).
        processor: processor named in the (never run) plans.
        apps: only these apps switch (None: every app of the workload), e.g. ``[VC]``
            for one app's switching energy.
    """

    name = "nestdnn-switching"
    metrics_read_records = False  # its metrics are its switches' counts and energy_j
    # SD865 (the conformance SoC) has no storage section: no switches there.
    conformance = {"params": {"switches": 0, "processor": "cpu.gold"},
                   "workload": {"name": "VS", "model": "multicapacity",
                                "options": {"app": "VS"}}}

    def __init__(self, switches: NonNegativeInt = 250, scheme: Scheme = "multi-capacity",
                 profile: str = "nestdnn", processor: str = "cpu.big",
                 apps: list[str] | None = None):
        self.switches = switches
        self.apps = apps
        self.scheme = scheme
        self.profile = profile
        self.processor = processor
        self._apps: dict[str, str] = {}  # job -> app

    def bind(self, context) -> None:
        super().bind(context)
        self._profiles = load_profiles(self.profile)
        self.rng = context.rng.spawn(1)[0]
        self.page_in = self.page_out = 0.0
        self.done = 0
        self.end = 0.0
        context.start(self._run())

    def plan(self, job: Job) -> Plan:
        options = job.params.get("options") or {}
        app = options.get("app", job.name)
        if app not in self._profiles:
            raise ConfigError(f"job {job.name!r} is not an app of profile {self.profile!r} "
                              f"(apps: {', '.join(self._profiles)})")
        self._apps[job.name] = app
        return Plan([Placement(self.processor)] * len(job.trace))

    def _run(self):
        storage = self.context.storage()
        handles = self.context.jobs()
        for handle in handles:
            handle.suspend()  # the benchmark runs no inference
        jobs = sorted(job for job, app in self._apps.items()
                      if self.apps is None or app in self.apps)
        missing = sorted(set(self.apps or ()) - set(self._apps.values()))
        if missing:
            raise ConfigError(f"apps {missing} are not in the workload "
                              f"(apps: {', '.join(sorted(self._apps.values()))})",
                              path="policy.apps")
        sizes = {job: [d.memory for d in self._profiles[self._apps[job]].descendants]
                 for job in jobs}
        resident = {job: int(self.rng.integers(len(sizes[job]))) for job in jobs}
        for _ in range(self.switches if jobs else 0):
            job = jobs[int(self.rng.integers(len(jobs)))]
            others = [k for k in range(len(sizes[job])) if k != resident[job]]
            if not others:
                continue
            target = others[int(self.rng.integers(len(others)))]
            traffic = switch_traffic(sizes[job], resident[job], target, self.scheme)
            self.page_in += traffic.page_in
            self.page_out += traffic.page_out
            if traffic.page_in > 0:
                if storage is None:
                    raise ConfigError("nestdnn-switching needs a SoC with storage "
                                      "(storage: in the SoC file)")
                done = self.context.event()
                storage.load(traffic.page_in, done.succeed, f"{job}: switch to {target}")
                yield done
            resident[job] = target
            self.done += 1
        self.end = self.context.now
        for handle in handles:
            handle.stop()

    def metrics(self, result, iterations) -> dict[str, float]:
        energy = result.metrics.get("energy_j", 0.0)
        return {"switches": float(self.done), "page_in_mb": self.page_in / MB,
                "page_out_mb": self.page_out / MB, "switching_time_s": self.end,
                "energy_per_switch_j": energy / self.done if self.done else 0.0}
