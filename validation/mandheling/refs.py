"""Reference measurements from the Mandheling paper (calibration figures).

Xu et al., "Mandheling: Mixed-Precision On-Device DNN Training with DSP
Offloading", MobiCom 2022, as restated in ``shared/design/seeds/mandheling.md``.
Typed in here (small tables), with the experimental setting each implies.
"""

from __future__ import annotations

SOURCE = "Mandheling (Xu et al., MobiCom'22), Xiaomi 10 (SD865)"

# DSP latency (ms) of one 64->64-channel 3x3 INT8 convolution by input size and batch.
CONV_BATCHES = (2, 4, 8, 16, 32, 64)
CONV_CLIFF_MS = {
    8: (0.63, 0.63, 0.85, 1.03, 1.27, 1.84),
    16: (0.84, 0.89, 4.23, 3.98, 4.64, 12.24),
    32: (1.69, 2.50, 59.11, 62.35, 68.13, 152.89),
}

# DSP-unfriendly operators: (CPU ms, DSP ms). The paper does not give the tensor;
# we take the tensors these ops see in Mandheling's VGG-16/CIFAR-10 batch-64 INT8
# training (stated in UNFRIENDLY_TENSOR_BYTES) and the CPU share on 2 gold cores.
UNFRIENDLY_OPS_MS = {
    "transpose": (3.0, 25.0),
    "weight_rotate": (4.0, 20.0),
    "slice": (4.0, 17.0),
}
UNFRIENDLY_TENSOR_BYTES = {
    "transpose": 64 * 64 * 32 * 32,  # a batch-64 64x32x32 INT8 activation (4 MiB)
    "weight_rotate": 512 * 512 * 3 * 3,  # VGG-16's largest 3x3 kernel, INT8 (2.25 MiB)
    "slice": 64 * 128 * 16 * 16,  # a batch-64 128x16x16 INT8 activation (2 MiB)
}

# One CPU<->DSP switch, "mostly the copy": ~25 ms. We take the largest activation
# crossing in VGG-16/CIFAR-10 batch-64 INT8 training (64x64x32x32 INT8 = 4 MiB).
SWITCH_MS = 25.0
SWITCH_BYTES = 64 * 64 * 32 * 32

# Thermal case: MNN-FP32 VGG-16 training on the four big cores of the Xiaomi 10 heats the
# device from 29 C to 68 C in about 2 minutes while the big-core frequency falls
# from 2.8 GHz to about 1.3 GHz.
THERMAL_START_C = 29.0
THERMAL_PEAK_C = 68.0
THERMAL_TIME_S = 120.0
THERMAL_FINAL_GHZ = 1.3

# CPU baselines, VGG-16 (CIFAR-10), batch 64, Xiaomi 11 Pro (SD888), per batch:
# (time at the highest CPU frequency s, time at the lowest s, energy H J, energy L J).
# "big" counts the prime (X1) and gold (A78) cores together. Mandheling Table 7.
SOURCE_SD888 = "Mandheling (Xu et al., MobiCom'22), Xiaomi 11 Pro (SD888)"
CPU_CONFIG_TABLE = {
    ("mnn-fp32", "big1"): (4.88, 10.81, 11.05, 6.90),
    ("mnn-fp32", "big2"): (2.87, 5.89, 12.85, 7.50),
    ("mnn-fp32", "big4"): (2.14, 3.86, 11.90, 7.10),
    ("mnn-fp32", "little1"): (25.20, 42.57, 13.35, 21.95),
    ("mnn-fp32", "little4"): (10.75, 17.06, 14.85, 9.55),
    ("mnn-fp32", "all8"): (4.50, 7.58, 25.40, 12.45),
    ("mnn-int8", "big1"): (5.59, 14.75, 9.85, 4.35),
    ("mnn-int8", "big2"): (3.07, 7.37, 10.60, 5.25),
    ("mnn-int8", "big4"): (1.79, 3.80, 7.90, 4.55),
    ("mnn-int8", "little1"): (40.13, 81.20, 12.65, 25.85),
    ("mnn-int8", "little4"): (10.36, 20.64, 10.35, 5.95),
    ("mnn-int8", "all8"): (2.71, 4.96, 12.10, 6.20),
}
# The workload of the table (and of the graph-preparation figure). NITI, the paper's
# default algorithm, trains VGG without batch normalisation (integer-only layers), and
# every method trains the same model, so the VGGs here have none.
VGG16_CIFAR = {"model": "vgg16", "mode": "training", "batch": 64, "input_size": 32,
               "num_classes": 10, "options": {"batch_norm": False}}

# Graph preparation: rebuilding the DSP compute graph costs this much per batch (VGG-16).
GRAPH_PREPARE_MS = {"tflite": 304.0, "mnn": 212.0}

# Training is ~7x inference at batch 64 (theory ~3x): weight-gradient kernels optimise poorly.
TRAINING_OVER_INFERENCE = 7.0

# MNN-FP32 on the GPU (OpenCL): GPU utilisation is only 30-50 % during training (we take the
# middle, 40 % +- 25 %, for VGG-16 batch 64 on the Xiaomi 11 Pro).
GPU_UTILISATION_PCT = 40.0
