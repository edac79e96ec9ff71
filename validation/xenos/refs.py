"""Reference figures from the Xenos paper.

Zhang et al., "Xenos: Dataflow-Centric Optimization to Accelerate Model Inference
on Edge Devices" (arXiv 2302.00282, 2023), as restated in
``shared/design/seeds/cappuccino_xenos.md`` (the calibration figures; nothing
beyond the notes).
"""

from __future__ import annotations

SOURCE = "Xenos (Zhang et al., arXiv 2302.00282)"
SOC = "tms320c6678"
FPGA = "zcu102"
# the processor whose units Xenos splits the work over, per board
PROCESSOR = {SOC: "dsp", FPGA: "npu"}
# the arithmetic each board's accelerator runs: FP32 on the C66x cores; INT8 on the ZCU102,
# whose accelerator is Xilinx's DPU (an INT8 engine, socs/zcu102.yaml) standing in for the
# paper's unpublished fabric design
PRECISION = {SOC: "fp32", FPGA: "int8"}

# The seven benchmark models of the single-board experiments (zoo names).
MODELS = ("mobilenet_v1", "squeezenet1_0", "shufflenet_v2", "resnet18", "centernet", "lstm",
          "bert_s")

# Calibration: horizontal optimisation alone cuts inference time by 17.9-43.9 % against
# Vanilla on the TMS320C6678 (the seed note's calibration figure).
HO_REDUCTION_PCT = (17.9, 43.9)
# ... and 80.4-96.2 % on the ZCU102 (same note; thousands of DSP slices).
FPGA_HO_REDUCTION_PCT = (80.4, 96.2)

