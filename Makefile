# Cordon — the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
NPM_STAMP := node_modules/.package-lock.json

.PHONY: lint format all install build tsc proxies run embed-example test test-matrix bench interop clean

all: build

# npm ci only when the lock file changed since the last install.
$(NPM_STAMP): package-lock.json package.json sdk-as/package.json
	@echo "==> installing dependencies (npm ci)" >&2
	npm ci --no-audit --no-fund
	@touch $(NPM_STAMP)

install: $(NPM_STAMP)

# tsc only when a TypeScript source or the compiler settings changed since the last compile (the
# stamp lives in dist/, so removing dist/ recompiles); an unchanged tree skips it. Then the start
# bundle (build/bundle.mjs: what bin/cordon.js loads, one file graph instead of ~80 modules).
TSC_STAMP := dist/.tsc-stamp
TS_SOURCES := $(shell find runtime bench sdk-as/tools sdk-as/testing examples -name '*.ts' ! -name '*.test.ts' ! -path '*/assembly/*' 2>/dev/null)

$(TSC_STAMP): $(TS_SOURCES) tsconfig.json tsconfig.build.json build/bundle.mjs $(NPM_STAMP)
	@echo "==> compiling the runtime (tsc)" >&2
	npx tsc -p tsconfig.build.json
	@rm -rf dist/bundle
	node build/bundle.mjs
	@touch $(TSC_STAMP)

tsc: install $(TSC_STAMP)

# The SDK's build tool is TypeScript (sdk-as/tools), compiled into dist/ by the tsc step. It
# rebuilds a proxy only when what it is built from changed by content (sdk-as/tools/up-to-date.ts).
proxies: tsc
	@echo "==> building the example proxies into proxies/dist/" >&2
	node sdk-as/tools/build-proxy.mjs --all proxies

# The runtime's own WebAssembly (runtime/protocol/json-check.ts loads it): AssemblyScript, no
# allocator, a fixed memory (its text region and its container stack).
JSON_CHECK := dist/json-check.wasm
$(JSON_CHECK): runtime/protocol/assembly/json-check.ts $(NPM_STAMP)
	@echo "==> compiling the JSON check (AssemblyScript) into $@" >&2
	@mkdir -p dist
	npx asc $< -O3 --runtime stub --noAssert --initialMemory 18 --maximumMemory 18 -o $@

build: tsc $(JSON_CHECK) proxies

# Formatting and lint (Biome, biome.json) and unused exports (knip, knip.json): a violation fails
# `make test`; `make format` fixes what it can.
lint: install
	@echo "==> checking format and lint (biome) and unused exports (knip)" >&2
	npx biome ci --colors=off .
	npx knip --no-progress

format: install
	npx biome check --write .

test: build lint
	@echo "==> running the test suite (vitest)" >&2
	npx tsc --noEmit -p tsconfig.json
	npx tsc -p tsconfig.as-tests.json
	@mkdir -p .cache
	npx vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest.json
	@node -e 'const r=require("./.cache/vitest.json"); console.log(`$${r.numPassedTests} passed, $${r.numFailedTests} failed, $${r.numPendingTests + r.numTodoTests} skipped`)'
	@echo "==> the chain suites again, in the other isolation (worker) and with interest filters off" >&2
	CORDON_ISOLATION=worker npx vitest run $(CHAIN_SUITES)
	CORDON_INTEREST_FILTERS=off npx vitest run $(CHAIN_SUITES)

# What routing changes must leave as it was — forwarding, byte fidelity, ordering, topologies, the
# rules against hostile proxies, the example proxies' chains — run once more in each configuration
# the default run does not use (~1 min each). `make test-matrix` runs the whole suite in each.
CHAIN_SUITES := test/forwarding.test.ts test/byte-fidelity.test.ts test/chain.test.ts test/topologies.test.ts \
	test/stress.test.ts test/schema-conformance.test.ts test/hostile-routing.test.ts test/hostile-authority.test.ts \
	test/lifecycle-chain.test.ts $(wildcard proxies/*/*.chain.test.ts)

test-matrix: build
	@echo "==> the whole suite with CORDON_ISOLATION=worker, then with CORDON_INTEREST_FILTERS=off" >&2
	CORDON_ISOLATION=worker npx vitest run
	CORDON_INTEREST_FILTERS=off npx vitest run

run: build
	@node bin/cordon.js demo

# examples/embed.ts: the chain started in-process through the package API (import { connect } from "cordon").
embed-example: build
	@node dist/examples/embed.js

bench: build
	node dist/bench/bench.js
	@echo "fuel: units per message and fuel's share of a pass-through receive"
	node dist/bench/guest-fuel.js proxies/dist/passthrough.wasm

# Opt-in, never part of `make test`: installs real ACP agents from npm into a cache outside the
# repository ($$CORDON_INTEROP_CACHE, default ~/.cache/cordon-interop) and runs one scripted
# conversation against each, directly and through Cordon with 0 and 3 proxies. No API keys needed.
# INTEROP_ARGS="--agents codex-acp,gemini-cli --modes direct,cordon-3" narrows it.
interop: build
	@echo "==> interop: real ACP agents, directly and through cordon run (0 and 3 proxies)" >&2
	node interop/interop.mjs $(INTEROP_ARGS)

clean:
	rm -rf dist proxies/dist
