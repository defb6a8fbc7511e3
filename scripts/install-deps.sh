#!/usr/bin/env bash
# Installs the Debian packages kvsweep needs; quick when all are present.
#   scripts/install-deps.sh build   what building the kvsweep binary and the quickstart need
#   scripts/install-deps.sh test    that, plus what the tests, benchmarks, `make sanitize` and
#                                   `make fuzz` need (the default)
#   ... --list                      print the set's packages, one a line; install nothing
set -euo pipefail

set_name=${1:-test}
list=${2:-}
case $set_name in
  build | test) ;;
  *)
    echo "install-deps: unknown set '$set_name' (build or test)" >&2
    exit 2
    ;;
esac

# The kvsweep binary: `make quickstart` installs only these.
build_packages=(
  build-essential cmake ninja-build pkg-config
  lld                       # the linker (CMakeLists.txt): a sanitized binary links in 1.5 s, not 21
  libcurl4-openssl-dev      # load driver transport (multi interface)
  libyaml-cpp-dev           # scenario files
  libsqlite3-dev            # the store
  nlohmann-json3-dev        # request bodies, results
  libspdlog-dev             # logging
  libcli11-dev              # command line
  libboost-dev              # Beast/Asio for the simulated fleet
  libkainjow-mustache-dev   # report templates
  libxxhash-dev             # CHWBL ring and block hashes
  libcpp-httplib-dev        # kvsweep serve's web server (also the tests' small servers)
)

# The tests and benchmarks: `make test` (and `make build`) add these.
test_packages=(
  libgtest-dev googletest   # tests
  sqlite3                   # CLI tests read the store with the sqlite3 shell
  chromium                  # the HTML report and kvsweep serve tests open pages in headless Chromium
  python3-jsonschema        # tests validate the JSON exports against docs/schemas/ (/usr/bin/python3)
  wrk                       # bench/driver_bench.sh: the raw request rate is compared with wrk's
  clang libclang-rt-14-dev  # make sanitize and make fuzz: ASan, UBSan, libFuzzer runtimes
  llvm                      # llvm-symbolizer: sanitizer reports name files and lines
  python3-yaml              # deploy/'s manifests are read by their tests (/usr/bin/python3)
)

packages=("${build_packages[@]}")
[ "$set_name" = test ] && packages+=("${test_packages[@]}")
if [ "$list" = --list ]; then
  printf '%s\n' "${packages[@]}"
  [ "$set_name" = test ] && echo kubectl && echo npm
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# The kube targets' tests run the real kubectl. Keep one already on PATH (from Kubernetes' or
# Google's packages, which conflict with Debian's); else take Debian's.
if [ "$set_name" = test ]; then
  command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
  # kvsweep serve's browser tests install puppeteer-core with npm into the build tree (it
  # drives the chromium above; it downloads no browser). Keep a node and npm already on PATH
  # (NodeSource's nodejs bundles npm and conflicts with Debian's npm); else take Debian's.
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
