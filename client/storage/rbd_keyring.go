package storage

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// CephKey reads the cephx key of client.<user> from a Ceph keyring file
// (the INI form ceph auth get-or-create -o writes): the base64 text a
// libvirt ceph secret is given. The key never leaves the host it is read
// on except to its libvirtd.
func CephKey(keyring, user string) (string, error) {
	f, err := os.Open(keyring)
	if err != nil {
		return "", fmt.Errorf("ceph keyring: %w", err)
	}
	defer f.Close()
	want := "[client." + user + "]"
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = line == want
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if in && ok && strings.TrimSpace(k) == "key" {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("ceph keyring %s: %w", keyring, err)
	}
	return "", fmt.Errorf("ceph keyring %s has no key for client.%s", keyring, user)
}
