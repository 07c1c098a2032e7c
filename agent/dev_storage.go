package agent

import (
	"os/exec"
	"path/filepath"
)

// devStorageGB is the size of a dev cloud's volume pool.
const devStorageGB = 50

// devStorage makes a dev cloud's host a storage host, with a volume pool
// in its data dir, so that `openstack volume create` works on `make
// dev`; only where qemu-img is installed (the pool makes its files with
// it), and not when the configuration has a storage block of its own.
func (c *Config) devStorage() {
	if c.Client.Storage != nil {
		return
	}
	if _, err := exec.LookPath("qemu-img"); err != nil {
		return
	}
	c.Client.Storage = &StorageConfig{PoolDir: filepath.Join(c.DataDir, "volumes"), CapacityGB: devStorageGB}
}
