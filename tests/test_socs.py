"""Bundled SoC files: each loads, is structurally sane, simulates, and bad copies fail cleanly.

Every ``socs/*.yaml`` is picked up automatically; the facts checked per SoC (top OPPs,
processor names) come from ``../shared/data/hardware-facts.md`` and the Mandheling device
table.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml

import simulator
from simulator.engine.simulation import simulate
from simulator.errors import ConfigError
from simulator.library import PROJECT_ROOT
from simulator.spec.experiment import ExperimentSpec
from simulator.trace import save_trace, trace_from_table

SOC_FILES = sorted((PROJECT_ROOT / "socs").glob("*.yaml"))
SOC_NAMES = [path.stem for path in SOC_FILES]

# Top OPP (MHz) of every processor, from hardware-facts.md §3a/3c and the Mandheling paper
# (DSP 500 MHz; SD855's DSP clock is unknown and set like its siblings). The keys are also
# the complete processor set each SoC must have.
TOP_OPP_MHZ = {
    "snapdragon865": {"cpu.prime": 2841.6, "cpu.gold": 2419.2, "cpu.silver": 1804.8,
                      "gpu": 587, "dsp": 500},
    "snapdragon888": {"cpu.prime": 2841.6, "cpu.gold": 2419.2, "cpu.silver": 1804.8,
                      "gpu": 840, "dsp": 500},
    "snapdragon855": {"cpu.prime": 2841.6, "cpu.gold": 2419.2, "cpu.silver": 1785.6,
                      "gpu": 585, "dsp": 500},
    "snapdragon750g": {"cpu.big": 2208, "cpu.little": 1804.8, "gpu": 800, "dsp": 500},
    # Cappuccino's phones (Tom's Hardware / AnandTech 8933 / nanoreview) and Xenos' DSP board
    # (TI SPRS691)
    "snapdragon800": {"cpu.big": 2265.6, "gpu": 450},
    "snapdragon810": {"cpu.big": 1958.4, "cpu.little": 1555.2, "gpu": 600},
    "snapdragon820": {"cpu.big": 2150.4, "cpu.little": 1593.6, "gpu": 624},
    "tms320c6678": {"dsp": 1250},
    # Xenos' FPGA board: the DPU cores' clock on the ZCU102 (UG1354, socs/zcu102.yaml)
    "zcu102": {"npu": 281},
    # NestDNN/FlexDNN's Galaxy S8 (US): AnandTech 10948 (2.45 / 1.9 GHz), msm8998-v2.dtsi
    "snapdragon835": {"cpu.big": 2457.6, "cpu.little": 1900.8, "gpu": 710},
}
# three clusters, two, or one (a quad-core Krait phone)
PHONE_CLUSTERS = ({"prime", "gold", "silver"}, {"big", "little"}, {"big"})
OTHER_PROCESSORS = {"gpu", "dsp", "npu"}


def test_the_mandheling_and_benchmark_phones_are_bundled():
    assert set(TOP_OPP_MHZ) <= set(SOC_NAMES)


@pytest.mark.parametrize("name", SOC_NAMES)
def test_loads(name):
    soc = simulator.load_soc(name)
    assert soc.name == name
    assert soc.processors()


@pytest.mark.parametrize("name", SOC_NAMES)
def test_opps_ascend_and_voltages_do_not_fall(name):
    for proc_name, proc in simulator.load_soc(name).processors().items():
        freqs = [opp.frequency for opp in proc.opps]
        volts = [opp.voltage for opp in proc.opps]
        assert freqs == sorted(freqs) and len(set(freqs)) == len(freqs), proc_name
        assert volts == sorted(volts), f"{proc_name}: voltage falls as frequency rises"
        assert all(f > 0 for f in freqs) and all(0 < v < 2 for v in volts), proc_name


@pytest.mark.parametrize("name", SOC_NAMES)
def test_processor_names_follow_the_contract(name):
    soc = simulator.load_soc(name)
    names = set(soc.processors())
    assert {n for n in names if not n.startswith("cpu.")} <= OTHER_PROCESSORS
    if soc.kind == "phone":
        assert set(soc.cpu) in PHONE_CLUSTERS, (
            f"a phone's clusters are prime/gold/silver, big/little or big; got {sorted(soc.cpu)}")
        assert soc.thermal.skin_node is not None


@pytest.mark.parametrize("name", sorted(TOP_OPP_MHZ))
def test_top_opps_match_the_facts(name):
    procs = simulator.load_soc(name).processors()
    assert set(procs) == set(TOP_OPP_MHZ[name])
    for proc_name, mhz in TOP_OPP_MHZ[name].items():
        top = procs[proc_name].opps[-1].frequency
        assert top == pytest.approx(mhz * 1e6, rel=1e-9), proc_name


@pytest.mark.parametrize("name", SOC_NAMES)
def test_every_section_cites_a_source(name):
    soc = simulator.load_soc(name)
    sections = {"(top level)": soc.source, "power": soc.power.source,
                "thermal": soc.thermal.source}
    sections.update({proc: spec.source for proc, spec in soc.processors().items()})
    sections.update({f"memory.{m}": spec.source for m, spec in soc.memory.items()})
    missing = [section for section, source in sections.items() if not (source or "").strip()]
    assert not missing, f"sections without a source: {missing}"


@pytest.mark.parametrize("name", SOC_NAMES)
def test_hvx_has_no_floating_point(name):
    dsp = simulator.load_soc(name).dsp
    if dsp is None or not dsp.core.startswith("hexagon"):
        pytest.skip("no Hexagon DSP")
    assert set(dsp.ops_per_cycle) == {"int8"}


# -- fits reused from the SD865 file ----------------------------------------------------

# Parts of each SoC that copy a fit made on snapdragon865.yaml (the schema has no
# inheritance). Drop a part here when that SoC gets a fit of its own.
REUSES_SD865_FITS = {
    "snapdragon888": {"dsp", "package", "cpu_trip", "layout_ops"},
    "snapdragon855": {"dsp", "package", "layout_ops"},
    "snapdragon750g": {"dsp", "package", "cpu_trip", "layout_ops"},
}
LAYOUT_OPS = ("transpose", "weight_rotate", "slice")
A7X_CORES = ("cortex-a76", "cortex-a77", "cortex-a78")


def _fits(soc) -> dict:
    """The SD865-fitted values of ``soc``, by part."""
    dsp, thermal = soc.dsp, soc.thermal
    big_trips = [t.temperature for t in thermal.trips if t.sensor == "cpu_big"]
    return {
        "dsp": (dict(dsp.efficiency), dict(dsp.memory_efficiency), dsp.dispatch_overhead,
                dsp.dram_bandwidth, dict(dsp.memory_bandwidth), dsp.replacement,
                dsp.batch_padding, dsp.offload.switch, dsp.offload.bandwidth),
        "package": (thermal.nodes["package"].capacity,
                    sorted((sorted(link.between), link.conductance) for link in thermal.links
                           if "package" in link.between)),
        "cpu_trip": big_trips,
        "layout_ops": {(name, op): proc.efficiency.get("int8", {}).get(op)
                       for name, proc in soc.cpu.items() if proc.core in A7X_CORES
                       for op in LAYOUT_OPS},
    }


@pytest.mark.parametrize("name", sorted(REUSES_SD865_FITS))
def test_reused_sd865_fits_are_in_sync(name):
    reference = _fits(simulator.load_soc("snapdragon865"))
    ours = _fits(simulator.load_soc(name))
    for part in sorted(REUSES_SD865_FITS[name]):
        if part == "layout_ops":
            expected = {key[1]: value for key, value in reference[part].items()}
            for (cluster, op), value in ours[part].items():
                assert value == expected[op], f"cpu.{cluster} int8 {op}: SD865 fit changed?"
        else:
            assert ours[part] == reference[part], f"{part}: the SD865 fit changed; update {name}"


# -- smoke simulation -----------------------------------------------------------------

def _tiny_table() -> pd.DataFrame:
    """conv -> relu -> maxpool -> fc, plus a residual add: a few ops every processor runs."""
    c, h = 16, 16
    act = c * h * h * 4
    rows = [
        dict(id=0, name="conv", op="conv", flops=2 * c * c * 9 * h * h, bytes_in=act,
             bytes_out=act, weight_bytes=c * c * 9 * 4, deps="", kernel=3, stride=1),
        dict(id=1, name="relu", op="relu", flops=c * h * h, bytes_in=act, bytes_out=act,
             weight_bytes=0, deps="0"),
        dict(id=2, name="add", op="add", flops=c * h * h, bytes_in=2 * act, bytes_out=act,
             weight_bytes=0, deps="0 1"),
        dict(id=3, name="pool", op="maxpool", flops=c * h * h, bytes_in=act,
             bytes_out=act // 4, weight_bytes=0, deps="2", kernel=2, stride=2),
        dict(id=4, name="fc", op="fc", flops=2 * (act // 16) * 10, bytes_in=act // 4,
             bytes_out=40, weight_bytes=(act // 16) * 10 * 4, deps="3"),
    ]
    table = pd.DataFrame(rows).fillna({"kernel": 0, "stride": 0})
    table["pass"] = "fwd"
    table["precision"] = "fp32"
    table["batch"] = 1
    return table


def test_the_zcu102_accelerator_is_the_dpu_xilinx_ships_for_the_board():
    # socs/zcu102.yaml assumes Xilinx's DPU in place of the paper's unpublished design:
    # its INT8 peak must be UG1354's "3.45 TOPS" (three B4096 cores at 281 MHz), its
    # buffers PG338's 255 block RAMs per core, and they must fit the part's 912
    npu = simulator.load_soc("zcu102").npu
    peak = npu.units * npu.ops_per_cycle["int8"] * npu.opps[-1].frequency
    assert peak == pytest.approx(3.45e12, rel=0.005)
    assert set(npu.ops_per_cycle) == {"int8"}
    blocks = npu.caches[0].size / (36 * 1024 / 8)
    assert blocks == pytest.approx(255)
    assert npu.units * blocks <= 912


@pytest.fixture(scope="module")
def tiny_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "tiny.csv"
    save_trace(trace_from_table(_tiny_table()), path)
    return path


def _precision_for(proc) -> str:
    return next(p for p in ("fp32", "fp16", "int8") if p in proc.ops_per_cycle)


@pytest.mark.parametrize("name", SOC_NAMES)
def test_every_processor_runs_a_tiny_trace(name, tiny_trace):
    soc = simulator.load_soc(name)
    for proc_name, proc in soc.processors().items():
        exp = ExperimentSpec.model_validate({
            "name": "smoke", "soc": name,
            "workload": {"trace": str(tiny_trace), "precision": _precision_for(proc)},
            "policy": {"name": "single", "processor": proc_name},
        })
        result = simulate(exp)
        metrics = result.metrics
        assert metrics["completed"] == 1.0, proc_name
        assert 0 < metrics["latency_s"] < 1.0, proc_name
        assert metrics["energy_j"] > 0, proc_name
        assert set(result.kernels["processor"]) == {proc_name}
        temps = result.timeseries[result.timeseries["name"].str.startswith("temp.")]["value"]
        assert len(temps) and all(math.isfinite(t) for t in temps), proc_name
        assert math.isfinite(metrics["peak_temp_c"])
        assert metrics["peak_temp_c"] >= soc.thermal.ambient - 1e-9


# -- bad input: one-line ConfigError naming the file and the YAML path ------------------

def _broken_copy(tmp_path, name, edit):
    """Write a copy of SoC ``name`` with ``edit`` applied to its first CPU cluster (or,
    on a board without a CPU, its first processor); returns the path and the YAML path
    of the edited processor (``cpu.gold``, ``dsp``)."""
    source = next(p for p in SOC_FILES if p.stem == name)
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    if data.get("cpu"):
        cluster = sorted(data["cpu"])[0]
        edit(data["cpu"][cluster])
        where = f"cpu.{cluster}"
    else:
        where = next(k for k in ("gpu", "dsp", "npu") if data.get(k))
        edit(data[where])
    path = tmp_path / f"broken_{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path, where


def _expect_config_error(path, yaml_path: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        simulator.load_soc(str(path))
    message = str(info.value)
    assert path.name in message
    assert yaml_path in message
    assert words in message
    assert "\n" not in message


@pytest.mark.parametrize("name", SOC_NAMES)
def test_unknown_key_is_rejected(tmp_path, name):
    path, where = _broken_copy(tmp_path, name, lambda c: c.update(turbo_boost=True))
    _expect_config_error(path, f"{where}.turbo_boost", "unknown key")


@pytest.mark.parametrize("name", SOC_NAMES)
def test_frequency_in_bytes_is_rejected(tmp_path, name):
    def edit(cluster):
        cluster["opps"][0] = "2.84 GB @ 0.6 V"

    path, where = _broken_copy(tmp_path, name, edit)
    _expect_config_error(path, f"{where}.opps[0].frequency", "2.84 GB")


@pytest.mark.parametrize("name", SOC_NAMES)
def test_negative_frequency_is_rejected(tmp_path, name):
    def edit(cluster):
        cluster["opps"][0] = "-300 MHz @ 0.6 V"

    path, where = _broken_copy(tmp_path, name, edit)
    _expect_config_error(path, f"{where}.opps", "positive")


@pytest.mark.parametrize("name", SOC_NAMES)
def test_a_frequency_floor_above_the_top_opp_is_rejected(tmp_path, name):
    path, where = _broken_copy(tmp_path, name, lambda c: c.update(min_frequency="9 GHz"))
    _expect_config_error(path, f"{where}.min_frequency", "above the highest OPP")


@pytest.mark.parametrize("name", SOC_NAMES)
def test_an_unknown_precision_activity_is_rejected(tmp_path, name):
    def edit(cluster):
        cluster["power"]["precision_activity"] = {"int3": 0.5}

    path, where = _broken_copy(tmp_path, name, edit)
    _expect_config_error(path, f"{where}.power.precision_activity", "int3")
