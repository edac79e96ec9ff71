"""Typed schemas of the YAML inputs (SoC, experiment) and their loading."""
