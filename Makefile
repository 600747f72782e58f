# Everything from nothing: a Python 3.11 on PATH is all these targets need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[ja,images,parquet,bench,test,spark,serve]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/pagetwin dedup examples/debian-docs.warc.gz --out out/demo --replace
	@echo "results: out/demo/clusters.jsonl, out/demo/pairs.jsonl, out/demo/summary.json"

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf $(VENV) out
