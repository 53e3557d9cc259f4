# eris_lab: two commands do everything (README): `make report` and `make test`; a third, `make lab`
# (and `make tune`), opens the notebooks in JupyterLab (a Voila app). All create .venv when missing
# and install what they need; nothing is downloaded from model hubs.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# CPU build from this machine's disk. GPU users: make test TORCH_SPEC="torch" (or a CUDA wheel index).
TORCH_SPEC ?= torch==2.13.0
# llama.cpp is compiled by pip (about 6.5 minutes once; pip caches the wheel). GPU users:
#   CMAKE_ARGS="-DGGML_CUDA=on" make test
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PYTHONUNBUFFERED := 1

.PHONY: test test-slow test-all report lab tune bench install clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e ".[llm,eval,mcp,dev,report,lab]"
	touch $@

install: $(VENV)/.installed

## The tests: fast by default (real MiniLM, no model generation runs).
test: $(VENV)/.installed
	$(PY) -m pytest

## Slow tests only: llama.cpp generations, notebooks, long fuzzing.
test-slow: $(VENV)/.installed
	$(PY) -m pytest -m slow

test-all: $(VENV)/.installed
	$(PY) -m pytest -m "slow or not slow"

## The main job: the report (reports/<UTC stamp>/index.html; reports/latest -> the last good run).
## REPORT_ARGS="--quick" for small samples, "--params my.toml" for your catalogue, model, queries.
REPORT_ARGS ?=
report: $(VENV)/.installed
	$(PY) -m eris_lab report $(REPORT_ARGS)

## JupyterLab on notebooks/ (the .py sources open as notebooks), the .venv kernel, 127.0.0.1 only;
## prints the URL with its token. LAB_PORT=8888 for a fixed port (default: a free one).
LAB_PORT ?=
lab: $(VENV)/.installed
	$(VENV)/bin/eris-lab lab $(if $(LAB_PORT),--port $(LAB_PORT))

## Notebook 02 as a Voila app (sliders and plots, no code). TUNE_ARGS="-p queries=bfcl-pooled".
TUNE_PORT ?=
TUNE_ARGS ?=
tune: $(VENV)/.installed
	$(VENV)/bin/eris-lab tune-app $(if $(TUNE_PORT),--port $(TUNE_PORT)) $(TUNE_ARGS)

## Benchmarks print numbers; they are not tests.
bench: $(VENV)/.installed
	$(VENV)/bin/eris-lab bench route

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis reports
