"""Xenos (Zhang et al., "Xenos: Dataflow-Centric Optimization to Accelerate Model Inference
on Edge Devices", 2023) and d-Xenos, its distributed form.

* :mod:`.layouts`: the access order of an operator-centric DSP library (which
  order each operator writes its output and reads its input in), giving each
  kernel's ``read_stride`` (the access-order cost lives in the cost model);
* :mod:`.linking`: vertical optimisation, operator linking over Xenos'
  pattern list (producers write in their consumer's order, paying duplicated
  halo rows) and its fused CBR operators;
* :mod:`.partition` and :mod:`.dos`: horizontal optimisation, the DSP-aware
  operator split across DSP units (output channels first, then rows/columns,
  parameters split to fit each unit's L2), and the naive row split of the
  vanilla library;
* :mod:`.policy`: the ``xenos`` policy (switches ``horizontal``, ``vertical``);
* :mod:`.distributed`: the ``d-xenos`` policy (several boards, parameter
  server or ring synchronisation, inH / inW / outC / mixed partitions).
"""
