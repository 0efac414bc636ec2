# The two commands (README): `make plan` and `make test`. Both set up .venv on a fresh machine.
VENV ?= .venv
STACK ?= dev

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

.PHONY: plan test bench
plan: $(VENV)/.installed
	$(VENV)/bin/gpufleet plan $(STACK)

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -n 2

bench: $(VENV)/.installed
	$(VENV)/bin/python bench/plan.py
	$(VENV)/bin/python bench/policy.py
	$(VENV)/bin/python bench/fleet.py
