# Thin wrappers over CMake. `make quickstart` and `make test` each install what they need first:
# quickstart only what building the kvsweep binary takes, test also GoogleTest, Chromium, ...
BUILD_DIR ?= build
JOBS ?= 2
KVSWEEP := $(BUILD_DIR)/orchestrator/kvsweep
DB ?= kvsweep.db
# ccache, when installed, makes rebuilds and parallel checkouts cheap; paths are hashed relative
# to the checkout so two worktrees share one cache.
CCACHE := $(shell command -v ccache 2>/dev/null)
export CCACHE_BASEDIR := $(CURDIR)
# DEBUG_INFO: -g (gcc's RelWithDebInfo default) for a debugger; .ci/run passes -g1 (line tables:
# a crash still names file and line; far smaller objects to write and link, for CI's hour).
DEBUG_INFO ?= -g
CMAKE_CONFIGURE := cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 $(DEBUG_INFO) -DNDEBUG" \
	$(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))

.PHONY: all deps configure build quickstart test bench clean format format-check sanitize fuzz

all: build

deps:
	@scripts/install-deps.sh test

configure: deps
	@$(CMAKE_CONFIGURE) -DKVSWEEP_BUILD_TESTS=ON >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# A fresh checkout configures without tests and benchmarks (no GoogleTest needed); a build
# directory already configured keeps its setting. Either way only the kvsweep binary is built.
quickstart:
	@scripts/install-deps.sh build
	@[ -f $(BUILD_DIR)/CMakeCache.txt ] || $(CMAKE_CONFIGURE) -DKVSWEEP_BUILD_TESTS=OFF >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target kvsweep
	$(KVSWEEP) --db $(DB) run scenarios/quickstart.yaml

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	@for b in $(BUILD_DIR)/bench/*_bench; do echo "== $$b"; $$b; done

# One clang build directory serves `make sanitize` and `make fuzz`, so CI compiles the tree with
# clang once: every library, test and fuzzer instrumented with AddressSanitizer and
# UndefinedBehaviorSanitizer (float-cast-overflow included; the first report fails), plus
# libFuzzer's coverage hooks (KVSWEEP_FUZZ) in every library, which the tests' sanitizer runtime
# answers (a test's own objects go without them: no fuzzer runs them). It compiles every file
# on its own (KVSWEEP_UNITY=OFF), where the gcc build batches each library's files: a missing
# include or two files' clashing names fail here if the batches hid them.
# -gline-tables-only: reports still name file and line; full -g made each object 1.6x larger and
# cost 17% more compile time (sim/http/openai_api.cc), which CI's 60 minutes cannot spare.
SANITIZE_DIR ?= build-sanitize
export ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
.PHONY: sanitize-configure
sanitize-configure: deps
	@CC=clang CXX=clang++ cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
		-DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DKVSWEEP_SANITIZE=ON -DKVSWEEP_FUZZ=ON \
		-DKVSWEEP_BUILD_TESTS=ON -DKVSWEEP_UNITY=OFF $(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)) >/dev/null

# The whole suite in that build (the fuzzers are built too, for `make fuzz` after it), less the
# tests listed in tests/sanitize_skip.txt, with why each is out (docs/reliability.md, "How long
# CI takes"); `make test` runs them all.
SANITIZE_SKIP ?= $(shell sed -e '/^\#/d' -e '/^ *$$/d' tests/sanitize_skip.txt | paste -sd'|' -)
sanitize: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && ctest --output-on-failure -j $(JOBS) -E '$(SANITIZE_SKIP)'

# Every libFuzzer target in fuzz/ for FUZZ_SECONDS each, seeded from fuzz/corpus and the test
# fixtures; a crash or sanitizer report fails it and leaves the input in
# $(SANITIZE_DIR)/findings. On its own it builds only the fuzzers (and what they link).
FUZZ_SECONDS ?= 30
fuzz: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS) --target fuzzers
	@scripts/run-fuzzers.sh $(SANITIZE_DIR) $(FUZZ_SECONDS)

# Every C++ file as the repository's .clang-format (Google base, 100 columns) has it.
format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror \
	  || { echo "format-check: run 'make format'" >&2; exit 1; }

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR)
