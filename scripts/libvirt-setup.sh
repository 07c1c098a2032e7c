#!/usr/bin/env bash
# Sets up libvirtd and QEMU for the libvirt driver (virt/libvirt) and its
# tests on Debian, as root: installs the packages, writes a qemu.conf that
# works inside a container (guests run as root, no security driver, no
# cgroups, no private /dev namespace), creates the user and group the
# packages expect, then starts virtlogd and libvirtd unless they already
# run and waits until `virsh -c qemu:///system version` answers.
#
# Idempotent and quiet on success; VERBOSE=1 says what it does. It only
# ever stops a libvirtd it finds running when it had to change qemu.conf
# (the new settings need a restart); running guests survive that.
set -euo pipefail

say() { if [ -n "${VERBOSE:-}" ]; then echo "libvirt-setup: $*" >&2; fi; }
die() { echo "libvirt-setup: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and starts libvirtd)"

URI=qemu:///system
QEMU_CONF=/etc/libvirt/qemu.conf
MARK="# stratus: managed by scripts/libvirt-setup.sh"

# 1. Packages. Another apt run (e.g. one started in the background) holds
# the dpkg lock: wait for it rather than fail.
# qemu-system-common (a dependency of qemu-system-x86, named for its
# qemu-storage-daemon) serves the storage agents' NBD exports.
pkgs=(libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86 qemu-system-common qemu-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
  say "installing ${missing[*]}"
  log=$(mktemp)
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get -o DPkg::Lock::Timeout=900 update -qq &&
    apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    die "installing ${missing[*]} failed"
  fi
  rm -f "$log"
fi
for b in libvirtd virtlogd virsh qemu-img qemu-io qemu-storage-daemon; do
  command -v "$b" >/dev/null || die "$b not found after installing ${pkgs[*]}"
done
# scripts/libvirt-peer.sh (the second libvirtd of the live-migration
# tests) needs util-linux's unshare and mount, essential on Debian.
for b in unshare mount; do
  command -v "$b" >/dev/null || die "$b not found (install util-linux and mount)"
done

# 2. The user and group the packages expect (containers often lack them).
getent group kvm >/dev/null || { say "adding group kvm"; groupadd -r kvm; }
getent group libvirt >/dev/null || { say "adding group libvirt"; groupadd -r libvirt; }
getent group libvirt-qemu >/dev/null || { say "adding group libvirt-qemu"; groupadd -r libvirt-qemu; }
getent passwd libvirt-qemu >/dev/null ||
  { say "adding user libvirt-qemu"; useradd -r -g kvm -G libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu; }

# 3. qemu.conf: our settings in a marked block; an existing file keeps
# its other lines, with the keys we set commented out.
want="$MARK
user = \"root\"
group = \"root\"
dynamic_ownership = 0
remember_owner = 0
security_driver = \"none\"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = \"logd\"
# end stratus"
changed=""
mkdir -p /etc/libvirt
if [ ! -f "$QEMU_CONF" ] || ! grep -qF "$MARK" "$QEMU_CONF"; then
  say "writing $QEMU_CONF"
  touch "$QEMU_CONF"
  for key in user group dynamic_ownership remember_owner security_driver cgroup_controllers namespaces stdio_handler; do
    sed -i -E "s/^[[:space:]]*${key}[[:space:]]*=/# &/" "$QEMU_CONF"
  done
  printf '%s\n' "$want" >>"$QEMU_CONF"
  changed=1
elif [ "$(awk -v m="$MARK" '$0 == m {on = 1} on {print} /^# end stratus$/ {on = 0}' "$QEMU_CONF")" != "$want" ]; then
  say "updating the stratus block of $QEMU_CONF"
  awk -v m="$MARK" '$0 == m {on = 1} !on {print} /^# end stratus$/ {on = 0}' "$QEMU_CONF" >"$QEMU_CONF.new"
  mv "$QEMU_CONF.new" "$QEMU_CONF"
  printf '%s\n' "$want" >>"$QEMU_CONF"
  changed=1
fi
mkdir -p /var/lib/libvirt/qemu /var/lib/libvirt/images /var/cache/libvirt/qemu /var/log/libvirt/qemu /run/libvirt

# 4. Daemons. A daemon counts as running when its pid file names a live
# process of that name.
running() { # name pidfile
  local pid
  pid=$(cat "$2" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$1" ]
}
answers() { virsh -c "$URI" version >/dev/null 2>&1; }

if ! running virtlogd /run/virtlogd.pid; then
  say "starting virtlogd"
  virtlogd -d
fi
if [ -n "$changed" ] && running libvirtd /run/libvirtd.pid; then
  pid=$(cat /run/libvirtd.pid)
  say "restarting libvirtd (pid $pid) for the new qemu.conf"
  kill "$pid"
  for _ in $(seq 100); do running libvirtd /run/libvirtd.pid || break; sleep 0.1; done
fi
if ! running libvirtd /run/libvirtd.pid; then
  say "starting libvirtd"
  libvirtd -d
fi
for _ in $(seq 300); do
  if answers; then
    say "libvirtd answers on $URI"
    exit 0
  fi
  sleep 0.1
done
virsh -c "$URI" version >&2 || true
die "libvirtd does not answer on $URI after 30s (see /var/log/libvirt/libvirtd.log)"
