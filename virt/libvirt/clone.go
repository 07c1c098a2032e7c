package libvirt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Copies inside the pool (a disk taken from another host's files on
// shared storage): a reflink clone where the file system has them
// (XFS, Btrfs, OCFS2, NFS 4.2 servers that do), which copies no data
// and shares the blocks until either file writes them; else a sparse
// copy that reads only the extents holding data and leaves the holes
// as holes, so that a mostly empty overlay stays small.

// cloneFile puts a copy of src at dst (through a temporary file in
// dst's directory, renamed into place) and reports whether it was a
// clone. src is only ever read.
func cloneFile(src, dst string) (cloned bool, err error) {
	in, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := unix.IoctlFileClone(int(tmp.Fd()), int(in.Fd())); err == nil {
		cloned = true
	} else if err := sparseCopy(tmp, in); err != nil {
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		return false, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	return cloned, os.Rename(tmp.Name(), dst)
}

// sparseCopy copies in's data extents to the empty file out at the same
// offsets (SEEK_DATA/SEEK_HOLE) and gives out in's size.
func sparseCopy(out, in *os.File) error {
	st, err := in.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	for off := int64(0); off < size; {
		data, err := in.Seek(off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		} else if err != nil {
			return fmt.Errorf("seek data: %w", err)
		}
		hole, err := in.Seek(data, unix.SEEK_HOLE)
		if err != nil {
			return fmt.Errorf("seek hole: %w", err)
		}
		if _, err := in.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := out.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyN(out, in, hole-data); err != nil {
			return fmt.Errorf("copy at %d: %w", data, err)
		}
		off = hole
	}
	return out.Truncate(size)
}
