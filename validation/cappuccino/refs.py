"""Reference measurements from the Cappuccino paper (calibration figures).

Motamedi, Fong, Ghiasi, "Cappuccino: Efficient CNN Inference Software Synthesis
for Mobile System-on-Chips", IEEE Embedded Systems Letters 2018 (arXiv
1707.02647), as restated in ``shared/design/seeds/cappuccino_xenos.md``. Nexus 5
(Snapdragon 800); 100 repetitions with the minimum and maximum dropped.
"""

from __future__ import annotations

SOURCE = "Cappuccino (Motamedi et al., IEEE ESL 2018), Nexus 5 (SD800)"
SOC = "snapdragon800"

# Inference time (ms): single-threaded Java baseline, Cappuccino's parallel program in exact
# mode, and with imprecise arithmetic (vector code) in every layer.
MODES = ("baseline", "parallel", "imprecise")
NEXUS5_MS = {
    "alexnet": (33848.40, 947.15, 836.32),
    "squeezenet1_0": (43932.73, 1302.10, 161.50),
    "googlenet": (84404.40, 2651.12, 2478.09),
}

# The zoo model each CNN runs as: the BVLC Caffe forms of AlexNet (two towers, LRN) and
# GoogLeNet (5x5 convolutions, LRN, no batch norm), E: the notes name the CNNs, not their
# form; mobile RenderScript runtimes of the time converted Caffe models (CNNdroid), and
# SqueezeNet 1.0 (torchvision's squeezenet1_0 is the same network) is itself a Caffe release.
ZOO_MODEL = {"alexnet": "alexnet_caffe", "squeezenet1_0": "squeezenet1_0",
             "googlenet": "googlenet_caffe"}

# SqueezeNet energy on the Nexus 5: single-threaded 26.39 J vs Cappuccino 3.38 J. The note
# gives them "per 1000 runs", which no run length matches (26 mJ for a 44 s run); as energy
# per inference the single-threaded figure is 0.60 W over 43.9 s, and Cappuccino's 3.38 J is
# 2.6 W over the 1.3 s exact-mode run (21 W over the 0.16 s imprecise run is impossible on a
# phone). So the comparison that the figures support is the ratio, single-threaded over
# Cappuccino in exact mode.
ENERGY_SINGLE_J = 26.39
ENERGY_CAPPUCCINO_J = 3.38
