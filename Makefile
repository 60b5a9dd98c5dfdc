# kubectl-doctor. `make demo` needs no cluster; `make test` runs every test,
# including end-to-end tests on a real local control plane.
GO      ?= go
BIN     := bin/kubectl-doctor
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/kubectl-doctor/kubectl-doctor/pkg/cmd.version=$(VERSION)
# cli-runtime's kustomize support imports Go's plugin package, which makes the
# linker export every symbol and keep every exported method: the tag drops it
# (kubectl-doctor never loads kustomize plugins). 80 -> 56 MB of binary, and
# 65 -> 33 MiB resident before the first request. .goreleaser.yaml and the
# end-to-end tests build with the same tag (TestBuildsWithoutGoPlugins).
TAGS    := kustomize_disable_go_plugin_support

.PHONY: all build test test-unit fuzz lint vulncheck demo demo-down docs deploy controlplane prometheus bench bench-150k

all: build

build:
	$(GO) build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-doctor

# The control plane (etcd, kube-apiserver, kube-controller-manager) is built
# from the Go module proxy into a cache outside the repo: ~10 min once.
controlplane:
	$(GO) run ./hack/cluster build

# Prometheus and promtool (Debian's prometheus package) for the serve e2e
# test and the alert rules' unit tests; only installed where missing.
prometheus:
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || \
		{ apt-get install -y prometheus >/dev/null 2>&1 || { apt-get update && apt-get install -y prometheus; }; }

test: lint controlplane prometheus
	KUBECTL_DOCTOR_REQUIRE_PROMETHEUS=1 $(GO) test -count=1 -timeout 60m ./...
	$(GO) test -count=1 -race ./pkg/snapshot   # the Trimmer and its spec cache are shared by the list goroutines

# Without the control plane: fixture, engine and printer tests only.
test-unit:
	$(GO) test -count=1 -short ./...

# Fuzz the parsers of untrusted input (audit logs; fixtures and dumps; the
# config file; offline inputs) for FUZZTIME each. Their seed corpora (testdata/fuzz/) run in
# every go test.
FUZZTIME ?= 10s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzAnalyze$$' -fuzztime $(FUZZTIME) ./pkg/audit
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./pkg/fixture
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/config
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./pkg/offline

# Linters at the versions pinned in hack/tools (go.sum-checked, fetched
# through the Go module proxy): never "not installed: skipped".
TOOLS := $(CURDIR)/bin/tools
$(TOOLS)/staticcheck $(TOOLS)/govulncheck $(TOOLS)/vulngate: hack/tools/go.mod hack/tools/go.sum hack/tools/vulngate/main.go
	cd hack/tools && $(GO) build -o $(TOOLS)/ honnef.co/go/tools/cmd/staticcheck golang.org/x/vuln/cmd/govulncheck ./vulngate
$(TOOLS)/goreleaser: hack/tools/goreleaser/go.mod hack/tools/goreleaser/go.sum
	cd hack/tools/goreleaser && $(GO) build -o $(TOOLS)/goreleaser github.com/goreleaser/goreleaser/v2

lint: $(TOOLS)/staticcheck $(TOOLS)/goreleaser vulncheck
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod is not tidy: run go mod tidy"; exit 1; }
	$(TOOLS)/staticcheck ./...
	$(TOOLS)/goreleaser check

# govulncheck reads the Go vulnerability database from a local copy built
# from the OSV entries of golang.org/x/vulndb at a pinned version, fetched
# through the Go module proxy (hack/tools/vulndb): vuln.go.dev, its default
# source, is not reachable from every build machine. The copy is kept in the
# same cache as the control plane, outside the repo. vulngate fails on any
# vulnerability in a required module and on any standard-library one not
# accepted with a reason in hack/tools/vulngate/accepted.txt; it never skips.
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018
VULNDB := $(HOME)/.cache/kubectl-doctor/vulndb-$(VULNDB_VERSION)
$(VULNDB):
	cd hack/tools && $(GO) run ./vulndb -version $(VULNDB_VERSION) -out $(VULNDB)

vulncheck: $(TOOLS)/govulncheck $(TOOLS)/vulngate $(VULNDB)
	cd hack/tools && $(GO) test -count=1 ./vulngate
	$(TOOLS)/govulncheck -db file://$(VULNDB) -format json ./... > bin/govulncheck.json
	$(TOOLS)/vulngate -accepted hack/tools/vulngate/accepted.txt bin/govulncheck.json

docs: deploy
	$(GO) run ./hack/gendocs

# deploy/base/clusterrole.yaml from the reads the checks declare.
deploy:
	$(GO) run ./hack/gendeploy

# The footprint benchmark: a real kube-apiserver with 30,600 pods on 1,000
# nodes (BENCH_PODS, BENCH_NODES scale it; bench-150k is 150,000 on 5,000),
# the floor client against a full kubectl-doctor scan in BENCH_RUNS
# interleaved pairs (docs/performance.md); a fleet of three copies of that
# cluster, serve over 10 scans and the informer alternative (docs/fleet.md);
# then the Go benchmarks of the checks, the loader and the audit analyser at
# 30k and 150k objects.
BENCH_PODS  ?= 30600
BENCH_NODES ?= 1000
BENCH_RUNS  ?= 3
bench: build controlplane
	$(GO) run ./hack/bench -runs $(BENCH_RUNS) -pods $(BENCH_PODS) -nodes $(BENCH_NODES) -doctor $(BIN)
	$(GO) run ./hack/bench -mode fleet,serve,informer -runs $(BENCH_RUNS) -pods $(BENCH_PODS) -nodes $(BENCH_NODES) -doctor $(BIN)   # docs/fleet.md
	$(GO) test -run '^$$' -bench . -benchmem -count 3 ./checks ./pkg/...

bench-150k:
	$(MAKE) bench BENCH_PODS=150000 BENCH_NODES=5000

demo: build
	@kubeconfig=$$($(GO) run ./hack/cluster up) || exit 1; \
	echo; echo "$$ kubectl doctor --stats"; KUBECONFIG=$$kubeconfig ./$(BIN) --stats; \
	echo; echo "$$ kubectl doctor taints"; KUBECONFIG=$$kubeconfig ./$(BIN) taints; \
	echo; echo "$$ kubectl doctor history -n shop deployment/web"; KUBECONFIG=$$kubeconfig ./$(BIN) history -n shop deployment/web; \
	echo; echo "The local control plane keeps running. To explore it:"; \
	echo "  export KUBECONFIG=$$kubeconfig PATH=$(CURDIR)/bin:\$$PATH"; \
	echo "  kubectl-doctor history; kubectl-doctor -o json --fail-on warning; kubectl-doctor explain node-taints"; \
	echo "Stop it with: make demo-down"

demo-down:
	$(GO) run ./hack/cluster down
