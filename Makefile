# torch2tosa: everything a fresh machine needs goes through these targets.
#   make demo   set up, compile a bundled example GRU model and check it on the TOSA reference model
#   make test   set up, run the lit suite and the pytest end-to-end tests (Vela included)
#   make bench  set up, benchmark against torch-mlir's TOSA path (writes bench/results.json)
#   make setup-vgf  add Arm's ML SDK for Vulkan (the vgf extra) and, as root with apt-get,
#               a Vulkan driver (Mesa's lavapipe): what test/e2e/test_vgf.py needs

PYTHON ?= python3
# The Pythons every pinned dependency publishes wheels for (pyproject.toml's requires-python).
PYTHONS := 3.11, 3.12 or 3.13
CHECK_PYTHON := import sys; v = sys.version_info[:2]; \
	sys.exit(0 if (3, 11) <= v <= (3, 13) else \
	f"== setup: $(PYTHON) is Python {v[0]}.{v[1]}; torch2tosa needs Python $(PYTHONS) \
	(the Pythons all its pinned dependencies publish wheels for): run make PYTHON=python3.12, \
	for instance")
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup setup-vgf demo test lit pytest bench clean

setup: $(STAMP)

# pip's --find-links picks up a local torch wheel where the machine provides one.
# pip prints each package as it downloads and installs it: a fresh set-up fetches torch,
# torch-mlir, tosa-tools, Vela and IREE and takes minutes, so it is not run --quiet.
$(STAMP): pyproject.toml
	@$(PYTHON) -c '$(CHECK_PYTHON)'
	@echo "== setup 1/3: creating the virtual environment $(VENV) with $$($(PYTHON) --version)"
	$(PYTHON) -m venv $(VENV)
	@echo "== setup 2/3: upgrading pip"
	$(PY) -m pip install --quiet --upgrade pip
	@echo "== setup 3/3: installing torch2tosa with its pinned dependencies (several minutes on a fresh machine)"
	$(PY) -m pip install -e '.[test,ethos-u,iree]'
	touch $(STAMP)
	@echo "== setup done: the commands (torch2tosa-compile, torch2tosa-opt, lit, ...) are in $(VENV)/bin;"
	@echo "   run them as $(VENV)/bin/torch2tosa-compile, or 'source $(VENV)/bin/activate' first"

# Opt-in, never part of setup or test: without it the VGF tests skip and say why. The
# driver is a system package: installed here only as root on a machine with apt-get;
# elsewhere the command to run is printed (docs/vgf.md).
VGF_APT := mesa-vulkan-drivers libvulkan1
setup-vgf: $(STAMP)
	@echo "== setup-vgf 1/2: Arm's ML SDK for Vulkan (the vgf extra)"
	$(PY) -m pip install -e '.[vgf]'
	@echo "== setup-vgf 2/2: a Vulkan driver ($(VGF_APT))"
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get install -y --no-install-recommends $(VGF_APT) || \
		{ apt-get update && apt-get install -y --no-install-recommends $(VGF_APT); }; \
	else \
		echo "   not root or no apt-get: install a Vulkan driver yourself, e.g." \
		     "sudo apt-get install $(VGF_APT)"; \
	fi

demo: $(STAMP)
	@echo "== demo: compiling the bundled 2-layer bidirectional GRU and checking it on the TOSA reference model"
	$(VENV)/bin/torch2tosa-compile gru_bidirectional -o out --check
	@echo "== demo done: out/gru_bidirectional.tosa and out/gru_bidirectional.mlir"
	@echo "   more: $(VENV)/bin/torch2tosa-compile --help (or 'source $(VENV)/bin/activate' to drop the $(VENV)/bin/)"

lit: $(STAMP)
	$(VENV)/bin/lit -sv test

pytest: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadgroup test/e2e

test: lit pytest

bench: $(STAMP)
	$(PY) bench/bench.py

clean:
	rm -rf $(VENV) out test/Output bench/out
