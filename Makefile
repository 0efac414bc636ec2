# The two commands (README): `make plan` and `make test`. Both set up .venv on a fresh machine.
VENV ?= .venv
STACK ?= dev
# The stack's platform, from its stack file's `platform:` key (gpufleet:cluster.platform): `make plan` installs that
# platform's extra (pyproject.toml: a platform's extra is its name, gpufleet/base/platforms/<name>/).
PLATFORM ?= $(shell sed -n 's/^ *platform: *\([a-z0-9_-]*\).*/\1/p' stacks/Pulumi.$(STACK).yaml 2>/dev/null | head -n 1)

# The installs go through uv (astral.sh/uv, from PyPI, pinned here): it resolves and links the same wheels as pip in a
# few seconds of CPU where pip took ~55 s (most of it compiling every module of three cloud SDKs to bytecode; Python
# compiles on first import instead, only what a run imports). Its cache lives in ~/.cache/uv, outside the checkout.
# setuptools explains its editable finder with a BuildBackendWarning on every install ("Editable installation":
# information, not a problem; pyproject maps components/ and policies/ into gpufleet, so it must use the finder):
# PYTHONWARNINGS keeps a clean install quiet.
UV_VERSION ?= 0.13.8

# Bytecode is written. This machine's environment (and CI's, the same image) sets PYTHONDONTWRITEBYTECODE=1, and uv,
# unlike pip, compiles nothing at install: every Python process of a run (both test workers, each CLI test's
# interpreter, each plan's) then compiled each module it imported from source again, the cloud SDKs' large modules
# most of all: ~90 of the ~450 CPU-s of `make test` from a clean clone (bench/README.md, "Test suite time"). Unset for
# every target, Python compiles a module once, at its first import, into __pycache__ beside it (in .venv and in the
# checkout, where .gitignore keeps it out of git).
unexport PYTHONDONTWRITEBYTECODE
define venv_with_uv
	python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
endef
UV_PIP = UV_PYTHON=$(VENV)/bin/python $(VENV)/bin/uv pip install

# `make test`: dev, the test tools and every platform's extra (dev depends on gpufleet[all]).
$(VENV)/.installed: pyproject.toml
	$(venv_with_uv)
	PYTHONWARNINGS="ignore:Editable installation" $(UV_PIP) -q -e '.[dev]'
	touch $@

# `make plan` on a fresh machine: the core and one platform's extra (k3s for the default stack), not every cloud's SDK.
$(VENV)/.installed-%: pyproject.toml
	$(venv_with_uv)
	PYTHONWARNINGS="ignore:Editable installation" $(UV_PIP) -q -e '.[$*]'
	touch $@

.PHONY: plan test bench e2e mutate
# `gpufleet plan` validates every custom resource against the CRD in its pinned chart archive (docs/validation.md):
# here from ../shared/reference/charts when the checkout has it beside it (unless GPUFLEET_CHARTS_DIR is set), else
# from the cache `gpufleet charts fetch` fills. Without either the plan warns which kinds it did not validate.
ifneq ($(wildcard ../shared/reference/charts),)
plan: export GPUFLEET_CHARTS_DIR ?= $(abspath ../shared/reference/charts)
endif
# A .venv that `make test` set up has every platform already; a stack file without a platform (or none) gets them all.
plan: $(if $(wildcard $(VENV)/.installed),$(VENV)/.installed,$(VENV)/.installed-$(or $(PLATFORM),all))
	$(VENV)/bin/gpufleet plan $(STACK)

# Two workers; --dist loadfile gives a worker the next whole test file when it runs dry, so a file's module fixtures
# (the fleet plan, the three prod-gke CLI runs, the wheel) run once and neither worker idles at the end while the
# other works through a queue handed out up front (the default --dist load left one idle for 47 s). The queue is
# tests/schedule.py's: the heaviest files first, the no-traceback sweep one stack at a time last. At most 240 s from
# a clean clone on 2 cores, install included (bench/README.md); the run ends with its ten slowest tests.
test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -n 2 --dist loadfile

bench: $(VENV)/.installed
	$(VENV)/bin/python bench/plan.py
	$(VENV)/bin/python bench/policy.py
	$(VENV)/bin/python bench/fleet.py
	$(VENV)/bin/python bench/scale.py

# The real Pulumi CLI, policy pack and a real API server (docs/e2e.md): builds the tools once (cached in
# ~/.cache/gpufleet-e2e), then runs tests/e2e, which `make test` leaves out. No test of the tier takes over 90 s
# with its fixtures on 2 cores (docs/e2e.md): one that passes 600 s is stopped and fails with its stack printed.
e2e: $(VENV)/.installed
	tests/e2e/build.sh
	GPUFLEET_E2E=1 $(VENV)/bin/python -m pytest tests/e2e -rs --durations=15 --timeout 600

# Mutation testing (docs/testing.md): cosmic-ray mutates each tree of tests/mutation/*.toml (the policy rules, the spec,
# the component trees that emit what runs on clusters) in a temporary worktree of HEAD and runs that tree's tests
# against every mutant. Not in CI, not in `make test`: the full run takes days on two cores, so the default is the
# documented sample, 100 mutants per tree (MUTATE_ARGS="" for every mutant).
MUTATE_ARGS ?= --sample 100
mutate: $(VENV)/.installed
	PYTHONWARNINGS="ignore:Editable installation" $(UV_PIP) -q -e '.[dev,mutation]'
	$(VENV)/bin/python -m tests.mutation.run $(MUTATE_ARGS)
