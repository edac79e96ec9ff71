"""The model zoo: layer graphs whose MAC and parameter counts match the references.

References: ``shared/data/hardware-facts.md`` section 6 (torchvision and own
counters); MobileNetV1 from Howard et al. 2017, Table 8 (569 M mult-adds,
4.2 M parameters).
"""

import pytest

from simulator.errors import ConfigError
from workloads.generate import generate_trace
from workloads.graph import Graph
from workloads.zoo import MODELS, model_info

COMPUTE = ["conv", "dwconv", "deconv", "fc", "matmul", "lstm"]

# (model, builder keywords, reference GMACs, reference parameters in millions or None)
REFERENCES = [
    ("lenet5", {}, 0.0004165, 0.0617),
    ("alexnet", {}, 0.714, 61.10),
    ("vgg11", {}, 7.61, 132.86),
    ("vgg16", {}, 15.47, 138.36),
    ("vgg19", {}, 19.63, 143.67),
    ("vgg11", {"stem": "cifar"}, 0.153, 9.23),
    ("vgg16", {"input_size": 32}, 0.313, 14.73),
    ("vgg19", {"stem": "cifar"}, 0.398, 20.04),
    ("resnet18", {}, 1.82, 11.69),
    ("resnet34", {}, 3.67, 21.80),
    ("resnet50", {}, 4.09, 25.56),
    ("resnet152", {}, 11.55, 60.19),
    ("resnet18", {"input_size": 32}, 0.555, 11.17),
    ("resnet34", {"stem": "cifar"}, 1.159, 21.28),
    ("resnet50", {"stem": "cifar"}, 1.298, 23.52),
    ("resnet152", {"stem": "cifar"}, 3.722, 58.16),
    ("inception_v3", {}, 5.71, 23.83),
    # CIFAR stem (pytorch-cifar100) at 32x32: by hand in tests/test_zoo_variants.py
    ("inception_v3", {"input_size": 32}, 3.0956, 21.806),
    ("googlenet", {}, 1.50, 6.62),
    # BVLC Caffe forms (models/bvlc_{alexnet,googlenet}/deploy.prototxt): by hand in
    # tests/test_zoo_variants.py
    ("alexnet_caffe", {}, 0.7244, 60.965),
    ("googlenet_caffe", {}, 1.5827, 6.9986),
    ("squeezenet1_0", {}, 0.82, 1.25),
    ("squeezenet1_1", {}, 0.35, 1.24),
    ("mobilenet_v1", {}, 0.569, 4.2),
    ("mobilenet_v2", {}, 0.30, 3.50),
    # MNN's demo models (alibaba/MNN tools/train/source/models/): by hand in
    # tests/test_zoo_variants.py
    ("lenet_mnn", {}, 0.002293, 0.43108),
    ("mobilenet_v1_mnn", {}, 0.5687, 4.233),
    ("mobilenet_v2_mnn", {}, 0.30, 3.506),
    # Xenos benchmarks: torchvision ShuffleNet V2 1.0x (0.15 G, 2.28 M) and ResNet-101 (7.8 G,
    # 44.5 M); BERT-Large encoder 302 M, BERT-Small (L=4, H=512) 12.6 M parameters (Turc et
    # al.); CenterNet and the LSTM are our own configurations (docs/workloads.md)
    ("shufflenet_v2", {}, 0.146, 2.28),
    ("resnet101", {}, 7.80, 44.55),
    ("centernet", {}, 13.09, 14.22),
    ("lstm", {}, 0.0336, 1.05),
    ("bert_s", {}, 1.68, 12.61),
    ("bert_l", {}, 39.46, 302.3),
    # NestDNN's VC app, largest descendant: 196.0 MB of FP32 weights in the paper = 49.0 M
    # parameters (its width was fitted to that); FlexDNN's early-exit VGG-16: VGG-16 plus 13
    # exit branches (our configuration, docs/nestdnn_flexdnn.md)
    ("multicapacity", {}, 0.1586, 49.0),
    ("early_exit", {}, 16.45, 140.0),
]


