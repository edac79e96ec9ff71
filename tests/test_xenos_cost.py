"""Cost-model mechanisms added for Xenos, as API demos on tiny inputs.

* access order: ``read_stride`` turns a layout mismatch into cache misses that
  grow with the stride (up to a line) and with the ways a stride leaves;
* ``memory_share``: sibling parts split the shared levels' bandwidth;
* a blocked GEMM library: per-output MAC slots, operand passes per block
  column, and L1-miss stalls that DMA overlap does not hide;
* a library's ``memory_overlap``: blocking caches add memory time to compute;
* a board without a CPU: its first processor is the job's home.
"""

from __future__ import annotations

import pytest
from conftest import kernel, make_trace, run

from simulator.hardware.cost import CostModel, MemoryLevel, stride_capacity
from simulator.spec.soc import SocSpec

MIB = 2**20


@pytest.fixture
def board(tiny_soc_dict) -> SocSpec:
    """The tiny SoC's DSP as a 4-unit board without a CPU: small 2-way L1, shared SRAM."""
    dsp = tiny_soc_dict["dsp"]
    dsp.update(units=4, ops_per_cycle={"fp32": 16, "int8": 64}, offload=None,
               caches=[{"name": "l1", "size": "32 KiB", "bytes_per_cycle": 16,
                        "line_size": "64 B", "ways": 2}],
               shared_memories=["sram", "dram"],
               libraries={"blocking": {"memory_overlap": 0.0}})
    tiny_soc_dict["cpu"] = {}
    tiny_soc_dict["memory"]["sram"] = {"size": "1 MiB", "bandwidth": "20 GB/s"}
    return SocSpec.model_validate(tiny_soc_dict)


def conv1x1(stride: float = 0.0, nbytes: float = 2 * MIB) -> dict:
    """A pointwise convolution reading ``nbytes`` of FP32 input with ``read_stride``."""
    return {"op": "conv", "pass": "fwd", "precision": "fp32", "flops": 1e6,
            "bytes_in": nbytes, "bytes_out": nbytes, "weight_bytes": 4096.0, "kernel": 1,
            "stride": 1, "read_stride": stride}


def seconds(model: CostModel, row: dict, units: int = 1, **kw) -> float:
    return model.kernel_cost("dsp", units, row, **kw).duration(500e6)


def test_a_sequential_read_costs_what_it_did_before(board):
    model = CostModel(board)
    plain = dict(conv1x1())
    del plain["read_stride"]
    assert seconds(model, conv1x1(0.0)) == seconds(model, plain)
    assert seconds(model, conv1x1(4.0)) == seconds(model, plain)  # one element apart


def test_strided_reads_cost_more_as_the_stride_grows_to_a_line(board):
    model = CostModel(board)
    times = [seconds(model, conv1x1(s)) for s in (0, 8, 16, 32, 64)]
    assert times == sorted(times) and times[-1] > 2 * times[0]


def test_a_stride_of_many_lines_keeps_only_the_ways_of_a_few_sets():
    level = MemoryLevel("l1", 32768.0, 16.0, None, line=64.0, ways=2)  # 256 sets
    assert stride_capacity(level, 64 * 256) == 2 * 64          # every line in one set
    assert stride_capacity(level, 64 * 196) == 64 * 2 * 64      # gcd(196, 256) = 4
    assert stride_capacity(level, 64 * 49) == 32768.0           # odd: all sets
    assert stride_capacity(MemoryLevel("x", 1e6, None, 1e9), 1e5) == 1e6  # no ways given


def test_memory_share_divides_only_the_shared_levels(board):
    model = CostModel(board)
    big = conv1x1(nbytes=64 * MIB)  # served by the SRAM and DRAM
    alone = model.kernel_cost("dsp", 1, big)
    sharing = model.kernel_cost("dsp", 1, big, memory_share=0.25)
    assert sharing.fixed == pytest.approx(4 * alone.fixed)  # SRAM/DRAM time
    assert sharing.cycles == alone.cycles  # the private L1 is not shared
    small = dict(conv1x1(nbytes=4096.0), flops=1e8)  # compute-bound, L1-resident
    assert seconds(model, small, memory_share=0.25) == seconds(model, small)


def test_blocking_caches_add_memory_time_to_compute(board):
    model = CostModel(board)
    row = dict(conv1x1(nbytes=8 * MIB), flops=2e8)
    overlapped = model.kernel_cost("dsp", 1, row)
    compute = overlapped.compute_cycles / 500e6
    memory = overlapped.fixed  # SRAM and DRAM time; the nearest level is not a stall
    assert seconds(model, row) == pytest.approx(max(compute, memory) + overlapped.overhead)
    assert seconds(model, row, library="blocking") == pytest.approx(
        compute + memory + overlapped.overhead)


def test_a_board_without_a_cpu_runs_a_job_from_its_first_processor(board):
    trace = make_trace([kernel(0), kernel(1, "0")])
    result = run(board, trace, {"name": "single", "processor": "dsp"})
    assert result.metrics["completed"] == 1.0
    assert result.transfers.empty  # nothing crosses an offload channel


