#!/usr/bin/env bash
# Builds OpenTofu and the Terraform OpenStack provider from the Go module
# proxy into a cache directory, for the Terraform/OpenTofu smoke test
# (e2e/tofu_test.go). OpenTofu (MPL-2.0) stands in for Terraform (BUSL):
# both read the same configuration and run the same provider.
#
# Idempotent: a build already there at the pinned versions is kept.
# Prints the cache directory; the test finds the binaries under it:
#   $dir/bin/tofu
#   $dir/provider/terraform-provider-openstack  (for dev_overrides)
#
# Usage: scripts/tofu-setup.sh [dir]
#   dir defaults to $STRATUS_TOFU_DIR, else ~/.cache/stratus/tofu.
# On a 2-core machine the first build takes about 11 minutes for tofu
# and 2 for the provider (most of it compiling their dependencies).
set -euo pipefail

TOFU_MODULE=github.com/opentofu/opentofu
TOFU_VERSION=v1.12.6
PROVIDER_MODULE=github.com/terraform-provider-openstack/terraform-provider-openstack/v3
PROVIDER_VERSION=v3.4.0

dir="${1:-${STRATUS_TOFU_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/stratus/tofu}}"
mkdir -p "$dir/bin" "$dir/provider"
dir="$(cd "$dir" && pwd)"
command -v go >/dev/null || { echo "go is not installed" >&2; exit 1; }

stamp() { cat "$1" 2>/dev/null || true; }

# OpenTofu's go.mod has a replace directive (its fork of hcl), so
# `go install module@version` refuses it: build it as the main module,
# from a writable copy of the proxy's module zip.
if [ ! -x "$dir/bin/tofu" ] || [ "$(stamp "$dir/bin/tofu.version")" != "$TOFU_VERSION" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # Outside any module, so that no go.mod or go.sum is touched.
  src="$(cd "$work" && GO111MODULE=on go mod download -json "$TOFU_MODULE@$TOFU_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || { echo "go mod download $TOFU_MODULE@$TOFU_VERSION gave no directory" >&2; exit 1; }
  cp -r "$src" "$work/opentofu"
  chmod -R u+w "$work/opentofu"
  echo "building tofu $TOFU_VERSION into $dir/bin" >&2
  start=$(date +%s)
  (cd "$work/opentofu" && nice go build -ldflags "-s -w -X $TOFU_MODULE/version.dev=no" -o "$dir/bin/tofu.new" ./cmd/tofu)
  mv "$dir/bin/tofu.new" "$dir/bin/tofu"
  echo "$TOFU_VERSION" > "$dir/bin/tofu.version"
  echo "built tofu in $(( $(date +%s) - start ))s" >&2
  rm -rf "$work"
  trap - EXIT
fi

if [ ! -x "$dir/provider/terraform-provider-openstack" ] || [ "$(stamp "$dir/provider/provider.version")" != "$PROVIDER_VERSION" ]; then
  echo "building terraform-provider-openstack $PROVIDER_VERSION into $dir/provider" >&2
  start=$(date +%s)
  (cd / && GOBIN="$dir/provider" nice go install -ldflags "-s -w" "$PROVIDER_MODULE@$PROVIDER_VERSION")
  echo "$PROVIDER_VERSION" > "$dir/provider/provider.version"
  echo "built the provider in $(( $(date +%s) - start ))s" >&2
fi

TF_CLI_CONFIG_FILE=/dev/null "$dir/bin/tofu" version >/dev/null
echo "$dir"
