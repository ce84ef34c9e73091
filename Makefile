# torch2tosa: everything a fresh machine needs goes through these targets.
#   make demo   set up, compile a bundled example GRU model and check it on the TOSA reference model
#   make test   set up, run the lit suite and the pytest end-to-end tests (Vela included)
#   make bench  set up, benchmark against torch-mlir's TOSA path (writes bench/results.json)

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test lit pytest bench clean

setup: $(STAMP)

# pip's --find-links picks up a local torch wheel where the machine provides one.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,ethos-u]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/torch2tosa-compile gru_bidirectional -o out --check

lit: $(STAMP)
	$(VENV)/bin/lit -sv test

pytest: $(STAMP)
	$(PY) -m pytest -q -n 2 test/e2e

test: lit pytest

bench: $(STAMP)
	$(PY) bench/bench.py

clean:
	rm -rf $(VENV) out test/Output bench/out
