# outl capture path for Linux. `make` builds release binaries; `make check` runs every test.
# Install follows the usual conventions: PREFIX, DESTDIR, install -D; it never calls systemctl and
# writes nothing outside $(DESTDIR)$(PREFIX) (the user unit directory is asked of pkg-config for
# this PREFIX), nor any temporary file next to the sources.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
CATALOGDIR ?= $(PREFIX)/lib/systemd/catalog
SYSTEMD_USER_UNIT_DIR ?= $(or $(shell pkg-config --define-variable=prefix=$(PREFIX) --variable=systemduserunitdir systemd 2>/dev/null),$(PREFIX)/lib/systemd/user)
SWIFT ?= swift
SWIFTFLAGS ?=
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path 2>/dev/null)
DEBUG_BIN = $(shell $(SWIFT) build --show-bin-path 2>/dev/null)
PROGRAMS = outl-capture outld outl
MAN1 = man/outld.1 man/outl-capture.1 man/outl.1
MAN5 = man/outl-inbox.5
UNITS = outld.service outld-drain.service outld-drain.path

.PHONY: all release debug check test lint-man integration bench torture fuzz install install-user deb \
        enable-user install-catalog uninstall deps clean

all: release

release:
	$(SWIFT) build -c release $(SWIFTFLAGS)

debug:
	$(SWIFT) build $(SWIFTFLAGS)

# The whole suite: man page lint, unit and process tests, the integration scripts (crash torture,
# load, real systemd and journald), then each fuzz target for a bounded time.
CHECK_FUZZ_SECONDS ?= 20
check: debug lint-man
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	OUTL_BIN_DIR=$(DEBUG_BIN) $(SWIFT) test --skip-build $(SWIFTFLAGS)
	$(MAKE) integration
	$(MAKE) fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS)

test: check

lint-man:
	@command -v mandoc >/dev/null || { echo "mandoc is missing: run 'make deps'" >&2; exit 1; }
	mandoc -T lint -W warning $(wildcard man/*.1 man/*.5)

# Scripts that drive the real binaries (and real systemd/journald where the host allows).
# Every script runs even when one fails, so one failure hides no other; the target fails at the end.
integration: debug
	@failed=""; for t in $(sort $(wildcard Tests/integration/*.sh)); do \
	  echo "== $$t"; OUTL_BIN_DIR=$(DEBUG_BIN) bash $$t || failed="$$failed $$t"; done; \
	if [ -n "$$failed" ]; then echo "integration scripts failed:$$failed" >&2; exit 1; fi

bench: release
	OUTL_BIN_DIR=$(RELEASE_BIN) bash bench/run.sh

# libFuzzer targets (fuzz/, a separate package), each run for FUZZ_SECONDS; non-zero on a crash.
FUZZ_SECONDS ?= 30
fuzz:
	bash fuzz/run.sh $(FUZZ_SECONDS)

# The long crash torture: 6 writers x 2,000 captures and at least 200 kill rounds.
torture: debug
	OUTL_BIN_DIR=$(DEBUG_BIN) OUTL_TORTURE=long bash Tests/integration/torture.sh

install: release
	@set -e; for p in $(PROGRAMS); do install -Dm755 $(RELEASE_BIN)/$$p $(DESTDIR)$(BINDIR)/$$p; done
	@set -e; for m in $(MAN1); do install -Dm644 $$m $(DESTDIR)$(MANDIR)/man1/$$(basename $$m); done
	@set -e; for m in $(MAN5); do install -Dm644 $$m $(DESTDIR)$(MANDIR)/man5/$$(basename $$m); done
	@set -e; install -d $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR) $(DESTDIR)$(DATADIR)/applications; \
	for u in $(UNITS); do \
	  sed 's|@bindir@|$(BINDIR)|g' systemd/$$u.in > $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/$$u; \
	  chmod 644 $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/$$u; done
	install -Dm644 systemd/outld.catalog $(DESTDIR)$(CATALOGDIR)/outld.catalog
	@set -e; for d in outl-capture outl-capture-attach; do \
	  sed 's|@bindir@|$(BINDIR)|g' share/$$d.desktop.in > $(DESTDIR)$(DATADIR)/applications/$$d.desktop; \
	  chmod 644 $(DESTDIR)$(DATADIR)/applications/$$d.desktop; done
	@set -e; for p in $(PROGRAMS); do \
	  install -Dm644 share/completions/bash/$$p $(DESTDIR)$(DATADIR)/bash-completion/completions/$$p; \
	  install -Dm644 share/completions/zsh/_$$p $(DESTDIR)$(DATADIR)/zsh/vendor-completions/_$$p; \
	  install -Dm644 share/completions/fish/$$p.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/$$p.fish; done

# A Debian package of the release build (packaging/deb.sh): outl_<version>_<arch>.deb in DEB_DIR.
DEB_DIR ?= .
deb: release
	bash packaging/deb.sh $(RELEASE_BIN) $(DEB_DIR)

# journalctl reads catalogs only from the system directories: run as root after install-user.
install-catalog:
	install -Dm644 systemd/outld.catalog $(DESTDIR)/usr/lib/systemd/catalog/outld.catalog
	[ -n "$(DESTDIR)" ] || journalctl --update-catalog

# Per-user install under ~/.local, then start the daemon for this user, where a systemd user
# manager is reachable. Where none is (a container, a minimal VM, WSL) everything is installed all
# the same and one line says how to run outld instead; that is not an error.
install-user:
	$(MAKE) install PREFIX=$(HOME)/.local SYSTEMD_USER_UNIT_DIR=$(or $(XDG_CONFIG_HOME),$(HOME)/.config)/systemd/user \
	  CATALOGDIR=$(HOME)/.local/lib/systemd/catalog
	@if systemctl --user show-environment >/dev/null 2>&1; then $(MAKE) enable-user; else \
	  echo "installed under $(HOME)/.local; no systemd user manager is reachable here, so outld was not started: run '$(HOME)/.local/bin/outld' in the foreground (its first start creates the workspace), or, once the workspace exists, '$(HOME)/.local/bin/outld --once' from cron (e.g. '* * * * *')"; fi

enable-user:
	systemctl --user daemon-reload
	systemctl --user enable --now outld.service

uninstall:
	@for p in $(PROGRAMS); do rm -f $(DESTDIR)$(BINDIR)/$$p; done
	@for m in $(MAN1); do rm -f $(DESTDIR)$(MANDIR)/man1/$$(basename $$m); done
	@for m in $(MAN5); do rm -f $(DESTDIR)$(MANDIR)/man5/$$(basename $$m); done
	@for u in $(UNITS); do rm -f $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)/$$u; done
	rm -f $(DESTDIR)$(CATALOGDIR)/outld.catalog $(DESTDIR)$(DATADIR)/applications/outl-capture.desktop \
	  $(DESTDIR)$(DATADIR)/applications/outl-capture-attach.desktop
	@for p in $(PROGRAMS); do rm -f $(DESTDIR)$(DATADIR)/bash-completion/completions/$$p \
	  $(DESTDIR)$(DATADIR)/zsh/vendor-completions/_$$p $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/$$p.fish; done

# Debian packages the build and the tests need; installs only what is missing.
DEB_PACKAGES = libsystemd-dev liburing-dev pkg-config mandoc systemd syncthing cmark cmark-gfm xvfb xclip xsel libnotify-bin hyperfine time \
	imagemagick maim \
	bash-completion zsh fish lintian binutils dpkg-dev
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; fi

clean:
	rm -rf .build bench/out fuzz/.build fuzz/artifacts
