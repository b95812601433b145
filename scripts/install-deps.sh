#!/usr/bin/env bash
# Installs everything TunePlane needs to build, test and benchmark, from Debian 12's
# packages only. Used by the README, the Makefile and .ci/run. Needs root (or sudo).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config clang-format shellcheck python3 curl openssl
  # PyYAML: the tests read the YAML TunePlane writes for LlamaFactory as LlamaFactory does
  # (tests/launch/config_yaml_test.cc, the LlamaFactory stand-in); fuzz/seed_corpus.py too.
  python3-yaml
  nlohmann-json3-dev libyaml-cpp-dev libcurl4-openssl-dev libssl-dev libsqlite3-dev
  libpq-dev postgresql libcli11-dev libspdlog-dev libfmt-dev libcpp-httplib-dev libexpected-dev
  libicu-dev libgtest-dev libgmock-dev libbenchmark-dev libsimdjson-dev libboost-dev
  chromium chromium-driver
  systemd  # systemd-analyze: scripts/package-test.sh verifies the packaged unit
  # `make test-asan` and `make fuzz` compile with clang: its sanitizer and libFuzzer runtimes,
  # and lld, its linker for what ships nothing (CMakeLists.txt).
  clang libclang-rt-dev lld
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
