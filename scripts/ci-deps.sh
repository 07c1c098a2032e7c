#!/usr/bin/env bash
# Installs and starts what the test suite needs on a fresh Debian machine.
# Today that is only the Go toolchain (already on the machine) and the Go
# modules, fetched from the module proxy. Later issues add libvirtd/QEMU,
# Chromium and the openstack CLI here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "go is not installed" >&2; exit 1; }
go version
go mod download
