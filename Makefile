# Two commands on a fresh machine: `make demo` and `make test`. Both install what they need first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: install demo test bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check pip==25.3
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $(STAMP)

# The tests also run the optional backends (hf-fill-mask, sentence embeddings) and drive a browser;
# `make demo` stays lean.
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,hf,embeddings,browser]'
	touch $(TEST_STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/express demo

# The browser tests need Debian's Chromium; installed here when missing (as root), never by Playwright.
# Two xdist workers (pytest-xdist, dev extra), each taking whole test modules (pyproject.toml addopts).
test: $(TEST_STAMP)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium chromium-driver)
	$(BIN)/python -m pytest -n 2

clean:
	rm -rf $(VENV) data demo-work
