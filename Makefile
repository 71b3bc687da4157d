# The two commands: `make demo` and `make test` (plus `make bench`). All share one bootstrap.
.PHONY: bootstrap demo test test-cpp test-py validate notebooks notebooks-outputs notebook docs \
	docs-site docs-serve serve-site lint bench format clean

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
	@$(MAKE) --no-print-directory test-cpp test-py validate notebooks docs-site lint

test-cpp:
	cd build && ctest --output-on-failure -j 2

test-py:
	$(VENV)/python -m pytest -q sim/python/tests

validate:
	$(VENV)/lfsim validate --report validation/report.md

# Re-executes every notebook (fails if one no longer runs); their committed outputs are kept.
notebooks:
	$(VENV)/python -m pytest -q --nbmake notebooks

# Executes the notebooks and saves them with their outputs (figures visible on a code host).
notebooks-outputs: bootstrap
	$(VENV)/python scripts/execute_notebooks.py

# The documentation site in site/ (open site/index.html); every warning is an error.
docs: bootstrap
	@$(MAKE) --no-print-directory docs-site

docs-site:
	@# not --quiet: it hides the warnings, and --strict then has none to fail on
	NO_MKDOCS_2_WARNING=1 $(VENV)/mkdocs build --strict
	@echo "docs: site/index.html"

# The site with its search: a browser runs the search in a web worker, which it refuses to
# files opened from disk, so the site is served on this machine only (Ctrl-C stops it).
PORT ?= 8000
SITE ?= site
docs-serve: docs
	@$(MAKE) --no-print-directory serve-site

serve-site:
	@echo "docs: http://127.0.0.1:$(PORT)/ (Ctrl-C to stop)"
	@$(VENV)/python -m http.server --bind 127.0.0.1 --directory $(SITE) $(PORT)

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
