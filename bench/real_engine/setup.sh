#!/usr/bin/env bash
# Installs the bench's engine: node-llama-cpp and its prebuilt Linux x64 CPU binary, both from
# npm, into bench/real_engine/node_modules (gitignored). Nothing is compiled and nothing is
# fetched from GitHub: the prebuilt binary is an npm package of its own, and the check below
# refuses to fall back to a source build (which would need GitHub and a toolchain).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup.sh: error: node and npm are needed (node 20 or later; apt-get install nodejs npm)" >&2
  exit 1
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "setup.sh: error: node $(node --version) is too old; node-llama-cpp 3 needs node 20 or later" >&2
  exit 1
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "setup.sh: error: this bench installs @node-llama-cpp/linux-x64 only; $(uname -s)-$(uname -m) is not it" >&2
  exit 1
fi

# --omit=optional: node-llama-cpp lists every platform's binary (CUDA and Vulkan ones are
# hundreds of MB) as optional; package.json names the one CPU binary this bench needs.
# --ignore-scripts: node-llama-cpp's postinstall would try to download or build llama.cpp.
NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --no-audit --no-fund --omit=optional \
  --ignore-scripts --no-save

# The binary must load as shipped; build: "never" makes a missing one an error, not a compile.
if ! node check_engine.mjs; then
  echo "setup.sh: error: node-llama-cpp's prebuilt CPU binary did not load; this bench does not build llama.cpp from source" >&2
  exit 1
fi
