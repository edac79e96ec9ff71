"""Xenos / d-Xenos: the C6678 references, checks and fit."""
