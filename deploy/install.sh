#!/bin/sh
# deploy/install.sh - install Trellis on a host without Docker (docs/operations.md, "Install
# with the install script"). Needs root, Node 20 with npm, and the packed tarball
# (`node scripts/package.mjs` writes dist/trellis-<version>.tgz). It:
#
#   1. creates the `trellis` system user and group (home /var/lib/trellis, no login shell);
#   2. installs the tarball with `npm install --global --prefix $PREFIX` (default /usr/local:
#      /usr/local/bin/trellis, the path the units start); an older version is replaced;
#   3. creates /etc/trellis (root:trellis 0750), /var/lib/trellis (the coordinator's SVC_HOME)
#      and /var/lib/trellis-worker (one home per worker instance below it), owned by trellis;
#   4. puts the example configs in /etc/trellis: config.yaml (coordinator) and worker.yaml (a
#      worker), and coordinator.env / worker.env for secrets (tokens, Redis password), 0640;
#      an existing file is never overwritten;
#   5. installs the systemd units trellis-coordinator.service and trellis-worker@.service in
#      $UNIT_DIR (default /etc/systemd/system) and reloads systemd when it runs.
#
# It enables and starts nothing: edit the configs, then `systemctl enable --now ...` (printed
# at the end). Idempotent: run it again with a newer tarball to upgrade (docs/operations.md,
# "Upgrade"). Usage:  sh deploy/install.sh dist/trellis-<version>.tgz
set -eu

PREFIX=${PREFIX:-/usr/local}
UNIT_DIR=${UNIT_DIR:-/etc/systemd/system}
ETC=/etc/trellis
HERE=$(cd "$(dirname "$0")" && pwd)

say() { echo "install: $*"; }
die() {
  echo "install: $*" >&2
  exit 1
}

[ $# -eq 1 ] || die "usage: sh $0 <trellis-<version>.tgz> (node scripts/package.mjs writes it to dist/)"
TARBALL=$1
[ -f "$TARBALL" ] || die "$TARBALL: no such file (node scripts/package.mjs writes dist/trellis-<version>.tgz)"
[ "$(id -u)" -eq 0 ] || die "run as root (it creates a user and writes $PREFIX, $ETC and $UNIT_DIR)"
command -v node >/dev/null 2>&1 || die "node not found: install Node.js 20 first"
command -v npm >/dev/null 2>&1 || die "npm not found: install Node.js 20 with npm first"
case "$(node --version)" in
  v2[0-9].*) ;;
  *) die "node $(node --version) is too old: Trellis needs Node.js 20 or later" ;;
esac
for f in trellis-coordinator.service trellis-worker@.service config.yaml worker.yaml; do
  [ -f "$HERE/$f" ] || die "$HERE/$f is missing: run the script from a Trellis checkout (deploy/)"
done

# 1. the service user: Debian/RHEL useradd, else busybox (Alpine) adduser
NOLOGIN=/usr/sbin/nologin
[ -x "$NOLOGIN" ] || NOLOGIN=/bin/false
if id trellis >/dev/null 2>&1; then
  say "user trellis exists ($(id trellis))"
elif command -v useradd >/dev/null 2>&1; then
  useradd --system --user-group --home-dir /var/lib/trellis --no-create-home \
    --shell "$NOLOGIN" --comment "Trellis" trellis
  say "user trellis created ($(id trellis))"
else
  addgroup -S trellis
  adduser -S -D -H -h /var/lib/trellis -s "$NOLOGIN" -G trellis -g Trellis trellis
  say "user trellis created ($(id trellis))"
fi

# 2. the package (a bundled CLI: npm fetches nothing for it)
npm install --global --prefix "$PREFIX" --omit=dev --no-audit --no-fund --no-update-notifier \
  "$TARBALL" >/dev/null
say "installed $PREFIX/bin/trellis $("$PREFIX/bin/trellis" --version)"

# 3. folders (mkdir, chown and chmod rather than `install`, which busybox may lack)
dir() { # <owner:group> <mode> <dir>
  mkdir -p "$3" && chown "$1" "$3" && chmod "$2" "$3"
}
dir root:trellis 0750 "$ETC"
dir trellis:trellis 0750 /var/lib/trellis
dir trellis:trellis 0750 /var/lib/trellis-worker
# on a worker host too: a worker runs a step in the folder of its DAG file on the coordinator
# (/var/lib/trellis/dags) unless the step sets `dir`
dir trellis:trellis 0750 /var/lib/trellis/dags

# 4. configs and secrets, never overwritten
put() { # <source or -> <target> <mode>
  if [ -e "$2" ]; then
    say "kept $2"
    return
  fi
  if [ "$1" = - ]; then cat >"$2.new"; else cp "$1" "$2.new"; fi
  chown root:trellis "$2.new" && chmod "$3" "$2.new" && mv "$2.new" "$2"
  say "wrote $2"
}
put "$HERE/config.yaml" "$ETC/config.yaml" 0640
put "$HERE/worker.yaml" "$ETC/worker.yaml" 0640
put - "$ETC/coordinator.env" 0640 <<'EOF'
# Secrets of the coordinator (trellis-coordinator.service reads this file).
# SVC_COORDINATOR_TOKENS=<worker token>[,<next token while rotating>]
# SVC_REDIS_URL=redis://:<password>@127.0.0.1:6379
EOF
put - "$ETC/worker.env" 0640 <<'EOF'
# Secrets of the workers on this host (trellis-worker@.service reads this file).
# SVC_WORKER_TOKEN=<this worker's token>
# SVC_REDIS_URL=redis://:<password>@redis.internal:6379
EOF

# 5. units (ours: replaced on upgrade; local changes belong in drop-ins, `systemctl edit`)
mkdir -p "$UNIT_DIR"
for unit in trellis-coordinator.service trellis-worker@.service; do
  cp "$HERE/$unit" "$UNIT_DIR/$unit.new"
  chmod 0644 "$UNIT_DIR/$unit.new"
  mv "$UNIT_DIR/$unit.new" "$UNIT_DIR/$unit"
done
say "installed $UNIT_DIR/trellis-coordinator.service and $UNIT_DIR/trellis-worker@.service"
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  systemctl daemon-reload
  say "systemd reloaded"
fi

cat <<EOF
install: done. Next, on the coordinator's host: edit $ETC/config.yaml and $ETC/coordinator.env, then
  systemctl enable --now trellis-coordinator
On a worker host: edit $ETC/worker.yaml and $ETC/worker.env, then (one instance per worker)
  systemctl enable --now trellis-worker@1
EOF
