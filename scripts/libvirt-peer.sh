#!/usr/bin/env bash
# Starts and stops a second, independent libvirtd on this machine — a
# "peer host" that the machine's own libvirtd (scripts/libvirt-setup.sh)
# can live-migrate guests to. Used by the live-migration tests and for
# trying migration by hand; as root, after scripts/libvirt-setup.sh.
#
#   scripts/libvirt-peer.sh start [NAME]   start peer NAME (default "peer")
#   scripts/libvirt-peer.sh stop  [NAME]   destroy its guests, stop it
#   scripts/libvirt-peer.sh uri   [NAME]   print its connection URI
#   scripts/libvirt-peer.sh host-uri [NAME] print the URI the peer's
#                                           libvirtd reaches the first at
#   scripts/libvirt-peer.sh nbd-tls-dir [NAME] print the directory of the
#                                           certificates its QEMUs present
#                                           to NBD servers (nbd_tls_x509_cert_dir)
#
# The peer runs in a private mount namespace (unshare -m) with fresh
# tmpfs over /run/libvirt, /var/lib/libvirt, /var/log/libvirt and
# /var/cache/libvirt, its own copy of /etc/libvirt (no domains, no pools,
# its own host_uuid so libvirt does not refuse a "migration to the same
# host") and its own virtlogd. Its socket lives outside those mounts, in
# /run/stratus-peer-NAME/libvirt-sock, so the first libvirtd and the tests
# reach it as qemu+unix:///system?socket=/run/stratus-peer-NAME/libvirt-sock.
# Everything else (/tmp, the images directories) is the same filesystem:
# the two "hosts" share storage, so migrations copy no disks.
#
# Inside the peer's namespace the first libvirtd's /run/libvirt is bound
# at /run/stratus-peer-NAME/host, so migrations back to it use
# qemu+unix:///system?socket=/run/stratus-peer-NAME/host/libvirt-sock
# (`host-uri`) as their destination.
#
# start waits until the peer answers and prints its URI; stop is
# idempotent. Several peers with different names can run at once.
set -euo pipefail

die() { echo "libvirt-peer: $*" >&2; exit 1; }

cmd=${1:-}
name=${2:-peer}
[[ "$name" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,40}$ ]] || die "bad peer name $name"
dir=/run/stratus-peer-$name
uri="qemu+unix:///system?socket=$dir/libvirt-sock"
# host_uri is how the peer's libvirtd reaches the first one (its
# migration target for moves back): the socket, seen from the peer's
# namespace.
host_uri="qemu+unix:///system?socket=$dir/host/libvirt-sock"

