#!/usr/bin/env bash
# scripts/base-images.sh - make the base images of deploy/Dockerfile and docker-compose.yml from
# this host's own files, without pulling anything (no image can be pulled on the CI machines):
#
#   local/trellis-node:20      Node 20 (this host's /usr/bin/node, ICU built in) and the shared
#                              libraries it links, busybox (a /bin/sh for RUN lines and `docker
#                              exec`), /etc/passwd, /etc/group, /tmp. The runtime of the image.
#   local/trellis-node:20-npm  the same plus npm: the stage of deploy/Dockerfile that installs the
#                              packed tarball (npm stays out of the final image).
#   local/trellis-redis:7      redis-server and redis-cli (this host's Debian package) with their
#                              libraries, busybox, a `redis` user (uid 999) owning /data.
#   local/trellis-postgres:15  PostgreSQL (this host's Debian postgresql package: the server,
#                              initdb, pg_isready, psql, its modules but the LLVM JIT, its share
#                              files, zoneinfo) with their libraries, busybox, a `postgres` user
#                              (uid 999) owning /var/lib/postgresql, and deploy/postgres/pg-entry.sh
#                              (the cluster and POSTGRES_DB made on first start).
#   local/trellis-host:20      a clean "host without Docker" for the install script's test:
#                              node, npm, busybox, Debian's useradd/groupadd and systemd-analyze
#                              with systemd's own units (to verify the installed ones), no more.
#
# docs/decisions.md says why these are made from the host's binaries rather than a debootstrap
# root. Idempotent: an image is rebuilt only when its inputs changed (this script, the versions
# of node, npm, redis and busybox), recorded in its `trellis.base.inputs` label; otherwise it is
# left as it is (about 0.3 s in all). Needs: docker, node 20 at /usr/bin/node, redis-server,
# busybox-static, passwd (useradd), systemd (systemd-analyze). Usage: bash scripts/base-images.sh
set -euo pipefail

NODE=${TRELLIS_BASE_NODE:-/usr/bin/node}
NPM_DIR=${TRELLIS_BASE_NPM_DIR:-/usr/lib/node_modules/npm}
BUSYBOX=/bin/busybox

die() {
  echo "base-images: $*" >&2
  exit 1
}

PG_LIB=$(ls -d /usr/lib/postgresql/*/ 2>/dev/null | sort -V | tail -1)
PG_LIB=${PG_LIB%/}
[ -x "$PG_LIB/bin/postgres" ] || die "no PostgreSQL under /usr/lib/postgresql (install postgresql)"
PG_MAJOR=${PG_LIB##*/}
PG_ENTRY=$(dirname "${BASH_SOURCE[0]}")/../deploy/postgres/pg-entry.sh

for f in "$NODE" "$BUSYBOX" /usr/bin/redis-server /usr/bin/redis-cli /usr/sbin/useradd \
  /usr/sbin/nologin /usr/bin/systemd-analyze; do
  [ -x "$f" ] || die "$f is missing (install nodejs 20, busybox-static, redis-server, passwd, systemd)"
done
[ -f "$NPM_DIR/bin/npm-cli.js" ] || die "npm not found in $NPM_DIR (set TRELLIS_BASE_NPM_DIR)"
case "$("$NODE" --version)" in
  v20.*) ;;
  *) die "$NODE is $("$NODE" --version), not Node 20 (set TRELLIS_BASE_NODE)" ;;
esac

INPUTS=$(
  {
    cat "${BASH_SOURCE[0]}"
    "$NODE" --version
    "$NODE" "$NPM_DIR/bin/npm-cli.js" --version
    /usr/bin/redis-server --version
    "$PG_LIB/bin/postgres" --version
    cat "$PG_ENTRY"
    "$BUSYBOX" | head -1
    dpkg-query -W -f='${Version} ' passwd systemd 2>/dev/null || true
  } | sha256sum | cut -c1-16
)

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Copies binaries and every shared library they link (ldd), under the same paths, into root $1.
copy_with_libs() {
  local root=$1
  shift
  local f lib
  for f in "$@"; do
    cp -L --parents "$f" "$root/"
    for lib in $(ldd "$f" | grep -o '/[^ ]*'); do
      [ -e "$root$lib" ] || cp -L --parents "$lib" "$root/"
    done
  done
}

