# famctl — set-up, build, demo and tests.
#
#   make demo    install what is missing, build, run a household demo
#   make test    install what is missing, build, run every test
#
SHELL := /bin/bash
SWIFT ?= swift
DEB_PACKAGES := libsqlite3-dev libsodium-dev libcurl4-openssl-dev pkg-config syncthing curl jq apache2 openssl faketime strace
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup build release demo test test-deep clean bench fuzz

## setup: install the system libraries famctl links against (Debian/Ubuntu).
setup:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "swift not found: install the Swift 6 toolchain and put it on PATH" >&2; exit 1; }

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release --product famctl

## demo: a device in a temporary home, a few records, replay verifying them.
demo: release
	@scripts/demo.sh "$$($(SWIFT) build -c release --show-bin-path)/famctl"

## test: every test suite (unit, property, crash-safety, end-to-end).
test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --parallel --num-workers 2

## test-deep: every test, the property tests with ten times their seeds and the crash tests with ten times their kills (PROPERTY_RUNS=K for K times; not part of `make test`).
PROPERTY_RUNS ?= 10
test-deep: setup
	$(SWIFT) build --build-tests
	FAMCTL_PROPERTY_RUNS=$(PROPERTY_RUNS) FAMCTL_CRASH_KILLS=$$((40 * $(PROPERTY_RUNS))) FAMCTL_CRASH_KILLS_MIXED=$$((160 * $(PROPERTY_RUNS))) \
	  $(SWIFT) test --skip-build --parallel --num-workers 2

clean:
	rm -rf .build

## bench: release build, then every benchmark figure next to its bound (not part of `make test`).
BENCH_SCALE ?= 1
bench: release
	@python3 -m venv .build/bench-venv >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && python3 -m venv .build/bench-venv; }
	@.build/bench-venv/bin/pip install -q 'eventsourcing==9.5.6'
	"$$($(SWIFT) build -c release --show-bin-path)/famctl" bench --scale $(BENCH_SCALE) --out bench-results/bench.json --peer .build/bench-venv/bin/python

## fuzz: libFuzzer targets (envelope, segment, invite, json, field) with their seed corpora.
FUZZ_RUNS ?= 2000000
fuzz: setup
	scripts/fuzz.sh $(FUZZ_RUNS)
