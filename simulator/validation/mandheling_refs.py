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
