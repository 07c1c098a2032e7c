package libvirt

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/stratus-cloud/stratus/virt"
)

// Moves between hosts sharing the pool (virt.SharedPool). With
// shared_storage the pool's directory is the same on every host, so a
// resize's or cold migration's destination sees the source's volumes:
// the source names each disk's file in its manifest, and the
// destination, once its agent has checked the file is the disk the
// manifest describes, copies it inside the pool under its own attempt's
// name (importVolume: a clone where the file system has them). The
// source's file is only ever read, so a revert finds it as it was.

var _ virt.SharedPool = (*Driver)(nil)

// poolFile is the name a disk file at path has in a shared pool, ""
// when the pool is not shared or path is not directly in it.
func (d *Driver) poolFile(path string) string {
	if !d.cfg.SharedStorage || filepath.Dir(filepath.Clean(path)) != filepath.Clean(d.cfg.ImagesDir) {
		return ""
	}
	return filepath.Base(path)
}

// SharedFile returns the path of the regular file name in the pool's
// directory when the pool is shared; a name with a separator, "." or
// "..", or a symbolic link, is never followed.
func (d *Driver) SharedFile(name string) (string, bool) {
	if !d.cfg.SharedStorage || name == "" || name == "." || name == ".." ||
		strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", false
	}
	path := filepath.Join(d.cfg.ImagesDir, name)
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return path, true
}
