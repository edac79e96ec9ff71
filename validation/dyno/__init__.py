"""DynO: packing and split-point references, checks, the packing fit and the
scheduler's own cost (``validation.dyno.overhead``)."""
