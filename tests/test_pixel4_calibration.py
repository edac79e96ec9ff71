"""SD855 calibration on the Pixel 4 mobile-ml-benchmark models (issue 3, item 7).

Needs the data folder (``$SOCSIM_DATA_DIR``, default ``../shared/data``); skipped
without it. The targets: median |error| <= 15 % on each of the eight
configurations, through the full engine, with ``socs/snapdragon855.yaml`` as
committed.
"""

from __future__ import annotations

import pytest

from simulator.checks import CHECKS
from simulator.library import load_soc
from validation import pixel4
from validation.pixel4 import checks as pixel4_checks


@pytest.fixture(scope="module")
def cal():
    try:
        return pixel4.load()
    except pixel4.DataMissing as err:
        pytest.skip(f"mobile-ml-benchmark data not present: {err}")


@pytest.mark.parametrize("config", [c.name for c in pixel4.TARGETS])
def test_median_error_within_target(cal, config):
    check = CHECKS.get(f"pixel4.{config}.median_abs_error")
    simulated = check.simulate()
    assert simulated <= check.reference == pixel4.TARGET_PCT, (
        f"{config}: median |error| {simulated:.1f} % > {check.reference} %\n"
        + pixel4_checks.pixel4_errors()[config].round(1).to_string())


def test_fast_model_is_the_engine(cal):
    """The fitting shortcut reproduces the engine (branches on idle cores included; a
    grouped model for group_half_channels, kxk convolutions for the im2col copy)."""
    models = ["squeezenet_v1_1", "ghostnet", "resnet18", "regnetx006"]
    assert pixel4.check_fast_model(cal, load_soc(pixel4.SOC), models) < 1e-9


def test_parameters_round_trip():
    base = pixel4.load_base()
    soc = base.soc
    values = pixel4.read_params(soc)
    assert set(values) == set(pixel4.PARAM_NAMES + pixel4.DERIVED)
    again = pixel4.read_params(pixel4.apply_params(base, values).soc)
    assert again == pytest.approx(values)
    moved = pixel4.read_params(pixel4.apply_params(base, {"a76.dispatch": 50.0}).soc)
    assert moved["a76.dispatch"] == pytest.approx(50.0)
    assert moved["a55.dispatch"] == pytest.approx(values["a55.dispatch"])
    # prime and gold share the A76 table and its per-op cycles
    assert soc.cpu["prime"].efficiency == soc.cpu["gold"].efficiency
    cycles = [soc.cpu[c].dispatch_overhead * soc.cpu[c].opps[-1].frequency
              for c in ("prime", "gold")]
    assert cycles[0] == pytest.approx(cycles[1], rel=1e-3)


def test_every_measured_configuration_is_fitted(cal):
    names = {c.name for c in pixel4.fit_configs(cal)}
    assert {c.name for c in pixel4.TARGETS} <= names
    # the thread counts the targets leave out separate INT8 thread scaling from efficiency
    assert {"int8.1small", "int8.2med", "fp32.2small"} <= names


def test_grouped_convolutions_import_as_group_conv(cal):
    """The five regnet/resnext models: found from the op kind, kept in the CPU fits."""
    assert sorted(cal.grouped) == ["regnetx006", "regnetx016", "regnety016",
                                   "resnext26_16x4d", "resnext26_32x4d"]
    for model in cal.grouped:
        ops = cal.traces["int8"][model].table["op"]
        assert (ops == "group_conv").any() and (ops == "conv").any()
