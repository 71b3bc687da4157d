# The two commands: `make demo` and `make test` (plus `make bench`). All share one bootstrap.
.PHONY: bootstrap demo test test-cpp test-py validate notebooks notebook lint bench format clean

VENV := .venv/bin
OUT ?= results

bootstrap:
	@scripts/bootstrap.sh

# Needs scenarios/incast.yaml (modes lossy, pfc, pfc_ecn, pfc_dcqcn, fc).
demo: bootstrap
	@$(VENV)/lfsim run incast --out $(OUT)/incast --plot
	@echo "demo: plots in $(OUT)/incast/plots/ (results in $(OUT)/incast/)"
	@$(VENV)/lfsim sweep incast --grid mode=lossy,pfc,pfc_ecn,pfc_dcqcn,fc --out $(OUT)/incast_modes

test: bootstrap
	@$(MAKE) --no-print-directory test-cpp test-py validate notebooks lint

test-cpp:
	cd build && ctest --output-on-failure -j 2

test-py:
	$(VENV)/python -m pytest -q sim/python/tests

validate:
	$(VENV)/lfsim validate --report validation/report.md

notebooks:
	$(VENV)/python -m pytest -q --nbmake notebooks

# Opens the notebooks in JupyterLab (installed into the venv on first use).
notebook: bootstrap
	@$(VENV)/pip install -q -r requirements-notebook.txt
	$(VENV)/jupyter lab notebooks

lint:
	$(VENV)/ruff check sim/python validation bench scripts notebooks
	$(VENV)/ruff format --check sim/python validation bench scripts notebooks
	$(VENV)/python scripts/attribute_tables.py --check

bench: bootstrap
	$(VENV)/python bench/run_bench.py

format:
	$(VENV)/ruff format sim/python validation bench scripts notebooks
	find models sim bench -name '*.cc' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf build
