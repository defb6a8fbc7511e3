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
CMAKE_CONFIGURE := cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	$(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))

.PHONY: all deps configure build quickstart test bench clean format format-check

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

# Every C++ file as the repository's .clang-format (Google base, 100 columns) has it.
format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror \
	  || { echo "format-check: run 'make format'" >&2; exit 1; }

clean:
	rm -rf $(BUILD_DIR)
