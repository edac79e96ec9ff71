"""FlexDNN (Fang et al., SEC'20): content-adaptive early-exit inference.

* :mod:`.policy` -- ``flexdnn``: exit insertion plan, confidence-rule exits per
  frame, run-time adaptation of the exit thresholds.
"""
