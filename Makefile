# Every target creates the virtualenv and installs what it needs, so each works on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo lobsters lint bench clean sysdeps

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# System packages the tests use: Java (Spark), MariaDB server and client (wire and baseline
# tests), MariaDB Connector/J (JDBC loads), Chromium and its WebDriver (the dashboard's browser
# test). Installed with apt-get when missing and we may (root); otherwise say what is missing.
sysdeps:
	@if ! command -v java >/dev/null 2>&1 || ! command -v mariadbd >/dev/null 2>&1 \
	    || ! command -v mariadb >/dev/null 2>&1 \
	    || [ ! -e /usr/share/java/mariadb-java-client.jar ] \
	    || [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless mariadb-server mariadb-client libmariadb-java chromium chromium-driver; \
	  else \
	    echo "missing: Java, MariaDB, Connector/J and/or Chromium (apt-get install default-jre-headless mariadb-server mariadb-client libmariadb-java chromium chromium-driver)"; \
	    exit 1; \
	  fi; \
	fi

test: sysdeps $(STAMP)
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
