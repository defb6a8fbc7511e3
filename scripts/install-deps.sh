#!/usr/bin/env bash
# Installs the Debian packages kvsweep needs to build and test; quick when all are present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libcurl4-openssl-dev      # load driver transport (multi interface)
  libyaml-cpp-dev           # scenario files
  libsqlite3-dev sqlite3    # the store
  nlohmann-json3-dev        # request bodies, results
  libcpp-httplib-dev        # small test servers
  libspdlog-dev             # logging
  libcli11-dev              # command line
  libboost-dev              # Beast/Asio for the simulated fleet
  libkainjow-mustache-dev   # report templates
  libxxhash-dev             # CHWBL ring and block hashes
  libgtest-dev googletest   # tests
  chromium                  # the HTML report test opens reports in headless Chromium
  python3-jsonschema        # tests validate the JSON exports against docs/schemas/ (/usr/bin/python3)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# The kube targets and their tests run the real kubectl. Keep one already on PATH (from
# Kubernetes' or Google's packages, which conflict with Debian's); else take Debian's.
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