# A root with busybox, its applets, /tmp and the account files; $2: extra passwd lines.
new_root() {
  local root=$1 extra_passwd=${2:-} extra_group=${3:-} a
  mkdir -p "$root"/{bin,etc,tmp,root} "$root/usr/bin" "$root/usr/local/bin"
  chmod 1777 "$root/tmp"
  cp "$BUSYBOX" "$root/bin/busybox"
  for a in $("$BUSYBOX" --list); do
    [ "$a" = busybox ] || [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
  done
  ln -s ../../bin/busybox "$root/usr/bin/env" # the `#!/usr/bin/env node` of npm and trellis
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n%s' \
    "$extra_passwd" >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n%s' "$extra_group" >"$root/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
  printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
}

# Imports root $2 as image $1 (labelled with the inputs), with extra `docker import -c` lines.
import_root() {
  local image=$1 root=$2
  shift 2
  local changes=(-c "LABEL trellis.base.inputs=$INPUTS" -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
  local c
  for c in "$@"; do changes+=(-c "$c"); done
  tar -C "$root" -cf - . | docker import "${changes[@]}" - "$image" >/dev/null
}

current() {
  [ "$(docker image inspect -f '{{index .Config.Labels "trellis.base.inputs"}}' "$1" 2>/dev/null)" = "$INPUTS" ]
}

node_root() {
  local root=$1
  new_root "$root"
  copy_with_libs "$root" "$NODE"
  mv "$root$NODE" "$root/usr/local/bin/node"
}

build_node() {
  local root=$WORK/node
  node_root "$root"
  import_root local/trellis-node:20 "$root" 'CMD ["node"]'
}

# npm on top of the node image (a layer of its own, so the two share the node layer).
build_node_npm() {
  local ctx=$WORK/npm-ctx
  mkdir -p "$ctx"
  cp -a "$NPM_DIR" "$ctx/npm"
  cat >"$ctx/Dockerfile" <<EOF
FROM local/trellis-node:20
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && \
    ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
LABEL trellis.base.inputs=$INPUTS
EOF
  docker build -q -t local/trellis-node:20-npm "$ctx" >/dev/null
}

build_redis() {
  local root=$WORK/redis
  new_root "$root" 'redis:x:999:999:redis:/data:/bin/false\n' 'redis:x:999:\n'
  copy_with_libs "$root" /usr/bin/redis-server /usr/bin/redis-cli
  mkdir -p "$root/data"
  chown 999:999 "$root/data"
  import_root local/trellis-redis:7 "$root" 'USER redis' 'WORKDIR /data' 'EXPOSE 6379' \
    'VOLUME ["/data"]' 'CMD ["redis-server"]'
}

build_postgres() {
  local root=$WORK/postgres f
  new_root "$root" 'postgres:x:999:999:postgres:/var/lib/postgresql:/bin/sh\n' 'postgres:x:999:\n'
  copy_with_libs "$root" "$PG_LIB"/bin/{postgres,initdb,pg_ctl,pg_isready,psql}
  # loadable modules (text search dictionaries, encodings, plpgsql), not the LLVM JIT (100+ MB)
  for f in "$PG_LIB"/lib/*.so; do
    case "$f" in */llvmjit*) continue ;; esac
    copy_with_libs "$root" "$f"
  done
  mkdir -p "$root/usr/share/postgresql"
  cp -a "/usr/share/postgresql/$PG_MAJOR" "$root/usr/share/postgresql/"
  cp -a /usr/share/zoneinfo "$root/usr/share/"
  mkdir -p "$root/var/lib/postgresql" "$root/var/run/postgresql"
  chown 999:999 "$root/var/lib/postgresql" "$root/var/run/postgresql"
  install -m 755 "$PG_ENTRY" "$root/usr/local/bin/pg-entry.sh"
  import_root "local/trellis-postgres:$PG_MAJOR" "$root" 'USER postgres' \
    "ENV PATH=/usr/local/bin:$PG_LIB/bin:/usr/bin:/bin" 'ENV PGDATA=/var/lib/postgresql/data' \
    'WORKDIR /var/lib/postgresql' 'EXPOSE 5432' 'VOLUME ["/var/lib/postgresql"]' \
    'CMD ["/usr/local/bin/pg-entry.sh"]'
}

build_host() {
  local root=$WORK/host
  node_root "$root"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  copy_with_libs "$root" /usr/sbin/useradd /usr/sbin/groupadd /usr/sbin/nologin \
    /usr/bin/systemd-analyze
  # the units systemd ships (sysinit.target...), which `systemd-analyze verify` resolves
  mkdir -p "$root/usr/lib/systemd"
  cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/system"
  cp /etc/login.defs "$root/etc/login.defs"
  mkdir -p "$root/etc/default" "$root/home" "$root/var/lib" "$root/etc/systemd/system" "$root/run"
  touch "$root/etc/shadow" "$root/etc/gshadow"
  chmod 640 "$root/etc/shadow" "$root/etc/gshadow"
  import_root local/trellis-host:20 "$root" 'CMD ["sleep", "infinity"]'
}

for spec in node:local/trellis-node:20 node_npm:local/trellis-node:20-npm \
  redis:local/trellis-redis:7 "postgres:local/trellis-postgres:$PG_MAJOR" host:local/trellis-host:20; do
  fn=${spec%%:*}
  image=${spec#*:}
  if current "$image"; then
    echo "base-images: $image is current"
  else
    "build_$fn"
    echo "base-images: $image built ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
  fi
done
