# reconcile — nightly payment reconciliation. `make help` lists the targets.

GO       ?= go
OUT      ?= out
BIN      ?= bin/reconcile
FUZZTIME ?= 10s

.PHONY: help build demo test check unit demo-check fuzz deps clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

build: ## build bin/reconcile
	$(GO) build -o $(BIN) ./cmd/reconcile

demo: build ## run the job on the fixtures against a throwaway PostgreSQL; writes $(OUT)/
	./$(BIN) demo --out $(OUT)

test: deps check demo-check unit ## every test: formatting, vet, the demo, unit and end-to-end tests (race detector)

check: ## gofmt and go vet
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed on:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

unit: ## go test -race on every package (starts its own PostgreSQL); ends with the pass/fail count
	@log=$$(mktemp) && trap 'rm -f "$$log"' EXIT && \
	{ $(GO) test -race -count=1 -v ./... > "$$log" 2>&1; status=$$?; } ; \
	grep -E '^(ok|FAIL|panic:|--- FAIL)|^\s+--- FAIL|_test.go:[0-9]+:|race detected' "$$log" ; \
	awk '/^WARNING: DATA RACE/{p=1} p{print} /^==================$$/{p=0}' "$$log" | head -120 ; \
	echo "tests: $$(grep -cE '^\s*--- PASS' "$$log") passed, $$(grep -cE '^\s*--- FAIL' "$$log") failed" ; \
	exit $$status

demo-check: ## run `make demo` into a temporary directory and check what it wrote
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(MAKE) --no-print-directory demo OUT="$$tmp" && \
	for run in 2026-11-28/wechatpay 2026-11-28/alipay 2026-11-28/stripe 2026-11-28/adyen 2026-12-01/bank; do \
		day=$${run%/*}; ch=$${run#*/}; \
		test -s "$$tmp/$$run/review-$$ch-$$day.xlsx" && \
		grep -q '"status": "SUCCEEDED"' "$$tmp/$$run/summary.json" || \
		{ echo "demo-check: $$ch wrote no workbook or no successful summary.json"; exit 1; }; \
	done && \
	echo "demo-check: five workbooks and summary.json files written"

FUZZERS = FuzzCSV FuzzWeChatPay FuzzAlipay FuzzStripe FuzzAdyen FuzzMapped

fuzz: ## run each parser's fuzz test for $(FUZZTIME)
	@for f in $(FUZZERS); do \
		$(GO) test ./channelfeed -run='^$$' -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s || exit 1; \
	done

deps: ## PostgreSQL server binaries (apt) and Go modules, when missing
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
		echo "installing PostgreSQL server binaries"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	$(GO) mod download

clean: ## remove build outputs and $(OUT)/
	rm -rf bin $(OUT)

SIZE          ?= 1M
RUNS          ?= 1
NIGHTS        ?=
PAYOUTS       ?=
DUCKBENCH     ?=
DUCKDB_SCRIPT ?=

# DuckDB is raced only when both its runner and its script are there: it
# stays outside the module.
BENCH_PEER = $(if $(and $(wildcard $(DUCKBENCH)),$(wildcard $(DUCKDB_SCRIPT))), -duckdb $(DUCKBENCH) -duckdb-script $(DUCKDB_SCRIPT))

.PHONY: bench
bench: ## time the job on SIZE rows per side (100k, 1M, 10M; default 1M) after NIGHTS earlier nights (default 7), RUNS times each, against the SQL baseline, and a bank statement night of PAYOUTS payouts (default 100k; 0 skips it); DuckDB too with DUCKBENCH=/path/to/duckbench DUCKDB_SCRIPT=/path/to/counts_tuned.sql
	@$(if $(DUCKBENCH)$(DUCKDB_SCRIPT),$(if $(BENCH_PEER),true,echo "make bench: DuckDB not raced: DUCKBENCH and DUCKDB_SCRIPT must both name existing files" >&2),true)
	$(GO) run ./cmd/reconbench -size $(SIZE) -runs $(RUNS)$(if $(NIGHTS), -nights $(NIGHTS))$(if $(PAYOUTS), -payouts $(PAYOUTS))$(BENCH_PEER)
