# Thin wrapper over CMake: the build logic lives in CMakeLists.txt.
#   make build   install missing Debian packages (as root), configure, build into build/
#   make test    build, run the test suite, then again under ASan+UBSan and TSan, then the fuzzers
#   make fuzz    build the libFuzzer targets with clang into build-fuzz/, run each FUZZ_SECONDS
#   make check   build and run the test suite once (the quick loop while developing)
#   make bench   build, then run `build/uringkit bench` with its defaults
#   make test-kernels  the suite again on Debian 12's 6.1 and 6.12 kernels under qemu (tests/kernels/run.sh)
#   make format  clang-format-14 over every C and C++ source (tests/format_check.sh checks it in the suite)
BUILD   ?= build
JOBS    ?= $(shell nproc)
# Tests in parallel: one per CPU.  More starves the tests that signal a
# child after a fixed time (readfiles_interrupt_test under ASan).
TEST_JOBS ?= $(JOBS)
CMAKE_FLAGS ?=
# Seconds each fuzz target runs in `make test` (longer by hand: make fuzz FUZZ_SECONDS=600).
FUZZ_SECONDS ?= 5
FUZZ_CC ?= clang-14
FUZZ_CXX ?= clang++-14
# clang-14, lld and libclang-rt-14-dev (libFuzzer and the sanitizer runtimes) build the
# sanitizer trees and the fuzzers;
# python3-fusepy runs the FUSE file system of cp_faults_test (a close that fails);
# xfsprogs and btrfs-progs make the file systems cp's tests copy on.
# sqlite3 is the real program bench/replay_sqlite.sh records and replays.
DEB_PACKAGES := build-essential cmake pkg-config googletest libgtest-dev libgmock-dev \
	libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev liburing-dev libaio-dev \
	libxxhash-dev xxhash strace fio wrk nginx-light nodejs curl clang-14 libclang-rt-14-dev \
	lld qemu-system-x86 busybox-static cpio e2fsprogs xz-utils zstd python3 \
	python3-fusepy xfsprogs btrfs-progs sqlite3
# setfacl/getfacl: cp's tests copy ACLs with -a.
DEB_PACKAGES += acl
# /etc/mime.types: serve --root names a file's Content-Type from its extension
DEB_PACKAGES += media-types
# clang-format-14: `make format`, and format_check in the suite (.clang-format).
DEB_PACKAGES += clang-format-14
# groff-base checks the man pages the build writes; zsh checks the zsh completion
# (tests/cli/front_door_test.sh).
DEB_PACKAGES += groff-base zsh
# librsvg2-bin: the bench plot test renders the SVG to PNG with rsvg-convert.
DEB_PACKAGES += librsvg2-bin
# python3-jsonschema: tests/cli/json_schema_test validates every --json document against docs/schema/.
DEB_PACKAGES += python3-jsonschema
# The kernels `make test-kernels` boots (tests/kernels/run.sh: 6.1 and/or 6.12).
KERNELS ?= 6.1 6.12

.PHONY: build deps test check test-asan test-tsan test-kernels fuzz bench install clean format

# Optimised with line tables only (-g1): perf, backtraces and sanitizer
# reports still name function, file and line; full -g (gdb's variables) made
# the compile about 1.4x longer (bench.cpp: 17.0 s against 12.1 s).  For it:
#   make build CMAKE_FLAGS='-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG"'
RELEASE_DEBUG := -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
# Unity builds (CMake batches a library's sources, 8 to a file): the headers
# are parsed once per batch instead of once per file, a third less CPU for
# the libraries and tools (472 against 316 CPU-seconds, g++ 12, -O2 -g1,
# tests excluded).  Editing one file then recompiles its batch: for quick
# rebuilds while working, `make build UNITY=OFF`.  Only src/'s libraries are
# batched (CMakeLists.txt says why).
UNITY ?= ON

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(RELEASE_DEBUG) -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# apt-get only when something is missing, and only as root; otherwise say what to install.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing: $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  else \
	    echo "missing Debian packages: $$missing (run 'make deps' as root, or apt-get install them)"; exit 1; \
	  fi; \
	fi

check: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(TEST_JOBS)

# The sanitizer builds keep line tables only (-g1): their stack traces name
# file and line, and full debug information only slows the compile.
SANITIZE_DEBUG := -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1
# The sanitizer and fuzz trees build with clang and link with lld: clang
# compiles ASan+UBSan code about 1.7x faster than g++ (bench.cpp: 13.8
# against 23.2 CPU-seconds) and its tests ran 240 s against 337 s; the plain
# build keeps the system compiler.  A tree configured with another compiler
# is not switched: `make clean` first.
SAN_CC ?= clang-14
SAN_CXX ?= clang++-14
SAN_LINK := -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld

test-asan: deps
	CC=$(SAN_CC) CXX=$(SAN_CXX) cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug $(SANITIZE_DEBUG) $(SAN_LINK) -DURINGKIT_BENCH=OFF -DURINGKIT_SANITIZE=address,undefined -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)
	cmake --build $(BUILD)-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(BUILD)-asan --output-on-failure -j $(TEST_JOBS)

# Thread code only: the tests labelled `threads`.
test-tsan: deps
	CC=$(SAN_CC) CXX=$(SAN_CXX) cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Debug $(SANITIZE_DEBUG) $(SAN_LINK) -DURINGKIT_BENCH=OFF -DURINGKIT_SANITIZE=thread -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)
	cmake --build $(BUILD)-tsan -j $(JOBS) --target thread-tests
	ctest --test-dir $(BUILD)-tsan --output-on-failure -j $(TEST_JOBS) -L threads

# The kernel-labelled tests of build/ on each Debian kernel (images cached in ~/.cache/uringkit/kernels).
test-kernels: build
	tests/kernels/run.sh $(BUILD) $(KERNELS)

# libFuzzer targets, in their own build tree (clang, ASan+UBSan), each run
# for FUZZ_SECONDS from its checked-in corpus.
fuzz: deps
	CC=$(FUZZ_CC) CXX=$(FUZZ_CXX) cmake -S . -B $(BUILD)-fuzz $(SAN_LINK) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DURINGKIT_FUZZ=ON -DURINGKIT_TESTS=OFF -DURINGKIT_BENCH=OFF -DURINGKIT_SANITIZE=address,undefined -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)
	cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz-targets
	sh tests/fuzz/run.sh $(BUILD)-fuzz $(FUZZ_SECONDS)

test: check test-asan test-tsan test-kernels fuzz

format:
	find src include apps tests bench examples -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) \
	  | xargs clang-format-14 -i

bench: build
	$(BUILD)/uringkit bench

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
