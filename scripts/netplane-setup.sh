#!/usr/bin/env bash
# Installs the host tools the network dataplane (client/dataplane) and its
# tests use, from Debian's packages, as root: iproute2 (bridges, network
# namespaces), nftables (security groups, NAT), dnsmasq-base (DHCP), and
# for the tests busybox (udhcpc), netcat-openbsd and iputils-ping.
# Idempotent and quiet when everything is there.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "netplane-setup: must run as root" >&2; exit 1; }
declare -A bins=([ip]=iproute2 [nft]=nftables [dnsmasq]=dnsmasq-base [busybox]=busybox [nc]=netcat-openbsd [ping]=iputils-ping)
missing=()
for b in "${!bins[@]}"; do
  command -v "$b" >/dev/null || missing+=("${bins[$b]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${missing[@]}"
fi
for b in "${!bins[@]}"; do
  command -v "$b" >/dev/null || { echo "netplane-setup: $b not found after installing" >&2; exit 1; }
done
