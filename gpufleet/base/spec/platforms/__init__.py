"""A platform's own stack keys: its `cluster.<platform>` block and pool block models, and the checks that read only
them. Which checks run for a stack is the platform's traits' business (gpufleet/base/platforms/<name>/keys.py)."""
