"""Networks between devices: link presets, bandwidth traces and radio energy.

* :mod:`.presets`: named links (``3g``, ``4g``, ``wifi5``, ``gbe``) with their
  uplink/downlink bandwidth, round-trip time and radio;
* :mod:`.radio`: radio interfaces as RRC state machines (promotion, tail,
  throughput-linear transfer power) for LTE, 3G and Wi-Fi;
* :mod:`.traces`: time-varying bandwidth from a file or a generator;
* :mod:`.build`: turning an experiment's ``links:`` into channels and radios.
"""
