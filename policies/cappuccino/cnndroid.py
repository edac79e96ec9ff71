"""``cnndroid``: CNNdroid (Latifi Oskouei et al., ACM MM 2016) as its public code runs.

What the code does (``ENCP/CNNdroid``, ``CNNdroid Source Package``):

* **Convolution and fully connected layers** are RenderScript kernels
  (``rs/convRolledInF8OutF4.rs``, the default ``F8F4`` when not tuned;
  ``innerProductInF8OutF1.rs``): the input is channel-interleaved with the
  channels padded to a multiple of ``8 * group``, each thread reads float4
  vectors along the input channels and writes 4 outputs. The scripts declare no
  ``rs_fp_*`` pragma, so they run with RenderScript's default full IEEE-754
  precision (``rs_fp_full``), which GPU drivers do not take: the launch runs on
  the CPU driver's thread pool (all clusters). Whether the float4 code stays
  vector code depends on the ISA: ARMv7's NEON only flushes denormals to zero
  (ARM DUI0473C: "NEON always uses flush-to-zero mode"), so IEEE code on a
  32-bit core is scalar VFP; AArch64's Advanced SIMD handles denormals
  (ARMv8-A ARM, FPCR.FZ), so the vector code keeps its lanes
  (:data:`IEEE_SIMD`).
* **Around every such layer, Java** (``layers/Convolution.java``): a Java loop
  copies the ``float[n][c][h][w]`` input into the padded interleaved array,
  ``Allocation.copyFrom`` copies it into the script's allocation, the kernel
  runs, ``Allocation.copyTo`` copies the result out, and a Java loop copies it
  back into a 4-D array, applying a following ReLU on the way (so the ReLU
  costs no layer of its own).
* **Pooling, LRN, ReLU and the rest** are multithreaded Java
  (``layers/Pooling.java``, ``LocalResponseNormalization.java``): 4 threads
  (``threadCount`` untuned), each a contiguous block of channels; the caller
  polls them with ``Thread.sleep(5)``, so a layer ends on average half a
  polling period after its threads. Softmax is sequential Java. CNNdroid has
  no concatenation layer; this model runs one as a Java copy, the same way.

Java loops are costed with the core's ``java`` library (the phone's runtime):
one copied element as one iteration of the Java convolution's inner loop
(2 operations), an estimate.
"""

from __future__ import annotations

from simulator.errors import ConfigError
from simulator.hardware.lanes import lane_fill
from simulator.policy import POLICIES, Job, Placement, Plan, Policy

from ..rewrite import Rewriter
from ..split import serialize
from .olp import Estimator, part_record

# Cores whose SIMD unit keeps IEEE-754 floats (denormals), so that full-precision
# RenderScript float4 code can stay vector code: AArch64 (ARMv8-A) cores, not ARMv7 NEON.
IEEE_SIMD = {"krait-400": False, "cortex-a57": True, "cortex-a53": True, "kryo": True}
RS_OPS = ("conv", "fc", "matmul")
SEQUENTIAL_JAVA = ("softmax",)
JAVA_OPS_PER_ELEMENT = 2.0  # E: one element copied = one inner-loop iteration of Java code
FP32 = 4


def channel_padding_waste(record: dict, block: int = 8) -> float:
    """Idle fraction of CNNdroid's vector lanes: channels padded to ``block * group``."""
    channels = int(record.get("in_channels") or 0)
    groups = max(1, int(record.get("groups") or 1))
    per_group = channels // groups if channels else 0
    return 1.0 - lane_fill(per_group, block)  # 0 for no channels


