"""NestDNN (Fang et al., MobiCom'18): resource-aware multi-tenant scheduling.

* :mod:`.scheduler` -- the cost function and the greedy MinTotalCost /
  MinMaxCost allocation (with its cached variant);
* :mod:`.manager` -- the app lifecycle, switching and accounting on the engine;
* :mod:`.policies` -- ``nestdnn-mintotal``, ``nestdnn-minmax``, ``nestdnn-baseline``;
* :mod:`.switching_policy` -- ``nestdnn-switching``, the model-switching benchmark.
"""
