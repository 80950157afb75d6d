# ftuner — top-level commands. `make run` and `make test` work on a fresh Debian 12
# machine as root: they install what is missing (tools/setup.sh), then build.

CARGO ?= cargo
PROFILE ?= release
CARGO_PROFILE_FLAG = $(if $(filter release,$(PROFILE)),--release,)
BIN = target/$(PROFILE)
LIT ?= $(shell command -v lit 2>/dev/null || echo "python3 -m lit")
# The Python environment tools/setup.sh creates (torch, torch-mlir, maturin, pytest).
FTUNER_VENV ?= $(HOME)/.cache/ftuner/venv
export FTUNER_VENV
PYTHON = $(FTUNER_VENV)/bin/python

.PHONY: setup build python run run-cli test test-cargo test-lit test-python test-fuzz test-gpu lint fmt clean docs bench-parser

setup:
	bash tools/setup.sh

build: setup
	$(CARGO) build $(CARGO_PROFILE_FLAG) --workspace --bins

# The `ftuner` Python package (the Rust extension built by maturin, installed in the
# environment as an editable package).
python: build
	cd python && VIRTUAL_ENV=$(FTUNER_VENV) $(FTUNER_VENV)/bin/maturin develop --release --quiet

# The main job: BERT-base (12 layers, random weights) compiled from PyTorch through the
# package, once, with dynamic batch and sequence length, then served at lengths drawn from
# GLUE, each checked against and timed beside PyTorch eager.
run: python
	$(PYTHON) examples/serve_bert.py

# The command-line tools on examples shipped in the repo: a torch-mlir dense layer with a
# dynamic batch dimension, canonicalized, patched with uKernels for this machine, lowered to
# loops over static tiles, then run at a batch of 37 rows and checked against the layer as
# read; the same for a BERT encoder layer at sequence length 7, its elementwise chains
# (LayerNorm, GELU, softmax pieces) fused first.
run-cli: build
	$(BIN)/ftuner-opt examples/dense_dynamic.mlir --canonicalize --cse --patch-ukernels=target=host --mlir-pass-statistics
	$(BIN)/ftuner-opt examples/dense_dynamic.mlir --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' --mlir-timing
	$(BIN)/ftuner-run examples/dense_dynamic.mlir --shape 0=37x768 --pass-pipeline='builtin.module(canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' --check
	$(BIN)/ftuner-run examples/bert_layer_dynamic.mlir --shape 0=1x7x768 --pass-pipeline='builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' --check --bench 10
	$(BIN)/ftuner-translate examples/dense_dynamic.mlir --emit=asm -o dense_dynamic.s
	@echo "dense_dynamic.s: $$(grep -c 'vfmadd' dense_dynamic.s || true) FMA instructions in the compiled dense layer"
	$(BIN)/ftuner-translate examples/dense_dynamic.mlir --emit=ptx --target=cuda:sm_80 -o dense_dynamic.ptx
	@echo "dense_dynamic.ptx: $$(grep -c '.entry' dense_dynamic.ptx || true) thread-block kernels for sm_80 (one per tile size of the patch plan)"
	rm -f target/make-run-tuning.db*
	$(BIN)/ftuner-tune tune examples/dense_dynamic.mlir --db target/make-run-tuning.db --trials 8 --quiet
	$(BIN)/ftuner-opt examples/dense_dynamic.mlir --patch-ukernels='tuning-db=target/make-run-tuning.db' --mlir-pass-statistics -o /dev/null

lint: setup
	python3 tools/lint/sizes.py
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy $(CARGO_PROFILE_FLAG) --workspace --all-targets -- -D warnings

test-cargo: setup
	$(CARGO) test $(CARGO_PROFILE_FLAG) --workspace

test-lit: build
	FTUNER_PROFILE=$(PROFILE) $(LIT) -sv lit-tests

# The package against PyTorch: the API on small models, then every whole model (reduced
# configurations; `pytest --full` for the real sizes).
test-python: python
	cd python && $(PYTHON) -m pytest -q tests

# Driver-level mutation fuzzing (docs/robustness.md): seeded mutations of the examples and
# lit inputs through ftuner-opt, ftuner-run and ftuner-translate; any crash fails.
FUZZ_CASES ?= 1000
test-fuzz: build
	FTUNER_PROFILE=$(PROFILE) python3 tools/robustness/fuzz_drivers.py --cases $(FUZZ_CASES) --seed 1 --timeout 60 --allow-hangs

# Coverage-guided fuzzing (docs/robustness.md): the cargo-fuzz targets parse, canonicalize
# and npy, built on the stable toolchain (RUSTC_BOOTSTRAP=1), FUZZ_COV_RUNS inputs each
# from libFuzzer seed 1 (the same inputs every run; at most 300 s each); a crash fails.
FUZZ_COV_RUNS ?= 200000
.PHONY: test-fuzz-cov
test-fuzz-cov:
	command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --version 0.13.2 --locked
	FUZZ_ARGS="-seed=1 -runs=$(FUZZ_COV_RUNS)" bash fuzz/run.sh 300

# The GPU check (tools/gpu/check.sh): every GPU test where an NVIDIA GPU is present; one
# line and success elsewhere (CI).
test-gpu:
	bash tools/gpu/check.sh

test: lint test-cargo test-lit test-python test-fuzz test-fuzz-cov test-gpu

docs: setup
	$(CARGO) run -q -p ftuner-odsgen --bin ftuner-odsgen -- ir-specs docs/dialects

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
