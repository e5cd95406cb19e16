# The README's two commands: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test install openapi clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

## make run: set up .venv, start the embedded Valkey (unless REDIS_URL is set), the API and a worker
run: $(VENV)/.installed
	$(BIN)/python -m service.devserver

## make test: install test dependencies and run the whole suite on throwaway servers: the tests
## that run alone (marker "serial": process fleets, timings) after the others, which share
## TEST_WORKERS pytest processes; when Debian's redis-server is installed, the store and API
## tests run again against it. Each step fails when it collects no tests.
TEST_WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest --durations=15

test: $(VENV)/.installed-test
	@$(PYTEST) -n $(TEST_WORKERS) -m "not serial"; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests - failing"; exit 1; fi; \
	[ $$rc -eq 0 ] || exit $$rc
	@$(PYTEST) -m serial; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: no serial tests collected - failing"; exit 1; fi; \
	[ $$rc -eq 0 ] || exit $$rc
	@if command -v redis-server >/dev/null 2>&1; then \
	  echo "make test: store and API tests again against $$(redis-server --version | cut -d' ' -f1-3)"; \
	  CARTOUCHE_TEST_REDIS_SERVER=$$(command -v redis-server) $(PYTEST) -n $(TEST_WORKERS) -m redis tests/store tests/api; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "make test: no store/API tests collected - failing"; exit 1; fi; \
	  exit $$rc; \
	fi

## make openapi: regenerate the checked-in contract from the code
openapi: $(VENV)/.installed
	$(BIN)/python -m service.openapi > openapi.yaml

clean:
	rm -rf $(VENV) var
