#!/usr/bin/env bash
# Builds the small bootable dev image that `cloudctl agent --dev` registers,
# from Debian packages only (nothing is downloaded from elsewhere): Debian's
# cloud kernel, a busybox initramfs with the virtio modules, and syslinux on
# a FAT disk image (no partition table, no mount: mtools writes the files).
# The guest prints its banner on the serial console, loads virtio, asks
# DHCP for its addresses, mounts a config drive or queries the metadata
# service for its host name and runs a busybox shell on the console.
#
#   scripts/build-dev-image.sh [OUT]   (default build/dev-image/stratus-dev.img)
#
# Idempotent: an existing OUT is kept. Needs root with apt-get the first
# time (to install syslinux, mtools, dosfstools, busybox-static and cpio).
set -euo pipefail

out=${1:-build/dev-image/stratus-dev.img}
if [[ -s $out ]]; then
  exit 0
fi
need=(syslinux mcopy mkfs.vfat cpio)
missing=()
for t in "${need[@]}"; do command -v "$t" >/dev/null || missing+=("$t"); done
[[ -f /usr/lib/syslinux/modules/bios/ldlinux.c32 ]] || missing+=(syslinux-common)
[[ -x /bin/busybox ]] && file /bin/busybox 2>/dev/null | grep -q static || missing+=(busybox-static)
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    echo "build-dev-image: missing ${missing[*]}; run as root on Debian" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq syslinux syslinux-common mtools dosfstools busybox-static cpio file >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$(dirname "$out")"

# The kernel: whatever linux-image-cloud-amd64 depends on today.
kernel_pkg() { apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image/{print $2; exit}'; }
pkg=$(kernel_pkg)
if [[ -z $pkg ]]; then
  apt-get update -qq >/dev/null
  pkg=$(kernel_pkg)
fi
if [[ -z $pkg ]]; then
  echo "build-dev-image: no linux-image-cloud-amd64 in the apt sources" >&2
  exit 1
fi
# apt downloads as _apt: give it a directory it may write.
chmod 0777 "$work"
(cd "$work" && apt-get download "$pkg" >/dev/null 2>&1)
dpkg-deb -x "$work"/"$pkg"_*.deb "$work/kernel"
vmlinuz=$(ls "$work"/kernel/boot/vmlinuz-*)
moddir=$(ls -d "$work"/kernel/lib/modules/*)

# The initramfs: busybox, the virtio modules in load order, and /init.
root=$work/initramfs
mkdir -p "$root"/{bin,dev,proc,sys,etc,mnt,run,tmp,lib/modules}
cp /bin/busybox "$root/bin/busybox"
for m in virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net virtio_blk; do
  find "$moddir" -name "$m.ko" -exec cp {} "$root/lib/modules/" \;
  echo "$m" >>"$root/lib/modules/order"
done
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# Load the modules, retrying those whose dependencies came later.
todo=$(cat /lib/modules/order)
for pass in 1 2 3 4; do
  left=
  for m in $todo; do insmod /lib/modules/$m.ko 2>/dev/null || left="$left $m"; done
  todo=$left
done
[ -n "$todo" ] && echo "Stratus dev image: cannot load$todo"
echo "Stratus dev image: booted ($(uname -r))"
hostname stratus
if blkid -L config-2 >/dev/null 2>&1 || [ -e /dev/sr0 ]; then
  mount -o ro /dev/sr0 /mnt 2>/dev/null && [ -f /mnt/openstack/latest/meta_data.json ] &&
    echo "Stratus dev image: config drive found"
fi
ip link set lo up
for i in /sys/class/net/*; do
  n=${i##*/}; [ "$n" = lo ] && continue
  ip link set "$n" up
  if udhcpc -i "$n" -q -n -t 5 -s /bin/dhcp-script >/dev/null 2>&1; then
    echo "Stratus dev image: $n $(ip -4 -o addr show "$n" | awk '{print $4}')"
  else
    echo "Stratus dev image: no DHCP answer on $n"
  fi
done
wget -q -T 2 -O /tmp/hostname http://169.254.169.254/latest/meta-data/hostname 2>/dev/null &&
  hostname "$(cat /tmp/hostname)" && echo "Stratus dev image: metadata says $(hostname)"
echo "Stratus dev image: ready"
exec setsid cttyhack sh
INIT
cat >"$root/bin/dhcp-script" <<'DHCP'
#!/bin/busybox sh
case "$1" in
bound|renew)
  ip addr flush dev "$interface"
  ip addr add "$ip/${mask:-24}" dev "$interface"
  [ -n "$router" ] && ip route add default via "${router%% *}" dev "$interface"
  ;;
esac
DHCP
chmod +x "$root/init" "$root/bin/dhcp-script"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$work/initrd.gz"

# The disk: a FAT file system with syslinux in its boot sector.
img=$work/disk.img
size_mb=$(( ( $(stat -c %s "$vmlinuz") + $(stat -c %s "$work/initrd.gz") ) / 1048576 + 8 ))
truncate -s "${size_mb}M" "$img"
mkfs.vfat -n STRATUS "$img" >/dev/null
syslinux --install "$img"
cat >"$work/syslinux.cfg" <<'CFG'
DEFAULT stratus
PROMPT 0
TIMEOUT 0
LABEL stratus
  KERNEL vmlinuz
  INITRD initrd.gz
  APPEND console=tty0 console=ttyS0,115200 quiet panic=5
CFG
mcopy -i "$img" "$vmlinuz" ::vmlinuz
mcopy -i "$img" "$work/initrd.gz" ::initrd.gz
mcopy -i "$img" "$work/syslinux.cfg" ::syslinux.cfg
mcopy -i "$img" /usr/lib/syslinux/modules/bios/ldlinux.c32 ::ldlinux.c32 2>/dev/null || true
mv "$img" "$out"
echo "build-dev-image: wrote $out ($(du -h "$out" | cut -f1))"
