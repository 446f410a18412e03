# thalabus-graph: `make demo`, `make test`, `make bench`. Each target sets up what it needs.
# `make test` runs on the Neo4j a start gets by default (2026.x with a JDK 21+, else 5.26 LTS);
# `make test-lts` and `make test-2026` run the integration suite on one line, `make wheel-check`
# builds the wheel and drives it from a fresh venv outside the checkout; `.ci/run` runs
# make test, make test-lts and make wheel-check.
PYTHON ?= python3
NEO4J_2026 ?= 2026.09.0
NEO4J_LTS ?= 5.26.31
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-lts test-2026 wheel-check lint unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[local,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m thalabus_graph.demo

lint: $(STAMP)
	$(VENV)/bin/ruff check thalabus_graph tests benchmarks
	$(VENV)/bin/mypy --strict thalabus_graph

test: $(STAMP) lint
	$(PY) -m pytest -q --durations=15

# The integration suite on one Neo4j line, always on a launcher server of that version,
# whatever NEO4J_URI says: the 5.26 LTS (Java 17+) and the newest 2026.x release the launcher
# runs (JDK 21+, the line Aura runs). test-lts leaves out the tests marked fixed_version (they
# start their own server of a version they name) and line_neutral (what they check does not
# depend on the line; other tests run their statements on it): `make test` ran them. Its
# property tests draw 40% of their examples (tests/support/examples.py). Its engine runs every
# phrase through its own statements (THALABUS_PROCEDURES=off) while make test's uses the
# procedure plugin the launcher installs: each path is covered, each line too, and the
# conformance tests (test_procedures_phrase) compare the two paths on both lines.
test-lts: $(STAMP)
	env -u NEO4J_URI THALABUS_NEO4J_VERSION=$(NEO4J_LTS) THALABUS_TEST_EXAMPLES=0.4 \
	    THALABUS_PROCEDURES=off \
	    $(PY) -m pytest -q \
	    -m "not fixed_version and not line_neutral" tests/integration

test-2026: $(STAMP)
	env -u NEO4J_URI THALABUS_NEO4J_VERSION=$(NEO4J_2026) $(PY) -m pytest -q tests/integration

wheel-check:
	PYTHON=$(PYTHON) .ci/wheel-check

unit: $(STAMP)
	$(PY) -m pytest -q tests/unit

bench: $(STAMP)
	mkdir -p bench-results
	$(PY) -m benchmarks.parse_bench --json bench-results/parse.json
	$(PY) -m benchmarks.rerank_throughput --json bench-results/rerank.json
	$(PY) -m benchmarks.embed_throughput --json bench-results/embed.json
	$(PY) -m benchmarks.ingest_throughput --json bench-results/ingest.json
	$(PY) -m benchmarks.filtered_search --json bench-results/filtered_search.json
	$(PY) -m benchmarks.quality --data ../shared/data/scifact --split train \
	    --json bench-results/quality.json
	$(PY) -m benchmarks.policies --data ../shared/data/xquad-r \
	    --json bench-results/policies.json

clean:
	rm -rf $(VENV) .thalabus bench-results

.PHONY: stress
stress: $(STAMP)  # the slow adversarial tests: long fuzzing, 8 writers for 20 s, SIGKILL of Neo4j
	THALABUS_STRESS=1 $(PY) -m pytest -q -m stress tests/adversarial
