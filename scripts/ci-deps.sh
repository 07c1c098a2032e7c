#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, from
# Debian's packages and the Go module proxy:
#   - the Go modules (the toolchain itself comes with the machine);
#   - python3-openstackclient and python3-novaclient, the real OpenStack
#     clients the Nova API is tested with;
#   - libvirtd and QEMU, running (scripts/libvirt-setup.sh), for the
#     libvirt driver's tests, which fail under CI=true without them;
#   - chromium and chromium-driver, the headless browser the web UI's
#     end-to-end tests (e2e/ui) drive, which fail under CI=true without it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "go is not installed" >&2; exit 1; }
go version
go mod download

need=()
command -v openstack >/dev/null || need+=(python3-openstackclient)
command -v nova >/dev/null || need+=(python3-novaclient)
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
openstack --version

if [ "$(id -u)" -eq 0 ]; then
  scripts/libvirt-setup.sh
else
  sudo scripts/libvirt-setup.sh
fi
virsh -c qemu:///system version | grep -i 'running hypervisor'
