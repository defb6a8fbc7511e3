# Thin wrappers over CMake. `make quickstart` and `make test` each install what they need first.
BUILD_DIR ?= build
JOBS ?= 2
KVSWEEP := $(BUILD_DIR)/orchestrator/kvsweep
DB ?= kvsweep.db

.PHONY: all deps configure build quickstart test bench clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

quickstart: build
	$(KVSWEEP) --db $(DB) run scenarios/quickstart.yaml

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	@for b in $(BUILD_DIR)/bench/*_bench; do echo "== $$b"; $$b; done

clean:
	rm -rf $(BUILD_DIR)
