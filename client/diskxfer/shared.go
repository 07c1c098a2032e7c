package diskxfer

import (
	"errors"
	"fmt"
	"os"

	"github.com/stratus-cloud/stratus/virt"
)

// Moves between hosts sharing a pool. The source names each disk's file
// in its pool (Disk.File); a destination whose driver sees a file of
// that name in its own pool (Fetcher.Local, which never leads outside
// that pool) checks that it is the very disk the source describes, by
// size and SHA-256, and hands it to its driver as a shared file: the
// driver copies it inside the pool under its own attempt's name (a
// clone where the file system can) and never writes the source's file.
// Nothing of the disk then crosses the network between the agents. A
// file that is missing or differs is fetched as on unshared storage.

// errNotShared means the destination does not see the source's file.
var errNotShared = errors.New("the source's file is not in this host's pool")

// shared returns d as a file of this host's shared pool, if it is one.
func (f *Fetcher) shared(d Disk) (virt.ImportedDisk, bool) {
	if f.Local == nil || d.File == "" {
		return virt.ImportedDisk{}, false
	}
	path, err := f.checkShared(d)
	if err != nil {
		if f.Skipped != nil {
			f.Skipped(d.Role, err)
		}
		return virt.ImportedDisk{}, false
	}
	return virt.ImportedDisk{Role: d.Role, Format: d.Format, BackingImageID: d.BackingImageID, Path: path, Shared: true}, true
}

// checkShared finds d's file in the pool and checks it is d.
func (f *Fetcher) checkShared(d Disk) (string, error) {
	path, ok := f.Local(d.File)
	if !ok {
		return "", errNotShared
	}
	file, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open the shared file: %w", err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return "", fmt.Errorf("the shared file: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() != d.Size {
		return "", fmt.Errorf("the shared file %s has %d bytes, the source says %d", path, st.Size(), d.Size)
	}
	sum, err := fileDigest(file)
	if err != nil {
		return "", fmt.Errorf("read the shared file: %w", err)
	}
	if sum != d.SHA256 {
		return "", fmt.Errorf("the shared file %s has digest %s, the source says %s", path, sum, d.SHA256)
	}
	return path, nil
}
