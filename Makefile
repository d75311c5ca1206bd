# SPDX-License-Identifier: Apache-2.0
# Thin wrapper over CMake. `make run` and `make test` install what is missing first.
ifeq ($(SANITIZE),)
BUILD    ?= build
else
BUILD    ?= build-sanitize
endif
SANITIZE ?=
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNND_SANITIZE=$(SANITIZE) $(CMAKE_EXTRA)

.PHONY: all deps configure run test leakcheck tsan soak bench fuzz format clean install container-test \
	deb systemd-test

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@./scripts/install-deps.sh

configure:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

run: deps all
	./$(BUILD)/nnd

test: deps all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole ctest suite under ASan, UBSan and strict LeakSanitizer, in build-sanitize:
# any leak or other sanitizer report, in a test, a daemon or a client, fails it.
leakcheck: deps
	$(MAKE) --no-print-directory all SANITIZE=address,undefined BUILD=build-sanitize
	./scripts/leakcheck.sh --build-dir build-sanitize --jobs $(JOBS)

# The client tests (libnnd, its threads on one connection, and the NNAPI layer) built with
# ThreadSanitizer in build-tsan, against the daemon of build/ (not instrumented: its own
# threads are not what these tests are about). A report fails the test that made it.
# test_ndk_priority is left out: a latency bound, not a matter of thread safety.
TSAN_TESTS ?= ^(test_client|test_client_threads|test_burst|test_burst_channel|test_qos|test_shared_session|test_ndk_.*)$$
TSAN_SKIP  ?= ^test_ndk_priority$$
tsan: deps all
	$(MAKE) --no-print-directory all SANITIZE=thread BUILD=build-tsan \
		CMAKE_EXTRA=-DNND_TEST_DAEMON=$(CURDIR)/build/nnd
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1:exitcode=23:second_deadlock_stack=1" \
		ctest --output-on-failure -j $(JOBS) -R '$(TSAN_TESTS)' -E '$(TSAN_SKIP)'

# The load test at full size: 64 clients x 10000 executions, every result checked, the
# daemon back at its baseline afterwards (make test runs it at 64 x 100).
soak: deps all
	./$(BUILD)/test_load 64 10000

bench: deps all
	./$(BUILD)/nnd-bench

# libFuzzer targets (tests/fuzz/) in build-fuzz with clang, ASan and UBSan, FUZZ_SECONDS each.
FUZZ_SECONDS ?= 60
fuzz: deps
	./scripts/fuzz.sh --build-dir build-fuzz --seconds $(FUZZ_SECONDS) --jobs $(JOBS)

# Installs into PREFIX (default /usr/local): programs, libnnd, headers, pkg-config file,
# plugins, man pages, systemd units.
PREFIX ?= /usr/local
install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

# The Dockerfile built and run with podman, checked from the host through its socket
# (scripts/container-test.sh; needs root). Not part of `make test`.
container-test: all
	@./scripts/install-deps.sh --container
	./scripts/container-test.sh --build-dir $(BUILD)

# Debian packages (debian/) with dpkg-buildpackage -us -uc -b, checked with lintian:
# nnd, libnnd0 and libnnd-dev land in DEB_OUT (scripts/build-deb.sh; docs/packaging.md).
DEB_OUT ?= build-deb
deb:
	@./scripts/install-deps.sh --deb
	./scripts/build-deb.sh --out $(DEB_OUT)

# The packages under systemd as PID 1 in a podman container: socket activation, the
# hardened service running the V1_0 vectors, a restart with the cache kept, a clean purge
# (scripts/systemd-test.sh; needs root; docs/systemd.md). Not part of `make test`.
systemd-test: all deb
	@./scripts/install-deps.sh --systemd
	./scripts/systemd-test.sh --debs $(DEB_OUT) --build-dir $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
