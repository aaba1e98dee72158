# seqgrade: `make demo` and `make test` each create .venv when absent and install into it.
PYTHON ?= python3
# The checkout's own folder, wherever make runs from (a symbolic link to this Makefile included): an install
# made from a folder that only links to the checkout (tests/test_docs.py's workspace) must point .venv at the
# checkout, not at that folder.
ROOT := $(patsubst %/,%,$(dir $(realpath $(firstword $(MAKEFILE_LIST)))))
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.seqgrade-installed
# The CPU build of torch is installed first, on its own, so that nothing later resolves torch to a
# multi-GB CUDA build. On a machine whose pip does not find a CPU wheel for this spec, pass e.g.
#   make test TORCH_SPEC="torch==2.13.0 --index-url <your CPU wheel index>"
# If a CUDA build is pulled in anyway, install stops and says how to start again.
TORCH_SPEC ?= torch==2.13.0
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
DEMO_OUT ?= demo-out

.PHONY: install demo test check screenshots ablations clean

install: $(STAMP)

# An editable install compiles none of seqgrade's own modules: where PYTHONDONTWRITEBYTECODE is set (as on
# the machines we test on), every process would compile them again at each start (grader/ and reference/
# take about 60 ms of the batch workers' start-up, 35 ms of the batch's own), so install compiles them once.
$(STAMP): $(ROOT)/pyproject.toml $(ROOT)/constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) $(TORCH_SPEC)
	$(PIP) -c $(ROOT)/constraints.txt -e '$(ROOT)[test]'
	$(PY) -m compileall -q $(ROOT)/grader $(ROOT)/reference > /dev/null
	$(PY) -c "import importlib.metadata as md, sys; cuda = sorted(d.metadata['Name'] for d in md.distributions() if d.metadata['Name'].lower().startswith('nvidia-')); sys.exit(f'a CUDA build of torch was pulled in ({len(cuda)} nvidia packages, several GB): rm -rf $(VENV), then run make again with TORCH_SPEC naming a CPU wheel, e.g. TORCH_SPEC=\"torch==2.13.0 --index-url <a CPU wheel index>\" (see README, Where it runs)') if cuda else None"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/seqgrade demo --out $(DEMO_OUT)

# ruff first (lint and format check, settings in pyproject.toml; `ruff format .` fixes the format), then the
# tests in parallel, one pytest-xdist worker a core, a file to a worker (tests that share a module's expensive fixture
# stay together), the files with slow tests handed out first (tests/conftest.py).
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest -q -n auto --dist loadfile

# Everything that proves one assignment, in a few minutes: its reference tests, its checks against right and
# wrong code, its corpus graded through the sandbox, its self-checks, its release and nbgrader's round trip,
# and the rules every exercise of the course follows (tests/conftest.py, --assignment, says which tests).
#   make check ASSIGNMENT=rnn_lm
check: $(STAMP)
	@test -n "$(ASSIGNMENT)" || { echo "make check needs ASSIGNMENT=<id>, one of: $$(ls -d grader/assignments/*/ | xargs -n1 basename | grep -v "^__" | tr '\n' ' ')"; exit 2; }
	$(PY) -m pytest -q -n auto --dist loadfile --assignment=$(ASSIGNMENT)

# Removes each sandbox defence in turn and shows that a corpus test then fails (needs root and
# cgroup v1; about two minutes a defence). Not part of `make test`; tests/test_ablations.py keeps it current.
ablations: $(STAMP)
	$(PY) -m tests.corpus.ablate

# Needs Debian's chromium (apt-get install chromium); rewrites docs/screenshot-*.png from a fresh demo.
SCREENSHOT_DIR ?= docs
screenshots: $(STAMP)
	$(PY) docs/screenshots.py $(SCREENSHOT_DIR)

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .hypothesis .ablations
