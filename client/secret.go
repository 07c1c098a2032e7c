package client

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// NodeSecretFile is the file in an agent's data dir that keeps its node
// secret, readable by the agent's user only.
const NodeSecretFile = "node-secret"

// nodeSecretBytes is the secret's entropy: 256 bits, hex-encoded.
const nodeSecretBytes = 32

// LoadOrCreateNodeSecret returns the node secret kept in dir, creating a
// random one (mode 0600) on first start. The agent presents it on every
// call about its hosts (Host.Register claims a host with it); losing it
// means an operator must deregister the host before it can register
// again.
func LoadOrCreateNodeSecret(dir string) (string, error) {
	path := filepath.Join(dir, NodeSecretFile)
	if secret, err := readNodeSecret(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return secret, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("node secret: %w", err)
	}
	buf := make([]byte, nodeSecretBytes)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("node secret: %w", err)
	}
	secret := hex.EncodeToString(buf)
	tmp, err := os.CreateTemp(dir, NodeSecretFile+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("node secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(secret + "\n")
	serr := tmp.Sync()
	if err := errors.Join(werr, serr, tmp.Close()); err != nil {
		return "", fmt.Errorf("node secret: write %s: %w", tmp.Name(), err)
	}
	// CreateTemp makes the file 0600. Link, unlike rename, fails if
	// another process created the secret meanwhile: then that one wins.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readNodeSecret(path)
		}
		return "", fmt.Errorf("node secret: %w", err)
	}
	return secret, nil
}

// readNodeSecret reads and checks a node secret file.
func readNodeSecret(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("node secret %s is readable by others (mode %v); make it 0600", path, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("node secret: %w", err)
	}
	secret := strings.TrimSpace(string(raw))
	if b, err := hex.DecodeString(secret); err != nil || len(b) != nodeSecretBytes {
		return "", fmt.Errorf("node secret %s is not %d hex-encoded bytes", path, nodeSecretBytes)
	}
	return secret, nil
}
