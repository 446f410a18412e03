# thalabus-graph: `make demo`, `make test`, `make bench`. Each target sets up what it needs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[local,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m thalabus_graph.demo

lint: $(STAMP)
	$(VENV)/bin/ruff check thalabus_graph tests
	$(VENV)/bin/mypy --strict thalabus_graph

test: $(STAMP) lint
	$(PY) -m pytest -q

unit: $(STAMP)
	$(PY) -m pytest -q tests/unit

bench: $(STAMP)
	mkdir -p bench-results
	$(PY) -m tests.benchmarks.parse_bench --json bench-results/parse.json
	$(PY) -m tests.benchmarks.rerank_throughput --json bench-results/rerank.json
	$(PY) -m tests.benchmarks.embed_throughput --json bench-results/embed.json
	$(PY) -m tests.benchmarks.ingest_throughput --json bench-results/ingest.json
	$(PY) -m tests.benchmarks.filtered_search --json bench-results/filtered_search.json
	$(PY) -m tests.benchmarks.quality --data ../shared/data/scifact --split train \
	    --json bench-results/quality.json
	$(PY) -m tests.benchmarks.policies --data ../shared/data/xquad-r \
	    --json bench-results/policies.json

clean:
	rm -rf $(VENV) .thalabus bench-results
