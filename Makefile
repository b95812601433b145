# Front door for people and CI. Every target installs what it needs first (Debian packages,
# scripts/install-deps.sh; as root, or with sudo).
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
ASAN_CXX ?= clang++
JOBS ?= $(shell nproc)
# The suite waits more than it computes (servers polled, children started): at two tests a
# core the machine still idles half the time. Twice the cores cut the suite's wall time by
# 30 % on 2 cores (docs/developers.md, "Build cost"); more gained nothing.
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
CMAKE_FLAGS ?=

.PHONY: deps configure build test test-asan test-live test-deploy-live bench bench-build campaign demo deb \
  test-package format \
  clean fuzz fuzz-build fuzz-merge

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# All tests (the live suite reports itself skipped unless TUNEPLANE_LIVE_* is set).
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(TEST_JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer (CI runs it too), compiled
# by clang: the same sanitizers as GCC's at about half of GCC's compile time, and the sources
# proven to build with a second compiler (docs/developers.md, "Build cost").
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTUNEPLANE_SANITIZE=ON \
	  -DCMAKE_CXX_COMPILER=$(ASAN_CXX) -DTUNEPLANE_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(TEST_JOBS)

# Against a real slurmrestd: export the TUNEPLANE_LIVE_* variables printed by
# ../shared/slurm/testcluster/up.sh first.
test-live: build
	ctest --test-dir $(BUILD) --output-on-failure -L live

# The benchmarks are not in the default build (`make test` does not compile them; no test
# runs one): bench-build compiles them (CI does), bench runs them.
bench-build: configure
	cmake --build $(BUILD) -j $(JOBS) --target benchmarks

bench: bench-build
	bash scripts/bench.sh $(BUILD)

# The long fault campaign (issue 21): seeded runs of the real simulator and serve under
# faults until 1,000 faults across >= 500 jobs; prints "N faults, M jobs, L lost, T run twice".
campaign: configure
	cmake --build $(BUILD) -j $(JOBS) --target fault_campaign
	$(BUILD)/bench/fault_campaign

# The quick start: builds only the two binaries it runs (not the tests and benchmarks; same
# build tree as `make test`), starts the bundled slurmrestd simulator and runs a job end to end.
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target tuneplane tuneplane-slurmsim
	bash scripts/demo.sh $(BUILD)

# The Debian package (CPack, DEB generator) from the same build tree: binaries, systemd unit,
# /etc/tuneplane/ examples, bash completion → $(BUILD)/package/tuneplane_<version>_<arch>.deb.
deb: configure
	cmake --build $(BUILD) -j $(JOBS) --target tuneplane tuneplane-slurmsim
	cd $(BUILD) && cpack -G DEB

# dpkg -i of that package on this machine, what an operator sees checked, then purged; then
# docs/operators.md's "Deploying on an existing cluster" run as written on the simulator, from
# dpkg -i to a Succeeded job (CI, root).
test-package: deb
	bash scripts/package-test.sh $(BUILD)

# The same checklist against the real slurmrestd of the TUNEPLANE_LIVE_* variables (root).
test-deploy-live: deb
	bash scripts/deploy-checklist.sh live $(BUILD)

# The fuzz targets (fuzz/) built with clang's libFuzzer + ASan + UBSan in $(FUZZ_BUILD)/, each
# run for FUZZ_SECONDS (default 30) on a scratch copy of its corpus; FUZZ_TARGETS picks some,
# FUZZ_RUNS=N bounds by inputs instead. `make test` replays the same targets' corpora with g++.
fuzz-build:
	bash scripts/install-deps.sh --fuzz
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DTUNEPLANE_FUZZ=ON -DTUNEPLANE_BUILD_TESTS=OFF \
	  -DTUNEPLANE_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all

fuzz: fuzz-build
	bash fuzz/run.sh $(FUZZ_BUILD)

# The same, then the run's small inputs that reach coverage edges fuzz/corpus/ lacks, added to it:
# review, then commit.
fuzz-merge: fuzz-build
	bash fuzz/run.sh $(FUZZ_BUILD) --merge

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
