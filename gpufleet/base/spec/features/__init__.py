"""A feature's stack keys, one feature a module (its block's model), each beside its checks (`<feature>_checks.py`):
GPU operators, sharing, RDMA, storage, registry mirrors and images, observability, reservations, DRA, topology,
serving, cold start, add-ons."""
