"""Engine-level references: the SD865 DSP op table and batch cliff, graph preparation,
the offload switch and the SD865 thermal case (checks and fits)."""
