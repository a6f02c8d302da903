# scholarhouse — every target sets itself up: a fresh machine needs only Python 3.11 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home

.PHONY: demo test dev screenshots bench bench-resolution cluster-demo install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

$(DAGSTER_HOME)/dagster.yaml: dagster_home.yaml
	mkdir -p $(DAGSTER_HOME)
	cp dagster_home.yaml $(DAGSTER_HOME)/dagster.yaml

demo: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/python -m pipelines.demo

test: $(STAMP)
	$(BIN)/python -m pytest

# The UI and the daemon (schedules, backfills, run queue), through the project's [tool.dg] settings.
dev: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dg dev -h 127.0.0.1 -p 3000

# Re-take docs/*.png: two demo nights in a temporary instance, the UI and the report in headless Chromium.
screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py

# Not part of `make test`: generates 1k/10k/100k-profile corpora and times every stage (long).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python scripts/bench.py $(BENCH_ARGS)

# Author and paper matcher quality on public data (INSPIRE-HEP, DBLP-Scholar, Cora) and a synthetic set.
bench-resolution: $(STAMP)
	$(BIN)/python scripts/bench_resolution.py $(BENCH_RESOLUTION_ARGS)

# Not part of `make test`: one synthetic 10k night on two Celery workers with the instance on PostgreSQL
# (both from Debian packages, started on 127.0.0.1 in a temporary folder and stopped at the end), then the
# same night in one process; every table compared (docs/scaling.md, deploy/README.md). CLUSTER_ARGS="--profiles 1000".
cluster-demo: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,cluster]'
	$(BIN)/python scripts/cluster_demo.py $(CLUSTER_ARGS)

clean:
	rm -rf $(VENV) .dagster_home warehouse/*.duckdb warehouse/exports