def trace_macs(trace) -> float:
    """MACs of a trace: forward flops / 2 over the compute kernels."""
    table = trace.table
    fwd = table[(table["pass"] == "fwd") & table["op"].isin(COMPUTE)]
    return fwd["flops"].sum() / 2


@pytest.mark.parametrize("model, params, gmacs, mparams", REFERENCES,
                         ids=[f"{m}-{'-'.join(map(str, p.values())) or 'default'}"
                              for m, p, *_ in REFERENCES])
def test_generated_macs_and_params_match_references(model, params, gmacs, mparams):
    trace = generate_trace(model, **params)
    assert trace_macs(trace) / 1e9 == pytest.approx(gmacs, rel=0.02)
    graph = MODELS.get(model)(**params)
    assert graph.macs == trace_macs(trace)
    assert graph.params / 1e6 == pytest.approx(mparams, rel=0.02)


def test_every_registered_model_has_a_reference():
    assert set(MODELS) == {model for model, *_ in REFERENCES}


def test_cifar_variant_selected_by_input_size_or_stem():
    by_size = MODELS.get("resnet18")(input_size=32)
    by_stem = MODELS.get("resnet18")(stem="cifar")
    assert by_size.config == by_stem.config == {
        "input_size": 32, "num_classes": 10, "stem": "cifar", "width": 1.0}
    assert "stem.pool" not in [layer.name for layer in by_stem.layers]
    imagenet_small = MODELS.get("resnet18")(stem="imagenet", input_size=32)
    assert imagenet_small.shape("stem.pool") == (64, 8, 8)


def test_width_multiplier_scales_channels():
    half = MODELS.get("mobilenet_v2")(width=0.5)
    full = MODELS.get("mobilenet_v2")()
    assert half.shape("features.0.conv")[0] == 16
    assert half.macs < 0.4 * full.macs
    assert MODELS.get("vgg16")(stem="cifar", width=0.5).shape("block5.conv3")[0] == 256


def test_model_info_reports_resolved_defaults():
    info = model_info("inception_v3")
    assert info.defaults == {"input_size": 299, "num_classes": 1000, "stem": "imagenet"}
    assert info.macs / 1e9 == pytest.approx(5.71, rel=0.02)
    assert model_info("lenet5").defaults["input_size"] == 32
    vgg = model_info("vgg16")
    assert vgg.parameters["stem"] == "auto" and vgg.defaults["stem"] == "imagenet"
    for name in MODELS:
        assert model_info(name).description


def test_unknown_model_suggests_a_name():
    with pytest.raises(ConfigError, match="Did you mean 'resnet18'"):
        MODELS.get("resnet-18")


@pytest.mark.parametrize("params, message", [
    ({"stem": "svhn"}, "'stem' parameter"),
    ({"width": 0}, "'width' parameter"),
    ({"num_classes": 0}, "'num_classes' parameter"),
    ({"input_size": 8, "stem": "imagenet"}, "input is too small"),
])
def test_bad_model_parameters_are_config_errors(params, message):
    with pytest.raises(ConfigError, match=message):
        MODELS.get("vgg16")(**params)


def test_graph_builder_computes_shapes_and_macs():
    g = Graph("tiny", (3, 32, 32))
    x = g.conv(g.input, 16, 3, stride=2)  # 'same' padding: 32 -> 16
    assert g.shape(x) == (16, 16, 16)
    assert g[x].macs == 16 * 16 * 16 * 3 * 9
    y = g.dwconv(x, 3)
    assert g[y].macs == 16 * 16 * 16 * 9 and g[y].groups == 16
    assert g.shape(g.maxpool(y, 3, 2, ceil_mode=True)) == (16, 8, 8)
    assert g.shape(g.maxpool(y, 3, 2)) == (16, 7, 7)
    z = g.concat(x, y)
    assert g.shape(z) == (32, 16, 16)
    out = g.fc(g.global_pool(z), 10)
    assert g[out].params == 32 * 10 + 10
    assert g.consumers()[x] == [y, z]
    assert g.output == out
