#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, from
# Debian's packages and the Go module proxy:
#   - the Go modules (the toolchain itself comes with the machine);
#   - python3-openstackclient and python3-novaclient, the real OpenStack
#     clients the Nova API is tested with;
#   - libvirtd and QEMU, running (scripts/libvirt-setup.sh), for the
#     libvirt driver's tests, which fail under CI=true without them, and
#     qemu-storage-daemon (qemu-system-common) for the storage agent's
#     NBD exports (client/storage, virt/libvirt), likewise;
#   - chromium and chromium-driver, the headless browser the web UI's
#     end-to-end tests (e2e/ui) drive, which fail under CI=true without it;
#   - nftables, dnsmasq-base, busybox, netcat-openbsd and iputils-ping
#     (scripts/netplane-setup.sh) for the network dataplane's tests
#     (client/dataplane), which fail under CI=true without them.
#   - cloud-init and genisoimage (isoinfo), whose readers check the
#     metadata service's answers and config drives (agent/metadata,
#     virt/configdrive), which fail under CI=true without them.
#   - OpenTofu and the Terraform OpenStack provider (scripts/tofu-setup.sh),
#     for the Terraform smoke test (e2e/tofu_test.go), which fails under
#     CI=true without them.
#   - awscli, the unmodified AWS CLI the EC2 API is tested with
#     (e2e/aws_cli_ec2_test.go), which fails under CI=true without it.
#   - a single-node Ceph cluster (scripts/ceph-setup.sh: ceph-mon,
#     ceph-osd, ceph-mgr, ceph-common, qemu-block-extra) for the RBD
#     backend's tests (client/storage, virt/libvirt), which fail under
#     CI=true without it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "go is not installed" >&2; exit 1; }
go version
go mod download
# OpenTofu and the Terraform OpenStack provider take minutes of CPU to
# build while the package installs below mostly wait on the network and
# the disk: build them meanwhile, and wait for them at the end.
tofu_log="$(mktemp)"
scripts/tofu-setup.sh >"$tofu_log" 2>&1 &
tofu_pid=$!

need=()
command -v openstack >/dev/null || need+=(python3-openstackclient)
command -v nova >/dev/null || need+=(python3-novaclient)
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
# cloud-init's own readers check the metadata service and config drives
# (agent/metadata); isoinfo (genisoimage) reads config drive images.
[ -d /usr/lib/python3/dist-packages/cloudinit ] || need+=(cloud-init)
command -v isoinfo >/dev/null || need+=(genisoimage)
# Debian's AWS CLI, at /usr/bin/aws (another aws on the path may be any
# version).
[ -x /usr/bin/aws ] || need+=(awscli)
# The single-node Ceph cluster's daemons and QEMU's rbd driver.
for p in ceph-mon ceph-osd ceph-mgr ceph-common qemu-block-extra; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
openstack --version
# The Ceph cluster's bootstrap (about 25 s) runs while libvirt is set up.
ceph_log="$(mktemp)"
if [ "$(id -u)" -eq 0 ]; then
  scripts/ceph-setup.sh >"$ceph_log" 2>&1 &
else
  sudo scripts/ceph-setup.sh >"$ceph_log" 2>&1 &
fi
ceph_pid=$!
# cloud-init is there for its Python readers only: never let it run at
# boot and probe a metadata address on this machine.
if [ -d /etc/cloud ] && [ ! -e /etc/cloud/cloud-init.disabled ]; then
  ${SUDO:-} touch /etc/cloud/cloud-init.disabled 2>/dev/null || sudo touch /etc/cloud/cloud-init.disabled
fi

if [ "$(id -u)" -eq 0 ]; then
  scripts/libvirt-setup.sh
  scripts/netplane-setup.sh
else
  sudo scripts/libvirt-setup.sh
  sudo scripts/netplane-setup.sh
fi
virsh -c qemu:///system version | grep -i 'running hypervisor'
# OpenTofu and the Terraform OpenStack provider (started above), for the
# Terraform smoke test (e2e/tofu_test.go).
if ! wait "$tofu_pid"; then
  cat "$tofu_log" >&2
  echo "ci-deps: scripts/tofu-setup.sh failed" >&2
  exit 1
fi
cat "$tofu_log"
rm -f "$tofu_log"
if ! wait "$ceph_pid"; then
  cat "$ceph_log" >&2
  echo "ci-deps: scripts/ceph-setup.sh failed" >&2
  exit 1
fi
cat "$ceph_log"
rm -f "$ceph_log"
