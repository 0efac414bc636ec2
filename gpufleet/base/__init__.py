"""The foundation every other layer builds on: the stack spec (`spec/`), the catalog of facts with their sources
(`catalog/`), every upstream pin (`versions.py`), label, taint and annotation keys (`labels.py`), and the pure
functions over them (`node_labels.py`, `sharing.py`, `capacity.py`). Nothing here imports components, policies or
the application (tests/unit/test_layers.py)."""
