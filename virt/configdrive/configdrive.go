// Package configdrive builds config drives: ISO 9660 images labelled
// config-2, with Rock Ridge and Joliet names so that guests (cloud-init,
// cloudbase-init) see the files under their real names, as Nova's
// genisoimage -J -r does. It is built in Go with go-diskfs; nothing is
// shelled out.
//
// It knows only files and images and must not decide what goes on a
// drive (client/instancedata's business) nor attach it (the drivers').
package configdrive

import (
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	diskfile "github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// Label is the volume label cloud-init looks for.
const Label = "config-2"

// MaxSize bounds a config drive, far above what metadata needs (Nova's
// user data alone is at most 64 KiB).
const MaxSize = 64 << 20

// Build returns the ISO image of files (path → data, slash-separated
// relative paths such as "openstack/latest/meta_data.json"). tmpDir is
// where it stages the tree ("" for the system's temporary directory);
// nothing is left there.
func Build(files map[string][]byte, tmpDir string) ([]byte, error) {
	work, err := os.MkdirTemp(tmpDir, "configdrive-")
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	tree := filepath.Join(work, "tree")
	total, size := 0, int64(1<<20)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		clean := path.Clean(name)
		if clean == "." || path.IsAbs(clean) || strings.HasPrefix(clean, "../") || clean == ".." {
			return nil, fmt.Errorf("config drive: file name %q is not a relative path", name)
		}
		total += len(files[name])
		// Each file's data rounded up to sectors, plus room for its
		// directory records and Rock Ridge and Joliet entries.
		size += int64(len(files[name])+sector-1)/sector*sector + 4*sector
		if total > MaxSize {
			return nil, fmt.Errorf("config drive: content is over %d bytes", MaxSize)
		}
		dst := filepath.Join(tree, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("config drive: %w", err)
		}
		if err := os.WriteFile(dst, files[name], 0o644); err != nil {
			return nil, fmt.Errorf("config drive: %w", err)
		}
	}
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	return finalize(work, tree, size)
}

// sector is the ISO 9660 logical block size.
const sector = 2048

// finalize writes the staged tree as an ISO image and reads it back.
func finalize(work, tree string, size int64) ([]byte, error) {
	isoPath := filepath.Join(work, "disk.config")
	b, err := diskfile.CreateFromPath(isoPath, size)
	if err != nil {
		return nil, fmt.Errorf("config drive: create image: %w", err)
	}
	defer func() { _ = b.Close() }()
	fs, err := iso9660.Create(b, size, 0, sector, tree)
	if err != nil {
		return nil, fmt.Errorf("config drive: create filesystem: %w", err)
	}
	if err := fs.Finalize(iso9660.FinalizeOptions{RockRidge: true, Joliet: true, DeepDirectories: true,
		VolumeIdentifier: Label}); err != nil {
		return nil, fmt.Errorf("config drive: write filesystem: %w", err)
	}
	img, err := os.ReadFile(isoPath)
	if err != nil {
		return nil, fmt.Errorf("config drive: read image: %w", err)
	}
	return trim(img), nil
}

// trim cuts the image to the volume space size its primary volume
// descriptor records (sector 16, bytes 80-83, little-endian), dropping
// the unused room it was created with.
func trim(img []byte) []byte {
	const pvd = 16 * sector
	if len(img) < pvd+84 {
		return img
	}
	blocks := int64(binary.LittleEndian.Uint32(img[pvd+80 : pvd+84]))
	if n := blocks * sector; n > 0 && n < int64(len(img)) {
		return img[:n]
	}
	return img
}

// Write builds the image of files and writes it to dst (mode 0644, so
// the hypervisor can read it), replacing what was there.
func Write(dst string, files map[string][]byte) error {
	img, err := Build(files, filepath.Dir(dst))
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, img, 0o644); err != nil {
		return fmt.Errorf("config drive: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("config drive: %w", err)
	}
	return nil
}
