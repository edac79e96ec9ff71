"""Calibration fits: physically meaningful SoC parameters fitted to reference data.

Each module fits a few named parameters of one SoC file to one data set and
prints the fitted values; the values are then written into the SoC YAML with a
comment naming the data. Validation checks (``socsim validate``) compare the
simulator with the same references.
"""
