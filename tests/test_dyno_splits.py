"""Split profiles: tensors crossing each cut, the ReLU-only filter, accuracy tables, and a
split configuration rewritten into a runnable trace."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from policies.dyno.plan import CLIENT, PACK, SERVER, UNPACK, Where, build_split
from simulator.errors import ConfigError
from simulator.policy import Placement
from workloads.generate import lower_graph
from workloads.graph import Graph
from workloads.packing.codec import LOSSLESS, pack
from workloads.splits.accuracy import AccuracyRule, RuleAccuracy, TableAccuracy
from workloads.splits.cuts import INPUT, candidate_splits, split_points
from workloads.splits.profile import RAW, SplitProfile


@pytest.fixture
def residual_net():
    """conv-relu, a residual block, a two-branch concat, then a classifier."""
    g = Graph("toy", (3, 16, 16))
    x = g.conv_bn_relu(g.input, 8, 3, name="stem")
    y = g.conv_bn_relu(x, 8, 3, name="block.conv1")
    y = g.bn(g.conv(y, 8, 3, name="block.conv2"), name="block.bn2")
    x = g.relu(g.add(x, y, name="block.add"), name="block.relu")
    left = g.relu(g.conv(x, 4, 1, name="left.conv"), name="left.relu")
    right = g.relu(g.conv(x, 4, 3, name="right.conv"), name="right.relu")
    x = g.concat(left, right, name="cat")
    g.softmax(g.fc(g.global_pool(x, name="pool"), 10, name="fc"), name="softmax")
    return lower_graph(g)


def _layers(point):
    return [t.layer for t in point.tensors]


def test_cuts_list_every_tensor_that_crosses(residual_net):
    points = {p.layer: p for p in split_points(residual_net)}
    assert len(points) == len(residual_net) + 1
    first = split_points(residual_net)[0]
    assert first.index == 0 and first.tensors[0].producer == INPUT
    assert first.tensors[0].nbytes == 3 * 16 * 16 * 4
    # inside the residual block: the branch and the block input (skip) cross
    assert _layers(points["block.conv1.relu"]) == ["stem.relu", "block.conv1.relu"]
    # between the parallel branches: the trunk and the finished left branch
    assert _layers(points["left.relu"]) == ["block.relu", "left.relu"]
    assert split_points(residual_net)[-1].tensors == ()


def test_the_relu_filter_keeps_the_extremes_and_relu_only_cuts(residual_net):
    candidates = candidate_splits(residual_net)
    n = len(residual_net)
    assert candidates[0].index == 0 and candidates[-1].index == n
    for point in candidates[1:-1]:
        assert point.tensors and all(t.op == "relu" for t in point.tensors)
    assert "block.bn2" not in [p.layer for p in candidates]  # a BN output crosses there
    assert len(candidates) < len(split_points(residual_net)) / 2
    assert len(candidate_splits(residual_net, relu_only=False)) == n + 1


def test_the_accuracy_rule_and_a_measured_table(tmp_path, residual_net):
    rule = RuleAccuracy(AccuracyRule(input_bits=6, shallow_bits=6, deep_bits=4,
                                     drop_at_bits=0.5, growth=4.0))
    points = split_points(residual_net)
    deep = points[-2]
    assert rule.bits_1pp(points[0]) == 6 and rule.bits_1pp(deep) == 4
    assert rule.drop(deep, 4) == 0.5 and rule.drop(deep, 3) == 2.0
    assert rule.drop(deep, 16) == 0.0 and rule.drop(points[-1], 3) == 0.0
    assert rule.drop(deep, 1) == 32.0 and rule.drop(points[0], 1) == 100.0  # capped
    table = tmp_path / "drops.csv"
    table.write_text(f"split_layer,bits,drop_pp\n{deep.layer},3,0.2\ninput,8,0.0\n")
    measured = TableAccuracy(table)
    assert measured.drop(deep, 3) == 0.2 and math.isinf(measured.drop(deep, 4))
    table.write_text("layer,drop\nx,1\n")
    with pytest.raises(ConfigError, match="columns must include"):
        TableAccuracy(table)


def test_the_exported_profile_reads_back_as_an_accuracy_table(tmp_path, residual_net):
    profile = SplitProfile(residual_net)
    table = profile.table([3, 4])
    path = tmp_path / "profile.csv"
    table.to_csv(path, index=False)
    measured = TableAccuracy(path)
    point = profile.candidates[1]
    assert measured.drop(point, 3) == profile.drop(point, 3)
    assert (table["packed_bytes"] < table["raw_bytes"]).all()


def test_a_profile_prefers_real_activation_dumps(tmp_path, residual_net):
    modelled = SplitProfile(residual_net)
    point = next(p for p in modelled.candidates if p.layer == "block.relu")
    tensor = point.tensors[0]
    x = np.maximum(np.random.default_rng(0).standard_normal(tensor.elements) - 1.5, 0)
    np.save(tmp_path / "block.relu.npy", x.astype(np.float32))
    dumped = SplitProfile(residual_net, activations=tmp_path)
    assert dumped.tensor_bytes(tensor, 4) == pack(x, 4).nbytes
    assert modelled.tensor_bytes(tensor, RAW) == tensor.nbytes
    assert modelled.lowest_bits(point, 1.0, [3, 4, 5, 6, 7, 8]) in range(3, 9)
    assert modelled.drop(point, LOSSLESS) == 0.0


WHERE = Where(Placement("gpu"), Placement("cpu.a", stream="packing"),
              Placement("server:gpu"), Placement("server:cpu.a", stream="unpacking"))


def test_a_split_becomes_client_pack_unpack_and_server_kernels(residual_net):
    profile = SplitProfile(residual_net)
    point = next(p for p in profile.candidates if len(p.tensors) == 2)
    plan = build_split(residual_net, profile, point, 4, WHERE)
    roles = Counter(plan.roles)
    assert roles[CLIENT] == point.index and roles[SERVER] == len(residual_net) - point.index
    assert roles[PACK] == roles[UNPACK] == 2 * 3  # quantize, bitshuffle, compress each
    table = plan.trace.table
    role_of = dict(zip(table["id"], plan.roles))
    for kid, deps, role in zip(table["id"], table["deps"], plan.roles):
        if role == SERVER:  # server kernels read only server-side data
            assert all(role_of[d] in (SERVER, UNPACK) for d in deps), kid
    assert plan.placements[plan.roles.index(PACK)] == WHERE.packer
    raw = build_split(residual_net, profile, point, RAW, WHERE)
    assert Counter(raw.roles) == Counter({CLIENT: point.index,
                                          SERVER: len(residual_net) - point.index})
    server_only = build_split(residual_net, profile, profile.candidates[0], 6, WHERE)
    first_server = server_only.roles.index(SERVER)
    assert server_only.trace.preds[first_server]  # waits for the unpacked input
