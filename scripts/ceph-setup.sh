#!/usr/bin/env bash
# Starts a single-node Ceph cluster for the RBD backend's tests
# (client/storage/rbd_test.go, virt/libvirt/volume_rbd_test.go) from
# Debian's ceph packages, as root and without systemd: one monitor on
# 127.0.0.1, one manager (pool statistics, so capacity, come from it),
# one OSD whose BlueStore lives in a sparse file, replication size 1, a
# pool "volumes" initialised for RBD and a client.cinder key with the
# rbd profile on that pool (Cinder's usual user).
#
# Everything it makes lives under $STRATUS_CEPH_DIR (default
# /var/lib/stratus-ceph): ceph.conf, the admin and cinder keyrings, the
# daemons' data, logs, pid files and sockets. It never writes /etc/ceph,
# so it cannot clobber a cluster it did not make; the tools are pointed
# at it with -c $STRATUS_CEPH_DIR/ceph.conf (the tests read the same
# variable). Idempotent: a cluster already made is started again where
# its daemons are not running and left alone where they are.
#
# Usage: scripts/ceph-setup.sh          make or start the cluster
#        scripts/ceph-setup.sh stop     stop its daemons
#        scripts/ceph-setup.sh purge    stop them and remove the directory
# STRATUS_CEPH_PORT (default 6789) is the monitor's msgr v1 port, its v2
# port is STRATUS_CEPH_PORT2 (default 3300); OSD_SIZE_GB (default 8) is
# the OSD file's (sparse) size.
set -euo pipefail

dir="${STRATUS_CEPH_DIR:-/var/lib/stratus-ceph}"
port="${STRATUS_CEPH_PORT:-6789}"
port2="${STRATUS_CEPH_PORT2:-3300}"
osd_gb="${OSD_SIZE_GB:-8}"
conf="$dir/ceph.conf"
run_dir="$dir/run"
log_dir="$dir/log"
mon_id=a
mgr_id=x
osd_id=0

die() { echo "ceph-setup: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root"

# running NAME: whether the daemon whose pid file is $run_dir/NAME.pid runs.
running() {
  local pid
  pid="$(cat "$run_dir/$1.pid" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

stop_all() {
  local d pid
  for d in "osd.$osd_id" "mgr.$mgr_id" "mon.$mon_id"; do
    running "$d" || continue
    pid="$(cat "$run_dir/$d.pid")"
    kill "$pid"
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  done
  return 0
}

case "${1:-}" in
stop) stop_all; exit 0 ;;
purge) stop_all; rm -rf "$dir"; exit 0 ;;
"") ;;
*) die "usage: $0 [stop|purge]" ;;
esac

if ! command -v ceph-mon >/dev/null || ! command -v ceph-osd >/dev/null ||
  ! command -v ceph-mgr >/dev/null || ! command -v rbd >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  # Another apt run may hold the lock: apt-get waits for it.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    ceph-mon ceph-osd ceph-mgr ceph-common qemu-block-extra >/dev/null
fi

c() { "$@" -c "$conf"; }
start=$(date +%s)

# A directory with a cluster this script did not lay out (no ceph.conf
# of its fsid here) is reset while none of its daemons runs, and
# refused while one does.
if [ -f "$dir/fsid" ] && ! grep -qx "fsid = $(cat "$dir/fsid")" "$conf" 2>/dev/null; then
  for d in "osd.$osd_id" "mgr.$mgr_id" "mon.$mon_id"; do
    running "$d" && die "$dir holds a cluster this script did not make, and its $d runs; stop it or use another STRATUS_CEPH_DIR"
  done
  echo "ceph-setup: $dir holds a cluster this script did not make; starting afresh" >&2
  rm -rf "$dir"
fi
mkdir -p "$dir" "$run_dir" "$log_dir"

if [ ! -f "$dir/fsid" ]; then
  rm -rf "$dir/mon" "$dir/mgr" "$dir/osd"
  fsid="$(cat /proc/sys/kernel/random/uuid)"
  cat >"$conf" <<EOF
# Made by stratus scripts/ceph-setup.sh: a single-node test cluster.
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$port2,v1:127.0.0.1:$port]
mon initial members = $mon_id
public network = 127.0.0.0/8
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 16
osd pool default pgp num = 16
osd crush chooseleaf type = 0
mon allow pool delete = true
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
run dir = $run_dir
log file = $log_dir/\$name.log
pid file = $run_dir/\$name.pid
admin socket = $run_dir/\$name.asok
log to stderr = false

[client]
keyring = $dir/ceph.\$name.keyring

[mon]
mon data = $dir/mon/ceph-\$id

[mgr]
mgr data = $dir/mgr/ceph-\$id
mgr initial modules = iostat

