#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, from
# Debian's packages and the Go module proxy:
#   - the Go modules (the toolchain itself comes with the machine);
#   - python3-openstackclient and python3-novaclient, the real OpenStack
#     clients the Nova API is tested with.
# Later issues add libvirtd/QEMU and Chromium here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "go is not installed" >&2; exit 1; }
go version
go mod download

need=()
command -v openstack >/dev/null || need+=(python3-openstackclient)
command -v nova >/dev/null || need+=(python3-novaclient)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
openstack --version
