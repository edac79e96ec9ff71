"""Mandheling (Xu et al., MobiCom 2022) and the baselines it is compared with.

On-device training with an integer (mostly INT8) algorithm whose integer
operators run on the Hexagon DSP. Registered policies:

* ``tflite-fp32``, ``mnn-fp32``: FP32 training on CPU cores (``baselines``);
* ``mnn-int8``: the same integer algorithm as Mandheling, on CPU cores;
* ``mnn-gpu``: FP32 training on the GPU through MNN's OpenCL backend, with its
  memory limit (a run that does not fit ends with status ``oom``);
* ``mandheling``: CPU-DSP co-scheduling with four switchable techniques, one
  module each: ``co_scheduling`` (the dynamic programme), ``rescaling``
  (self-adaptive rescaling), ``batch_splitting``, ``subgraph_reuse`` and
  ``parallel`` (CPU-DSP parallel execution).

CPU-using policies take the paper's CPU configurations (``cpu.py``):
``cpu: big4 | big2 | big1 | little4 | little1 | all8`` and
``cpu_freq: max | min | governor``. See ``docs/mandheling.md``.
"""
