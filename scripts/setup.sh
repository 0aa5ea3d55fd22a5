#!/usr/bin/env bash
# scripts/setup.sh - install what the Trellis test suite needs on a Debian bookworm / Node 20
# machine, then the node dependencies. README: `bash scripts/setup.sh && pnpm test`.
#
# Idempotent and safe to re-run: it installs only missing Debian packages, starts dockerd only if
# `docker info` fails, imports the `local/busybox` image only if it is absent, and makes the
# `local/trellis-*` base images (scripts/base-images.sh) only when their inputs changed. redis-server and
# sshd are NOT started here: tests start private ones on 127.0.0.1.
#
#   SETUP_SKIP_SYSTEM=1   only node deps: skip apt, dockerd, the images and /run/sshd
#
# Logs: $SETUP_LOG_DIR (default ${TMPDIR:-/tmp}) holds trellis-setup-{pnpm,apt}.log;
# dockerd logs to /var/log/trellis-dockerd.log.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

T0=$(date +%s%N)
log() {
  printf '[setup %s +%5.1fs] %s\n' "$(date +%H:%M:%S)" \
    "$(( ($(date +%s%N) - T0) / 1000000 ))e-3" "$*"
}
die() {
  log "ERROR: $*" >&2
  exit 1
}

LOG_DIR=${SETUP_LOG_DIR:-${TMPDIR:-/tmp}}
PNPM_LOG=$LOG_DIR/trellis-setup-pnpm.log
APT_LOG=$LOG_DIR/trellis-setup-apt.log
DOCKERD_LOG=/var/log/trellis-dockerd.log
# chromium: the web UI's browser tests (tests/e2e/web), driven by playwright-core.
# postgresql: initdb and pg_ctl for the private PostgreSQL of the store tests (testkit startPostgres);
# the tests never use the cluster the package sets up on 5432.
# jq, curl: docs/ci.md's shell examples (tests/docs/ci.e2e.test.ts); openssl: the TLS tests make certificates.
# docker-compose: the compose fleet's test (tests/e2e/deploy); the base images it and deploy/Dockerfile
# build on are made from the host's node, redis-server, postgresql and busybox (scripts/base-images.sh); systemd:
# its systemd-analyze verifies the units deploy/install.sh installs.
APT_PKGS=(docker.io docker-compose systemd redis-server openssh-server busybox-static chromium prometheus postgresql jq curl openssl)
SKIP_SYSTEM=${SETUP_SKIP_SYSTEM:-0}

PNPM_PID=
TMP_IMAGE_DIR=
cleanup() {
  local rc=$?
  # Only the background install this run started, and only when we are bailing out.
  if [ -n "$PNPM_PID" ] && [ "$rc" -ne 0 ] && kill -0 "$PNPM_PID" 2>/dev/null; then
    kill "$PNPM_PID" 2>/dev/null || true
  fi
  if [ -n "$TMP_IMAGE_DIR" ]; then rm -rf "$TMP_IMAGE_DIR"; fi
  return "$rc"
}
trap cleanup EXIT

# 1. pnpm 10 (pnpm 11 needs Node >= 22; the lockfile is pnpm 10's)
PNPM_VERSION=$(pnpm --version 2>/dev/null || true)   # ~0.7 s per call: ask once
if [ "${PNPM_VERSION%%.*}" = 10 ]; then
  log "pnpm $PNPM_VERSION present"
else
  log "installing pnpm 10 (found: ${PNPM_VERSION:-none})"
  npm install -g --no-audit --no-fund pnpm@10 >"$LOG_DIR/trellis-setup-npm.log" 2>&1 || {
    tail -20 "$LOG_DIR/trellis-setup-npm.log" >&2
    die "npm install -g pnpm@10 failed (not root? install pnpm 10 yourself and re-run)"
  }
  hash -r
  PNPM_VERSION=$(pnpm --version 2>/dev/null || true)
  [ "${PNPM_VERSION%%.*}" = 10 ] ||
    die "pnpm on PATH ($(command -v pnpm || echo none)) is ${PNPM_VERSION:-missing} after installing pnpm@10; put npm's global bin first on PATH"
  log "pnpm $PNPM_VERSION installed"
fi

# 2a. node deps in the background: independent of apt, so they overlap its download and dpkg phase.
#     Nothing is built here: `pnpm test` (and `pnpm build`) run tsc -b themselves.
if [ -f pnpm-lock.yaml ]; then
  PNPM_ARGS=(install --frozen-lockfile --reporter=append-only)
else
  PNPM_ARGS=(install --reporter=append-only)
fi
pnpm "${PNPM_ARGS[@]}" </dev/null >"$PNPM_LOG" 2>&1 &
PNPM_PID=$!
log "started: pnpm ${PNPM_ARGS[*]} (pid $PNPM_PID, log $PNPM_LOG)"

if [ "$SKIP_SYSTEM" = 1 ]; then
  log "SETUP_SKIP_SYSTEM=1: skipping apt, dockerd, the local/busybox image and /run/sshd"
