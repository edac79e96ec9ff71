"""Reference figures of DynO (calibration facts), typed in with their sources.

Almeida, Laskaridis, Venieris, Leontiadis, Lane, "DynO: Dynamic Onloading of
Deep Neural Networks from Cloud to Device", ACM TECS 2022, as restated in
``shared/design/seeds/dyno.md``.
"""

from __future__ import annotations

SOURCE = "DynO (Almeida et al., ACM TECS'22)"

# A ~200 KB ReLU activation of ResNet-18: the layer3 block output, 256 x 14 x 14 FP32
# (196 KiB), on the Jetson AGX Xavier's CPU (MAXN).
RELU_MODEL = "resnet18"
RELU_LAYER = "layer3.0.relu"
LOSSLESS_REDUCTION_PCT = 30.0  # lossless packing removes ~30 %
LOSSLESS_TIME_MS = 0.1  # ... in under 0.1 ms
ISQUANT4_REDUCTION_PCT = 95.0  # 4-bit ISQuant + shuffle + LZ4 removes up to 95 %
ISQUANT4_TIME_MS = 0.32  # ... in under 0.32 ms

# How closely the notes state the three size figures ("about", "up to", "reach"): the
# checks' tolerances (%), also the weights of the joint fit (validation.dyno.fit_packing).
LOSSLESS_REDUCTION_TOL_PCT = 10.0
ISQUANT4_REDUCTION_TOL_PCT = 5.0
VGG19_MAX_RATIO_TOL_PCT = 25.0

# Quantisation alone: 4-10.6x smaller than FP32 (8 down to 3 bits).
QUANT_ONLY_RATIO = {8: 4.0, 3: 10.6}
# Whole-pipeline ratios reach 60x on VGG19's ReLU layers.
VGG19_MAX_RATIO = 60.0
# The ReLU-only filter cuts the split points by about 81 %.
RELU_FILTER_REDUCTION_PCT = 81.0
DYNO_MODELS = ("inception_v3", "resnet152", "vgg19", "mobilenet_v2")
# The scheduler's own cost on the Jetson's CPU: at most 14 ms (11 ms geometric mean).
SCHEDULER_MAX_MS = 14.0
SCHEDULER_GEOMEAN_MS = 11.0