running() { # name pidfile
  local pid
  pid=$(cat "$2" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$1" ]
}

start() {
  [ "$(id -u)" -eq 0 ] || die "must run as root"
  for b in libvirtd virtlogd virsh unshare mount; do
    command -v "$b" >/dev/null || die "$b not found (run scripts/libvirt-setup.sh first)"
  done
  if running libvirtd "$dir/libvirtd.pid"; then
    echo "$uri"
    return 0
  fi
  stop_daemons
  rm -rf "$dir"
  mkdir -p "$dir/host"
  cp -a /etc/libvirt "$dir/etc"
  rm -f "$dir"/etc/qemu/*.xml "$dir"/etc/storage/*.xml "$dir"/etc/storage/autostart/*
  rm -rf "$dir"/etc/qemu/autostart "$dir"/etc/qemu/networks/autostart
  # Ports of its own: the two libvirtds allocate VNC and incoming
  # migration ports independently, so a shared range would let both
  # hand out the same port. Each running peer takes a free slot.
  local slot=""
  exec 9>/run/stratus-peer.lock
  flock 9
  for s in $(seq 0 31); do
    if ! cat /run/stratus-peer-*/slot 2>/dev/null | grep -qx "$s"; then slot=$s; break; fi
  done
  [ -n "$slot" ] || { flock -u 9; die "32 peers are running already"; }
  echo "$slot" >"$dir/slot"
  flock -u 9
  exec 9>&-
  for key in remote_display_port_min remote_display_port_max migration_port_min migration_port_max nbd_tls_x509_cert_dir; do
    sed -i -E "s/^[[:space:]]*${key}[[:space:]]*=/# &/" "$dir/etc/qemu.conf"
  done
  # NBD disks with tls='yes' (volumes of another storage host) present
  # the certificates in $dir/nbd-tls (ca-cert.pem, client-cert.pem,
  # client-key.pem), which the tests write there (`nbd-tls-dir`).
  mkdir -p "$dir/nbd-tls"
  cat >>"$dir/etc/qemu.conf" <<EOF
# stratus: peer libvirtd $name (slot $slot)
remote_display_port_min = $((20000 + slot * 200))
remote_display_port_max = $((20000 + slot * 200 + 199))
migration_port_min = $((49216 + slot * 16))
migration_port_max = $((49216 + slot * 16 + 15))
nbd_tls_x509_cert_dir = "$dir/nbd-tls"
EOF
  cat >"$dir/etc/libvirtd.conf" <<EOF
# stratus: peer libvirtd of scripts/libvirt-peer.sh
unix_sock_dir = "$dir"
unix_sock_rw_perms = "0770"
host_uuid = "$(cat /proc/sys/kernel/random/uuid)"
log_outputs = "3:file:$dir/libvirtd.log"
EOF
  # The private mounts and both daemons, in one new mount namespace;
  # the daemons keep it alive after unshare returns.
  unshare -m --propagation private /bin/sh -c '
    set -e
    dir=$1
    # The first libvirtd stays reachable from in here, for migrations
    # back to it: its /run/libvirt, bound before the tmpfs hides it.
    mount --bind /run/libvirt "$dir/host"
    mount --bind "$dir/etc" /etc/libvirt
    for p in /run/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt; do
      mkdir -p "$p"
      mount -t tmpfs -o mode=0755 tmpfs "$p"
    done
    mkdir -p /var/lib/libvirt/qemu /var/lib/libvirt/images /var/log/libvirt/qemu /var/cache/libvirt/qemu
    virtlogd -d -p "$dir/virtlogd.pid"
    libvirtd -d -p "$dir/libvirtd.pid" -f /etc/libvirt/libvirtd.conf
  ' sh "$dir" || die "cannot start the peer in a private mount namespace (needs root and CAP_SYS_ADMIN)"
  for _ in $(seq 300); do
    if virsh -c "$uri" version >/dev/null 2>&1; then
      echo "$uri"
      return 0
    fi
    sleep 0.1
  done
  tail -20 "$dir/libvirtd.log" >&2 || true
  stop_daemons
  die "peer libvirtd does not answer on $uri after 30s"
}

# stop_daemons destroys the peer's guests, then stops its libvirtd and
# virtlogd and any process left in its mount namespace (its QEMUs).
stop_daemons() {
  local pid ns p
  if running libvirtd "$dir/libvirtd.pid"; then
    pid=$(cat "$dir/libvirtd.pid")
    ns=$(readlink "/proc/$pid/ns/mnt" 2>/dev/null || true)
    for dom in $(virsh -c "$uri" list --name 2>/dev/null); do
      virsh -c "$uri" destroy "$dom" >/dev/null 2>&1 || true
    done
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do running libvirtd "$dir/libvirtd.pid" || break; sleep 0.1; done
    if [ -n "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/mnt)" ]; then
      for p in /proc/[0-9]*; do
        [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && kill -9 "${p#/proc/}" 2>/dev/null || true
      done
    fi
  fi
  if running virtlogd "$dir/virtlogd.pid"; then
    kill "$(cat "$dir/virtlogd.pid")" 2>/dev/null || true
  fi
}

stop() {
  stop_daemons
  rm -rf "$dir"
}

case "$cmd" in
start) start ;;
stop) stop ;;
uri) echo "$uri" ;;
host-uri) echo "$host_uri" ;;
nbd-tls-dir) echo "$dir/nbd-tls" ;;
*) die "usage: $0 start|stop|uri|host-uri|nbd-tls-dir [NAME]" ;;
esac