[osd]
osd data = $dir/osd/ceph-\$id
osd objectstore = bluestore
bluestore block path = $dir/osd/block-\$id
bluestore block create = true
bluestore block size = $((osd_gb << 30))
osd memory target = 939524096
bluestore cache autotune = false
bluestore cache size = 134217728
osd op num shards = 2
osd op num threads per shard = 1
EOF
  ceph-authtool --create-keyring "$dir/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$dir/ceph.client.admin.keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$dir/mon.keyring" --import-keyring "$dir/ceph.client.admin.keyring" >/dev/null
  monmaptool --create --addv "$mon_id" "[v2:127.0.0.1:$port2,v1:127.0.0.1:$port]" \
    --fsid "$fsid" "$dir/monmap" >/dev/null
  mkdir -p "$dir/mon/ceph-$mon_id"
  c ceph-mon --mkfs -i "$mon_id" --monmap "$dir/monmap" --keyring "$dir/mon.keyring" 2>/dev/null
  echo "$fsid" >"$dir/fsid"
fi
fsid="$(cat "$dir/fsid")"

running "mon.$mon_id" || c ceph-mon -i "$mon_id"
# The monitor answers once it has formed its quorum of one.
timeout 60 ceph -c "$conf" mon stat >/dev/null || die "the monitor does not answer; see $log_dir"

if [ ! -f "$dir/mgr/ceph-$mgr_id/keyring" ]; then
  mkdir -p "$dir/mgr/ceph-$mgr_id"
  c ceph auth get-or-create "mgr.$mgr_id" mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
    -o "$dir/mgr/ceph-$mgr_id/keyring.new"
  mv "$dir/mgr/ceph-$mgr_id/keyring.new" "$dir/mgr/ceph-$mgr_id/keyring"
fi
running "mgr.$mgr_id" || c ceph-mgr -i "$mgr_id" --keyring "$dir/mgr/ceph-$mgr_id/keyring"

osd_dir="$dir/osd/ceph-$osd_id"
if [ ! -f "$osd_dir/ready" ]; then
  # A half-made OSD (stopped during mkfs) is made again from scratch.
  c ceph osd purge "$osd_id" --yes-i-really-mean-it >/dev/null 2>&1 || true
  rm -rf "$osd_dir" "$dir/osd/block-$osd_id"
  mkdir -p "$osd_dir"
  osd_uuid="$(cat /proc/sys/kernel/random/uuid)"
  ceph-authtool --create-keyring "$osd_dir/keyring" --gen-key -n "osd.$osd_id" >/dev/null
  osd_key="$(ceph-authtool -p -n "osd.$osd_id" "$osd_dir/keyring")"
  got="$(printf '{"cephx_secret": "%s"}' "$osd_key" | c ceph osd new "$osd_uuid" "$osd_id" -i -)"
  [ "$got" = "$osd_id" ] || die "the monitor gave osd id $got, not $osd_id"
  c ceph-osd -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" --keyring "$osd_dir/keyring" \
    >"$log_dir/osd-mkfs.log" 2>&1 || die "ceph-osd --mkfs failed; see $log_dir/osd-mkfs.log"
  touch "$osd_dir/ready"
fi
running "osd.$osd_id" || c ceph-osd -i "$osd_id" --keyring "$osd_dir/keyring"

for _ in $(seq 120); do
  c ceph osd dump -f json 2>/dev/null | grep -q '"up":1' && break
  sleep 1
done
c ceph osd dump -f json | grep -q '"up":1' || die "osd.$osd_id did not come up; see $log_dir"

if ! c ceph osd pool ls | grep -qx volumes; then
  c ceph osd pool create volumes 16 16 >/dev/null 2>&1
  c ceph osd pool set volumes size 1 --yes-i-really-mean-it >/dev/null 2>&1
  c rbd pool init volumes
fi
if [ ! -f "$dir/ceph.client.cinder.keyring" ]; then
  c ceph auth get-or-create client.cinder mon 'profile rbd' osd 'profile rbd pool=volumes' \
    mgr 'profile rbd pool=volumes' -o "$dir/ceph.client.cinder.keyring.new"
  mv "$dir/ceph.client.cinder.keyring.new" "$dir/ceph.client.cinder.keyring"
fi

# The pool takes writes once its placement groups are active.
for _ in $(seq 120); do
  timeout 20 rbd -c "$conf" --id cinder ls volumes >/dev/null 2>&1 && break
  sleep 1
done
timeout 20 rbd -c "$conf" --id cinder ls volumes >/dev/null || die "pool volumes does not answer; see $log_dir"
echo "ceph-setup: cluster $fsid ready in $dir ($(($(date +%s) - start))s)" >&2
