# Everything from nothing: a Python 3.11 on PATH is all these targets need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test native bench clean

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

# Rebuild the Cython modules in place after editing a .pyx. The venv's own setuptools may be too old
# for pyproject's build requirements, so they go into a folder of their own, as pip's isolated build does.
BUILD_TOOLS := $(VENV)/build-tools
native: $(STAMP)
	$(PY) -m pip install -q --target $(BUILD_TOOLS) --upgrade "setuptools>=77" "cython>=3.0"
	PYTHONPATH=$(BUILD_TOOLS) $(PY) setup.py -q build_ext --inplace
	rm -rf build
	$(PY) -c "import importlib; [importlib.import_module('pagetwin.' + m) for m in ('text._fast', 'fingerprints._sketch', 'html._walk', 'html._stats', 'html._page', '_edges', 'sources._warc')]; import pagetwin.html.blocks as b; print(b.native_status() or 'native modules: built, and the native walk is in use')"

clean:
	rm -rf $(VENV) out
