# packs: build, test, benchmark and fuzz. Needs Go 1.26 on PATH.
SHELL    := /bin/bash
.SHELLFLAGS := -o pipefail -ec

GO       ?= go
BIN      ?= bin/packs
PREFIX   ?= /usr/local
MANDIR   ?= $(PREFIX)/share/man
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 30s
# Minimizing each new input may take the whole FUZZTIME with the default 60s.
FUZZMINIMIZETIME ?= 5s
# VERSION is what packs --version prints and MCP clients are told.
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)


.PHONY: build install uninstall deps test bench examples run fuzz lint man pack-tests builtins

## build: the packs binary in bin/, static (pure Go, no cgo: it runs on any Linux of its architecture)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.buildVersion=$(VERSION)" -o $(BIN) ./cmd/packs

## install: the binary, its man pages and shell completions under $(DESTDIR)$(PREFIX) (PREFIX=/usr/local)
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/packs
	install -m 0644 docs/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	$(BIN) completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/packs
	$(BIN) completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_packs
	$(BIN) completion fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/packs.fish

## uninstall: remove what install put under $(DESTDIR)$(PREFIX)
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/packs $(DESTDIR)$(MANDIR)/man1/packs.1 $(DESTDIR)$(MANDIR)/man1/packs-*.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/packs $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_packs \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/packs.fish

## man: regenerate the man pages in docs/man from the commands' help (the man page writer is built only with -tags packsman)
man:
	$(GO) run -tags packsman ./cmd/packs man docs/man

## deps: install missing Debian packages (Rust to WASM, wabt, binaryen); `make test` adds the test-only ones
deps:
	scripts/deps.sh

## test: lint, every Go test (fuzz seeds included) with the race detector, and the example and conformance guests' own tests
test: lint
	WITH_TEST_DEPS=1 scripts/deps.sh
	$(MAKE) examples
	$(GO) test -race -timeout 30m ./...
	$(GO) test -tags packsman -run '^TestManPages$$' ./cmd/packs
	npm run --prefix test/openapi --silent lint
	$(MAKE) -C wasm-examples test
	cd test/mcp-conformance && $(GO) test ./...
	$(MAKE) pack-tests
	cd internal/builtin/guest && $(GO) vet ./tools ./fetch && $(GO) test ./tools ./fetch
	cd third_party/jsonschema && $(GO) vet ./... && $(GO) test -race ./...

## pack-tests: every example pack's own cases (tests/*.yaml, recipe tests too) through `packs test`
pack-tests: build
	# py-report is a script skill with no tools to test here: cmd/packs
	# TestScriptSkill runs it through exec_best_effort, confined.
	for dir in wasm-examples/*/; do [ -d "$$dir/tests" ] || continue; $(BIN) test "$$dir"; done

## builtins: rebuild the built-in packs' WebAssembly from internal/builtin/guest (commit wasm/ and digests.go after)
builtins:
	$(GO) generate ./internal/builtin

## bench: every benchmark, as a Markdown table
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./... 2>&1 | $(GO) run ./internal/tools/benchtable

## examples: build the example packs' WebAssembly tools
examples: deps
	$(MAKE) -C wasm-examples

## run: build packs and the example packs, install them into .demo/home, start the web app (ARGS go to packs serve)
run:
	scripts/demo.sh $(ARGS)

## fuzz: each fuzz target for FUZZTIME (default 30s), one after another
fuzz:
	for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZETIME) "$$pkg"; \
		done; \
	done
	# The built-in packs' guest code is its own module.
	cd internal/builtin/guest && for pkg in ./tools ./fetch; do \
		for target in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "== builtin guest $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZETIME) "$$pkg"; \
		done; \
	done

## lint: gofmt, go vet and staticcheck must be silent, and packs must build for macOS
lint:
	unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt -w these files:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags packsman ./cmd/packs
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(STATICCHECK) -tags packsman ./cmd/packs
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./...
