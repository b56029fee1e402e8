# Two commands a newcomer needs: `make run GOAL="..."` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

DEFAULT_MODEL := qwen2.5-coder-1.5b
GOAL ?= Write a haiku about autumn to haiku.txt
ARGS ?=
# every third goal of bench/everyday_goals.py: the part measured after issue 17 (docs/benchmarks.md)
EVERYDAY_PART := similar_name,count_lines,two_hops,csv_sum,three_lines,reverse_lines,order_value,count_errors,iso_dates,rename_file,people_csv,fizzbuzz_function

.PHONY: run test lint typecheck pytest models bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0  # the CPU build; unpinned would pull CUDA
	$(BIN)/python -m pip install -q -e '.[all,dev]'
	touch $(STAMP)

# the default model is fetched only for a run that uses it (no --model, no AUTONOMA_MODEL)
run: $(STAMP)
ifeq ($(strip $(filter --model -m --model=%,$(ARGS))$(AUTONOMA_MODEL)),)
	$(BIN)/autonoma models pull $(DEFAULT_MODEL)
endif
	$(BIN)/autonoma run "$(GOAL)" $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports  # the layers and no import cycles ([tool.importlinter] in pyproject.toml)

typecheck: $(STAMP)
	$(BIN)/mypy

# the tests without a real model on two workers (pytest-xdist), then alone those with one (a
# model's steps use both cores) and those that count the sandbox uid's processes
pytest: $(STAMP)
	$(BIN)/pytest -m "not e2e and not alone" -n 2 --dist loadgroup
	$(BIN)/pytest -m "e2e or alone"

test: lint typecheck pytest

models: $(STAMP)
	$(BIN)/autonoma models pull smollm2-135m
	$(BIN)/autonoma models pull qwen2.5-coder-1.5b

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[all,dev,bench]'
	$(BIN)/python bench/llm_valid_actions.py
	$(BIN)/python bench/llm_throughput.py
	$(BIN)/python bench/llm_client_overhead.py
	$(BIN)/python bench/agent_demo.py --runs 6
	$(BIN)/python bench/agent_decisions.py
	$(BIN)/python bench/agent_prompt_tokens.py
	$(BIN)/python bench/memory_retrieval.py
	$(BIN)/python bench/memory_context.py
	$(BIN)/python bench/planning_makespan.py
	$(BIN)/python bench/tool_retrieval.py
	$(BIN)/python bench/reflection_loops.py
	$(BIN)/python bench/everyday.py --label json_part --actions json --goals $(EVERYDAY_PART)
	$(BIN)/python bench/everyday.py --label code_part --actions code --goals $(EVERYDAY_PART)
	$(BIN)/python bench/judge.py --label shipped --goals $(EVERYDAY_PART)
	$(BIN)/python bench/llm_speculative.py
	$(BIN)/python bench/mcp_servers.py
	$(BIN)/python bench/plot.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
