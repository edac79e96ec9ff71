"""FlexDNN building blocks: early-exit models, difficulty, confidence, insertion plans."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.errors import ConfigError
from workloads.early_exit.difficulty import (
    DifficultyProcess,
    confidence,
    exit_confidence,
    threshold,
)
from workloads.early_exit.plan import (
    FINAL,
    ExitCosts,
    exit_costs,
    exit_structure,
    exits_taken,
    frame_costs,
    insertion_plan,
    qualities,
)
from workloads.generate import generate_trace


@pytest.fixture(scope="module")
def vgg():
    return generate_trace("early_exit", input_size=32, num_classes=10)


def test_a_vgg16_gets_an_exit_after_each_of_its_13_convs(vgg):
    structure = exit_structure(vgg)
    assert structure.exits == list(range(13))
    assert sorted(structure.attach.values()) == list(structure.attach.values())
    # the backbone alone is the plain VGG-16
    plain = generate_trace("vgg16", input_size=32, num_classes=10)
    backbone = vgg.table.iloc[list(structure.backbone)]
    assert backbone["flops"].sum() == pytest.approx(plain.total_flops)


def test_skip_sets_cut_the_backbone_after_the_exit_taken(vgg):
    structure = exit_structure(vgg)
    inserted = [2, 5]
    assert structure.skip(inserted, FINAL) == frozenset(
        r for j, rows in structure.heads.items() if j not in inserted for r in rows)
    at_two = structure.skip(inserted, 2)
    ran = set(range(len(vgg))) - at_two
    assert set(structure.heads[2]) <= ran and not set(structure.heads[5]) & ran
    assert max(structure.backbone.index(r) for r in ran if r in structure.backbone) == \
        structure.attach[2]


def test_difficulties_are_uniform_correlated_and_seeded():
    video = DifficultyProcess(np.random.default_rng(0), correlation=0.9).sample(20_000)
    assert video.mean() == pytest.approx(0.5, abs=0.03)
    assert np.histogram(video, bins=4, range=(0, 1))[0] / len(video) == pytest.approx(
        [0.25] * 4, abs=0.03)
    assert np.corrcoef(video[:-1], video[1:])[0, 1] > 0.8
    again = DifficultyProcess(np.random.default_rng(0), correlation=0.9).sample(100)
    assert np.array_equal(video[:100], again)
    replay = DifficultyProcess(np.random.default_rng(0), trace=np.array([0.1, 0.9]))
    assert [replay[i] for i in range(3)] == [0.1, 0.9, 0.1]
    with pytest.raises(ConfigError, match="correlation"):
        DifficultyProcess(np.random.default_rng(0), correlation=1.0)


def test_confidence_rule():
    assert confidence(1.0, 10) == pytest.approx(1.0)
    assert confidence(0.1, 10) == pytest.approx(0.0, abs=1e-12)
    d = np.linspace(0, 1, 101)
    q, relax = 0.4, 0.05
    exits = exit_confidence(d, q, 10, 20.0) >= threshold(q, 10, 20.0, relax) - 1e-12
    assert d[exits].max() == pytest.approx(q + relax, abs=0.011)
    assert np.all(exits[d <= q + relax - 0.01])


def test_exit_quality_and_the_greedy_insertion_plan():
    # three exits: a cheap useful one, a costly useless one, a cheap late one
    costs = ExitCosts(prefix={0: 10.0, 1: 20.0, 2: 80.0}, head={0: 1.0, 1: 30.0, 2: 1.0},
                      total=100.0)
    cutoff = {0: 0.3, 1: 0.31, 2: 0.7}
    difficulty = np.random.default_rng(1).random(5000)
    taken = exits_taken(difficulty, [0, 1, 2], cutoff)
    quality = qualities(costs, [0, 1, 2], taken)
    assert quality[1] < 1 < quality[0]
    plan = insertion_plan(costs, cutoff, difficulty)
    assert plan.exits == (0, 2)
    assert plan.history[0][0] == 1  # the costly exit goes first
    none = frame_costs(costs, [], exits_taken(difficulty, [], cutoff)).mean()
    everything = frame_costs(costs, [0, 1, 2], taken).mean()
    assert plan.cost < min(none, everything)


def test_exit_costs_from_kernel_costs(vgg):
    structure = exit_structure(vgg)
    costs = exit_costs(structure, vgg.table["flops"].tolist())
    assert 0 < costs.depth(0) < costs.depth(12) < 1
    assert costs.total + sum(costs.head.values()) == pytest.approx(vgg.total_flops)


@pytest.mark.parametrize("base, blocks", [("mobilenet_v1", 13), ("mobilenet_v2", 17)])
def test_mobilenet_backbones_get_an_exit_after_each_block(base, blocks):
    # Before: early_exit passed stem= to every backbone and MobileNet raised a TypeError.
    trace = generate_trace("early_exit", base=base, input_size=64, num_classes=10)
    structure = exit_structure(trace)
    assert structure.exits == list(range(blocks))
    plain = generate_trace(base, input_size=64, num_classes=10)
    backbone = trace.table.iloc[list(structure.backbone)]
    assert backbone["flops"].sum() == pytest.approx(plain.total_flops)


def test_a_stem_for_a_backbone_without_one_is_a_config_error():
    with pytest.raises(ConfigError, match="stem"):
        generate_trace("early_exit", base="mobilenet_v1", stem="cifar")
    with pytest.raises(ConfigError, match="heads"):
        generate_trace("early_exit", base="mobilenet_v1", heads=["nope"])


def test_several_exit_designs_per_position_and_their_costs():
    from workloads.early_exit.plan import positions

    designs = ["pool", "conv32", "conv2x64"]
    trace = generate_trace("early_exit", base="mobilenet_v1", input_size=64, num_classes=10,
                           heads=designs)
    structure = exit_structure(trace)
    groups = positions(structure)
    assert len(groups) == 13 and all(len(g) == 3 for g in groups)
    costs = exit_costs(structure, trace.table["flops"].tolist())
    for pool, conv32, conv2x64 in groups:
        assert costs.head[pool] < costs.head[conv32] < costs.head[conv2x64]
        assert costs.prefix[pool] == costs.prefix[conv32] == costs.prefix[conv2x64]


def test_design_search_weighs_what_a_branch_recognises_against_what_it_costs():
    from workloads.early_exit.plan import choose_designs

    costs = ExitCosts(prefix={0: 10.0, 1: 10.0}, head={0: 1.0, 1: 4.0}, total=100.0)
    difficulty = np.linspace(0.0, 1.0, 1000, endpoint=False)
    # equally capable: the cheap design wins; a costlier one must recognise enough more
    assert choose_designs(costs, {0: 0.2, 1: 0.2}, difficulty, [[0, 1]]) == [0]
    assert choose_designs(costs, {0: 0.05, 1: 0.5}, difficulty, [[0, 1]]) == [1]


def test_branchynet_exits_end_the_backbones_resolution_stages():
    from workloads.early_exit.plan import positions, stage_ends

    trace = generate_trace("early_exit", base="mobilenet_v1", input_size=224, num_classes=10)
    structure = exit_structure(trace)
    ends = stage_ends(structure, trace.table["out_h"].tolist(), positions(structure))
    # MobileNetV1 halves the map in blocks 2, 4, 6 and 12: stages end after 1, 3, 5, 11
    assert ends == [0, 2, 4, 10]
