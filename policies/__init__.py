"""gpufleet's CrossGuard policy pack: one rule per file under rules/, assembled in pack.py."""
