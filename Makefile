# Every target creates the virtualenv and installs what it needs, so each works on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo lobsters lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

demo: $(STAMP)
	$(BIN)/python examples/quickstart.py

lobsters: $(STAMP)
	$(BIN)/python -m noria_py.workloads.lobsters.cli --scale 0.05 --rate 50 --duration 20 --warmup 5

lint: $(STAMP)
	$(BIN)/ruff check noria_py tests benches examples
	$(BIN)/ruff format --check noria_py tests benches examples

bench: $(STAMP)
	$(BIN)/python benches/read_write.py

clean:
	rm -rf $(VENV)