else
  # 2b. Debian packages: only the missing ones, without recommends (no systemd/perl/avahi churn).
  MISSING=()
  for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || MISSING+=("$p")
  done
  if [ ${#MISSING[@]} -eq 0 ]; then
    log "apt: all present (${APT_PKGS[*]})"
  else
    [ "$(id -u)" -eq 0 ] ||
      die "missing Debian packages: ${MISSING[*]}; run this script as root, or install them (apt-get install --no-install-recommends ${MISSING[*]}) and re-run, or set SETUP_SKIP_SYSTEM=1 for node deps only"
    export DEBIAN_FRONTEND=noninteractive
    log "apt: installing ${MISSING[*]}"
    apt-get update -qq >"$APT_LOG" 2>&1 || {
      tail -20 "$APT_LOG" >&2
      die "apt-get update failed (log $APT_LOG)"
    }
    log "apt-get update done"
    apt-get install -y -qq --no-install-recommends \
      -o Dpkg::Options::=--force-unsafe-io -o Dpkg::Options::=--force-confold \
      "${MISSING[@]}" >>"$APT_LOG" 2>&1 </dev/null || {
      tail -40 "$APT_LOG" >&2
      die "apt-get install failed (log $APT_LOG)"
    }
    log "apt: installed ${MISSING[*]}"
  fi

  # 3. Docker engine (starts its own containerd; ready in ~0.3 s). One dockerd per host: a second
  #    one with other bridge settings can delete docker0 under the first (infra.md, gotchas).
  if docker info >/dev/null 2>&1; then
    log "docker engine already running"
  else
    [ "$(id -u)" -eq 0 ] ||
      die "cannot reach the docker engine (not running, or no access to its socket); start dockerd as root or join the docker group, or set SETUP_SKIP_SYSTEM=1"
    command -v dockerd >/dev/null 2>&1 || die "dockerd not found (is docker.io installed?)"
    # Detached from this script's stdio so a CI runner waiting for EOF is not held open.
    # Descriptors above 2 are closed for the daemon: it outlives this script and must not keep
    # a caller's lock file or pipe open (e.g. `flock some.lock bash scripts/setup.sh`).
    setsid nohup bash -c 'for fd in /proc/self/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec dockerd' \
      </dev/null >>"$DOCKERD_LOG" 2>&1 &
    DOCKERD_PID=$!
    for _ in $(seq 1 300); do
      docker info >/dev/null 2>&1 && break
      kill -0 "$DOCKERD_PID" 2>/dev/null || break
      sleep 0.1
    done
    docker info >/dev/null 2>&1 || {
      tail -30 "$DOCKERD_LOG" >&2
      die "dockerd did not become ready within 30 s (log $DOCKERD_LOG)"
    }
    log "dockerd started (pid $DOCKERD_PID, log $DOCKERD_LOG)"
  fi

  # 4. Registry-free test image: static busybox plus its applet symlinks (~2 MB, ~0.5 s).
  if docker image inspect local/busybox >/dev/null 2>&1; then
    log "image local/busybox present"
  else
    [ -x /bin/busybox ] || die "/bin/busybox missing (is busybox-static installed?)"
    TMP_IMAGE_DIR=$(mktemp -d)
    mkdir -p "$TMP_IMAGE_DIR/bin" "$TMP_IMAGE_DIR/tmp" "$TMP_IMAGE_DIR/etc"
    cp /bin/busybox "$TMP_IMAGE_DIR/bin/busybox"
    for a in $(/bin/busybox --list); do
      [ "$a" = busybox ] || ln -s busybox "$TMP_IMAGE_DIR/bin/$a"
    done
    tar -C "$TMP_IMAGE_DIR" -cf - . |
      docker import -c 'ENV PATH=/bin' -c 'CMD ["/bin/sh"]' - local/busybox >/dev/null
    rm -rf "$TMP_IMAGE_DIR"
    TMP_IMAGE_DIR=
    log "image local/busybox imported"
  fi

  # 4b. The base images of deploy/Dockerfile and the compose fleet (node, npm, redis, a clean
  #     host for the install script's test), from this host's binaries: ~1 min under load when
  #     made, ~2 s when current.
  bash scripts/base-images.sh >"$LOG_DIR/trellis-setup-images.log" 2>&1 || {
    tail -20 "$LOG_DIR/trellis-setup-images.log" >&2
    die "scripts/base-images.sh failed (log $LOG_DIR/trellis-setup-images.log)"
  }
  log "base images: $(grep -o 'local/trellis-[^ ]* [a-z]*' "$LOG_DIR/trellis-setup-images.log" | tail -4 | tr '\n' ' ')"

  # 5. sshd's privilege-separation dir; tests start their own sshd on 127.0.0.1. Only an sshd
  #    started by root checks for it, and only root may create it.
  if [ "$(id -u)" -eq 0 ]; then
    mkdir -p /run/sshd
    chmod 755 /run/sshd
    # The ssh executor's password-login tests log in as this local account; it is created locked
    # and each test run sets a fresh random password for its own loopback sshd.
    id trellis-ssh >/dev/null 2>&1 || useradd --create-home --shell /bin/sh trellis-ssh
  else
    log "not root: /run/sshd left as it is (only an sshd started by root needs it)"
  fi
fi

# 6. wait for the node deps
log "waiting for pnpm install"
if ! wait "$PNPM_PID"; then
  PNPM_PID=
  tail -30 "$PNPM_LOG" >&2
  die "pnpm ${PNPM_ARGS[*]} failed (log $PNPM_LOG)"
fi
PNPM_PID=
log "pnpm install done"

if [ "$SKIP_SYSTEM" = 1 ]; then
  log "ready (node deps only)"
else
  log "ready: redis-server $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-)," \
    "$(/usr/sbin/sshd -V 2>&1 | head -1 | cut -d, -f1)," \
    "docker engine $(docker version --format '{{.Server.Version}}' 2>/dev/null)"
fi
