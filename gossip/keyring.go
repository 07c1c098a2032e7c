package gossip

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/memberlist"
)

// ErrEncryptionDisabled is returned by keyring operations on a pool that
// does not encrypt gossip: there is no keyring to change.
var ErrEncryptionDisabled = errors.New("gossip: encryption is not enabled (set encrypt in the agent configuration)")

// DecodeKey decodes a base64 gossip key and checks its size (16, 24 or
// 32 bytes for AES-128, -192 or -256).
func DecodeKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("gossip: key is not valid base64: %w", err)
	}
	if err := memberlist.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("gossip: key: %w", err)
	}
	return key, nil
}

// EncodeKey is the base64 form of a key, as DecodeKey reads it.
func EncodeKey(key []byte) string { return base64.StdEncoding.EncodeToString(key) }

// loadKeyring builds the pool's keyring: from the keyring file when it
// exists (it reflects every rotation since the key was first configured,
// so it wins over SecretKey), else from SecretKey, which is then written
// to the file so later rotations persist. It returns nil when gossip is
// not encrypted.
func (cfg Config) loadKeyring() (*memberlist.Keyring, error) {
	if cfg.KeyringFile != "" {
		keys, err := readKeyringFile(cfg.KeyringFile)
		switch {
		case err == nil:
			if len(cfg.SecretKey) > 0 && !containsKey(keys, cfg.SecretKey) {
				cfg.Logger.Warn("the configured encrypt key is not in the gossip keyring file, which wins; "+
					"remove the file to start over from the configured key", "file", cfg.KeyringFile)
			}
			return memberlist.NewKeyring(keys[1:], keys[0])
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	if len(cfg.SecretKey) == 0 {
		return nil, nil
	}
	key := append([]byte(nil), cfg.SecretKey...)
	ring, err := memberlist.NewKeyring(nil, key)
	if err != nil {
		return nil, fmt.Errorf("gossip: encryption key: %w", err)
	}
	if cfg.KeyringFile != "" {
		if err := writeKeyringFile(cfg.KeyringFile, ring.GetKeys()); err != nil {
			return nil, err
		}
	}
	return ring, nil
}

func containsKey(keys [][]byte, key []byte) bool {
	for _, k := range keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	return false
}

// readKeyringFile reads a keyring file: a JSON array of base64 keys, the
// primary first (Serf's format).
func readKeyringFile(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var encoded []string
	if err := json.Unmarshal(data, &encoded); err != nil {
		return nil, fmt.Errorf("gossip: keyring file %s: %w", path, err)
	}
	if len(encoded) == 0 {
		return nil, fmt.Errorf("gossip: keyring file %s holds no keys", path)
	}
	keys := make([][]byte, 0, len(encoded))
	for _, s := range encoded {
		k, err := DecodeKey(s)
		if err != nil {
			return nil, fmt.Errorf("gossip: keyring file %s: %w", path, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// writeKeyringFile replaces the keyring file atomically (mode 0600).
func writeKeyringFile(path string, keys [][]byte) error {
	encoded := make([]string, 0, len(keys))
	for _, k := range keys {
		encoded = append(encoded, EncodeKey(k))
	}
	data, err := json.MarshalIndent(encoded, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("gossip: keyring dir: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keyring-*")
	if err != nil {
		return fmt.Errorf("gossip: write keyring: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("gossip: write keyring: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("gossip: write keyring: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("gossip: write keyring: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("gossip: write keyring: %w", err)
	}
	return nil
}

// KeyringOp is an operation on the gossip keyring.
type KeyringOp string

// The keyring operations, as `serf keys` / `nomad operator gossip
// keyring` name them.
const (
	// KeyringList reports the installed keys.
	KeyringList KeyringOp = "list"
	// KeyringInstall adds a key, usable for decryption.
	KeyringInstall KeyringOp = "install"
	// KeyringUse makes an installed key the one that encrypts.
	KeyringUse KeyringOp = "use"
	// KeyringRemove drops a key other than the one in use.
	KeyringRemove KeyringOp = "remove"
)

// ParseKeyringOp reads an operation name.
func ParseKeyringOp(s string) (KeyringOp, error) {
	switch op := KeyringOp(s); op {
	case KeyringList, KeyringInstall, KeyringUse, KeyringRemove:
		return op, nil
	}
	return "", fmt.Errorf("gossip: unknown keyring operation %q (want list, install, use or remove)", s)
}

// LocalKeys returns this member's keys in base64, the primary first, or
// ErrEncryptionDisabled.
func (p *Pool) LocalKeys() ([]string, error) {
	if p.keyring == nil {
		return nil, ErrEncryptionDisabled
	}
	var out []string
	for _, k := range p.keyring.GetKeys() {
		out = append(out, EncodeKey(k))
	}
	return out, nil
}

// applyLocal performs op on this member's keyring and persists the
// result. It returns the keys afterwards (primary first, base64).
func (p *Pool) applyLocal(op KeyringOp, key []byte) ([]string, error) {
	if p.keyring == nil {
		return nil, ErrEncryptionDisabled
	}
	p.keyringMu.Lock()
	defer p.keyringMu.Unlock()
	var err error
	switch op {
	case KeyringList:
	case KeyringInstall:
		err = p.keyring.AddKey(key)
	case KeyringUse:
		err = p.keyring.UseKey(key)
	case KeyringRemove:
		if !containsKey(p.keyring.GetKeys(), key) {
			err = errors.New("the key is not installed")
		} else {
			err = p.keyring.RemoveKey(key)
		}
	default:
		err = fmt.Errorf("unknown keyring operation %q", op)
	}
	if err != nil {
		return nil, fmt.Errorf("%s key: %w", op, err)
	}
	if op != KeyringList && p.cfg.KeyringFile != "" {
		if err := writeKeyringFile(p.cfg.KeyringFile, p.keyring.GetKeys()); err != nil {
			return nil, err
		}
	}
	return p.LocalKeys()
}
