"""Cappuccino: its calibrated cells (checks) and the RenderScript/Java overhead fit."""