@POLICIES.register("cnndroid")
class CnnDroid(Policy):
    """CNNdroid's program: RenderScript convolutions and FC layers wrapped in Java
    copies, the other layers in multithreaded Java, one layer at a time.

    Args:
        cpu: CPU clusters RenderScript's CPU driver spreads a launch over (default:
            all); the first also runs the Java threads.
        gpu: where a GPU driver would run the scripts if they were inexact.
        precision: the scripts' RenderScript mode (``exact``: CNNdroid declares no
            ``rs_fp`` pragma, so full precision; ``relaxed``/``imprecise`` for a
            modified CNNdroid).
        java_threads: threads of the multithreaded Java layers.
        poll: the Java layers' completion polling period (seconds).
        block: input channels per vector step (8: float8 inputs, ``F8F4``).
    """

    name = "cnndroid"
    conformance = {"params": {}, "workload": {"model": "lenet5"}}

    def __init__(self, cpu: list[str] | None = None, gpu: str = "gpu",
                 precision: str = "exact", java_threads: int = 4, poll: float = 5e-3,
                 block: int = 8):
        if precision not in ("exact", "relaxed", "imprecise"):
            raise ConfigError(f"precision must be exact, relaxed or imprecise; got "
                              f"{precision!r}", path="precision")
        self.cpu = cpu
        self.gpu = gpu
        self.precision = precision
        self.java_threads = max(1, int(java_threads))
        self.poll = float(poll)
        self.block = max(1, int(block))

    def _rs_placements(self, est: Estimator, clusters: list[str]) -> list[list[Placement]]:
        """Processor sets one RenderScript launch may run on (one driver each)."""
        if self.precision == "exact":
            cpus = []
            for name in clusters:
                core = est.specs[name].core
                # float4 code keeps its lanes only where SIMD is IEEE-exact
                library = ("renderscript-imprecise" if IEEE_SIMD.get(core, False)
                           else "renderscript-exact")
                cpus.append(Placement(name, est.specs[name].units, library=library))
            return [cpus]
        library = f"renderscript-{self.precision}"
        sets = [[Placement(n, est.specs[n].units, library=library) for n in clusters]]
        if self.gpu in est.specs:
            sets.append([Placement(self.gpu, est.specs[self.gpu].units, library=library)])
        return sets

    def plan(self, job: Job) -> Plan:
        est = Estimator(self.context, job)
        clusters = self.cpu or [n for n in est.specs if n.startswith("cpu.")]
        if not clusters:
            raise ConfigError("CNNdroid needs a CPU cluster for its Java layers", path="cpu")
        for name in clusters:
            self.context.require_processor(name, job.device, path="cpu")
        home = clusters[0]
        threads = min(self.java_threads, est.specs[home].units)
        one = Placement(home, 1, library="java")
        pool = Placement(home, threads, library="java")
        plain = Placement(home, 1)
        rs_sets = self._rs_placements(est, clusters)
        trace = serialize(job.trace)
        rw = Rewriter(trace)
        records = trace.table.to_dict("records")
        fused: dict[int, int] = {}  # relu row -> the RS layer row it was folded into
        for row, record in enumerate(records):
            if record["op"] == "relu":
                preds = trace.preds[row]
                if len(preds) == 1 and records[preds[0]]["op"] in RS_OPS and \
                        len(trace.succs[preds[0]]) == 1:
                    fused[row] = preds[0]
        for row in range(len(records)):
            record = rw.record(row)
            if row in fused:
                rw.alias(row, fused[row])
                continue
            deps = rw.inputs(row)
            name = str(record["name"])
            if record["op"] in RS_OPS:
                rw.finish(row, self._rs_layer(rw, est, record, deps, name, rs_sets,
                                              one, plain))
                continue
            sequential = record["op"] in SEQUENTIAL_JAVA
            java = dict(record)
            if not java.get("flops"):
                java["flops"] = JAVA_OPS_PER_ELEMENT * java["bytes_out"] / FP32
            java["fixed_s"] = 0.0 if sequential else self.poll / 2
            rw.finish(row, [rw.emit(java, one if sequential else pool, deps)])
        new_trace, placements = rw.build("cnndroid")
        return Plan(placements, trace=new_trace)

    def _rs_layer(self, rw: Rewriter, est: Estimator, record: dict, deps, name: str,
                  rs_sets: list[list[Placement]], java: Placement, plain: Placement
                  ) -> list[int]:
        """Java repack, copy in, the RenderScript kernel, copy out, Java unpack."""
        waste = channel_padding_waste(record, self.block)
        padded_in = record["bytes_in"] / max(1e-9, 1.0 - waste)
        out = record["bytes_out"]

        def copy(label: str, bytes_in: float, bytes_out: float, java_loop: bool) -> dict:
            return {**record, "op": "transpose" if java_loop else "copy", "name":
                    f"{name}.{label}",
                    "flops": JAVA_OPS_PER_ELEMENT * bytes_out / FP32 if java_loop else 0.0,
                    "bytes_in": bytes_in, "bytes_out": bytes_out, "weight_bytes": 0.0,
                    "kernel": 0, "stride": 0, "fixed_s": 0.0, "simd_waste": 0.0}

        ids = [rw.emit(copy("repack", record["bytes_in"], padded_in, True), java, deps)]
        ids.append(rw.emit(copy("copy_from", padded_in, padded_in, False), plain, ids[-1:]))
        kernel = dict(record, bytes_in=padded_in, simd_waste=waste)
        parts, _, _ = est.best(kernel, rs_sets)
        if not parts:
            raise ConfigError(f"kernel {name!r} cannot run on the RenderScript processors",
                              path="cpu")
        launch = [rw.emit(part_record(kernel, f) if len(parts) > 1 else kernel, p, ids[-1:],
                          name=f"{name}[{i}]" if len(parts) > 1 else None)
                  for i, (p, f) in enumerate(parts)]
        ids.append(rw.emit(copy("copy_to", out, out, False), plain, launch))
        ids.append(rw.emit(copy("unpack", out, out, True), java, ids[-1:]))
        return ids[-1:]
