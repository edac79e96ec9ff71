"""Mandheling (MobiCom'22): its references, checks, the MNN and preparation fits, and
the per-batch report (``python -m validation.mandheling.report RESULTS``)."""