def test_a_device_needs_a_processor(tiny_soc_dict):
    tiny_soc_dict["cpu"] = {}
    del tiny_soc_dict["dsp"]
    with pytest.raises(ValueError, match="at least one processor"):
        SocSpec.model_validate(tiny_soc_dict)


def test_idle_simd_lanes_slow_compute_down(board):
    model = CostModel(board)
    row = dict(conv1x1(nbytes=4096.0), flops=1e8)
    full = model.kernel_cost("dsp", 1, row).compute_cycles
    assert model.kernel_cost("dsp", 1, dict(row, simd_waste=0.75)).compute_cycles == \
        pytest.approx(4 * full)


def test_every_level_reports_the_bytes_it_served(board):
    cost = CostModel(board).kernel_cost("dsp", 1, conv1x1(nbytes=64 * MIB))
    names = [name for name, _ in cost.level_bytes]
    served = [nbytes for _, nbytes in cost.level_bytes]
    assert names == ["l1", "sram", "dram"]
    assert served == sorted(served, reverse=True)  # each level passes on its misses
    assert served[-1] == cost.dram_bytes


def test_spilled_activations_go_off_chip_even_when_they_fit(board):
    model = CostModel(board)
    small = conv1x1(nbytes=256 * 1024)  # in + out fit the 1 MiB SRAM
    on_chip = model.kernel_cost("dsp", 1, small)
    off_chip = model.kernel_cost("dsp", 1, dict(small, spill=1.0))
    # only the weights came from DRAM; with the buffers in DRAM, input and output do too
    assert on_chip.dram_bytes == pytest.approx(4096.0)
    assert off_chip.dram_bytes == pytest.approx(4096.0 + 2 * 256 * 1024)
    half = model.kernel_cost("dsp", 1, dict(small, spill=0.5))
    assert half.dram_bytes == pytest.approx(4096.0 + 256 * 1024)


def gemm_board(tiny_soc_dict, **library) -> CostModel:
    """The board with an L2 behind its L1 and a ``gemm`` library (DMA-overlapped)."""
    dsp = tiny_soc_dict["dsp"]
    dsp.update(units=4, ops_per_cycle={"fp32": 16}, offload=None,
               caches=[{"name": "l1", "size": "32 KiB", "bytes_per_cycle": 16},
                       {"name": "l2", "size": "512 KiB", "bytes_per_cycle": 16}],
               shared_memories=["dram"],
               libraries={"gemm": {"memory_overlap": 1.0, "efficiency": {"matmul": 1.0},
                                   **library}})
    tiny_soc_dict["cpu"] = {}
    return CostModel(SocSpec.model_validate(tiny_soc_dict))


def matmul(m: int, k: int, n: int) -> dict:
    return {"op": "matmul", "pass": "fwd", "precision": "fp32", "flops": 2.0 * m * k * n,
            "bytes_in": 4.0 * m * k, "bytes_out": 4.0 * m * n, "weight_bytes": 4.0 * k * n}


def test_each_output_of_a_blocked_gemm_costs_fixed_mac_slots(tiny_soc_dict):
    plain = gemm_board(dict(tiny_soc_dict))
    model = gemm_board(tiny_soc_dict, output_overhead_macs=12)
    for k in (16, 1024):  # short dot products pay most
        row = matmul(64, k, 64)
        ratio = (model.kernel_cost("dsp", 1, row, "gemm").compute_cycles
                 / plain.kernel_cost("dsp", 1, row, "gemm").compute_cycles)
        assert ratio == pytest.approx((k + 12) / k)


def test_a_left_operand_too_big_for_l1_is_streamed_once_per_block_column(tiny_soc_dict):
    model = gemm_board(tiny_soc_dict, gemm_block=4)
    model_plain = gemm_board(tiny_soc_dict)  # operands counted once

    def l2_bytes(cost_model, row):
        return dict(cost_model.kernel_cost("dsp", 1, row, "gemm").level_bytes)["l2"]

    big = matmul(256, 256, 64)  # A = 256 KiB, beyond the 32 KiB L1: 16 passes
    extra = l2_bytes(model, big) - l2_bytes(model_plain, big)
    assert extra == pytest.approx(256 * 256 * 4 * 15 * (1 - 32 / 256))
    small = matmul(16, 64, 64)  # A = 4 KiB fits the L1: no extra pass
    assert l2_bytes(model, small) == pytest.approx(l2_bytes(model_plain, small))


def test_a_stalling_level_is_not_hidden_by_dma_overlap(tiny_soc_dict):
    hidden = gemm_board(dict(tiny_soc_dict))
    stalling = gemm_board(tiny_soc_dict, stall_levels=["l2"])
    row = matmul(256, 256, 256)  # compute-bound, with L2 traffic
    a = hidden.kernel_cost("dsp", 1, row, "gemm")
    b = stalling.kernel_cost("dsp", 1, row, "gemm")
    l2_cycles = dict(a.level_bytes)["l2"] / 16
    assert b.cycles == pytest.approx(a.cycles + l2_cycles)
