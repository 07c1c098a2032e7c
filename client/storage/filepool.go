package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/stratus-cloud/stratus/structs"
)

// FilePool is the embedded backend: volumes and snapshots as qcow2 files
// in one directory. Before it creates a file it writes a marker under
// .stratus-owned/ naming it; it deletes only files with a marker, so a
// file an operator put in the pool (or another agent's) is never lost.
// A file is built under a temporary name and renamed into place once
// complete, so a crash never leaves a half-made volume under its real
// name.
type FilePool struct {
	dir     string
	qemuImg string
}

// ownedDir holds the markers of the files the pool created.
const ownedDir = ".stratus-owned"

// NewFilePool opens (creating it if needed) a pool in dir; qemu-img must
// be installed.
func NewFilePool(dir string) (*FilePool, error) {
	if dir == "" {
		return nil, errors.New("storage pool: pool_dir is required")
	}
	qemuImg, err := exec.LookPath("qemu-img")
	if err != nil {
		return nil, fmt.Errorf("storage pool: qemu-img (qemu-utils) is required: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ownedDir), 0o700); err != nil {
		return nil, fmt.Errorf("storage pool %s: %w", dir, err)
	}
	return &FilePool{dir: dir, qemuImg: qemuImg}, nil
}

// VolumePath is where volume id's file is.
func (p *FilePool) VolumePath(id string) string {
	return filepath.Join(p.dir, "volume-"+safeID(id)+".qcow2")
}

// SnapshotPath is where snapshot id's file is.
func (p *FilePool) SnapshotPath(id string) string {
	return filepath.Join(p.dir, "snapshot-"+safeID(id)+".qcow2")
}

// safeID keeps an id from naming a path outside the pool.
func safeID(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, id)
}

func (p *FilePool) marker(path string) string {
	return filepath.Join(p.dir, ownedDir, filepath.Base(path))
}

// owned reports whether the pool created path.
func (p *FilePool) owned(path string) bool {
	_, err := os.Stat(p.marker(path))
	return err == nil
}

// CreateVolume builds v's file from src and grows it to v.SizeGB.
func (p *FilePool) CreateVolume(ctx context.Context, v *structs.Volume, src Source) (string, error) {
	path := p.VolumePath(v.ID)
	from := src.ImagePath
	switch {
	case src.SnapshotID != "":
		from = p.SnapshotPath(src.SnapshotID)
	case src.VolumeID != "":
		from = p.VolumePath(src.VolumeID)
	}
	if err := p.build(ctx, path, from, v.SizeGB); err != nil {
		return "", fmt.Errorf("create volume %s: %w", v.ID, err)
	}
	return path, nil
}

// build makes path: a copy of from (a new empty image when ""), at
// least sizeGB large. A complete file it made before is kept.
func (p *FilePool) build(ctx context.Context, path, from string, sizeGB int) error {
	if _, err := os.Stat(path); err == nil {
		if !p.owned(path) {
			return fmt.Errorf("%s exists and the pool did not create it; it is left alone", path)
		}
		return p.grow(ctx, path, sizeGB)
	}
	if err := os.WriteFile(p.marker(path), nil, 0o600); err != nil {
		return fmt.Errorf("record %s: %w", path, err)
	}
	tmp := path + ".part"
	// A .part of a marked name is the pool's own leftover.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	size := strconv.Itoa(sizeGB) + "G"
	var err error
	if from == "" {
		err = p.run(ctx, "create", "-q", "-f", "qcow2", tmp, size)
	} else {
		if _, serr := os.Stat(from); serr != nil {
			return fmt.Errorf("source %s: %w", from, serr)
		}
		err = p.run(ctx, "convert", "-q", "-O", "qcow2", from, tmp)
		if err == nil {
			err = p.grow(ctx, tmp, sizeGB)
		}
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("move %s into place: %w", path, err)
	}
	return nil
}

// grow resizes path to sizeGB unless it is that large already.
func (p *FilePool) grow(ctx context.Context, path string, sizeGB int) error {
	cur, err := p.VirtualSize(ctx, path)
	if err != nil {
		return err
	}
	if cur >= int64(sizeGB)<<30 {
		return nil
	}
	return p.run(ctx, "resize", "-q", "-f", "qcow2", path, strconv.Itoa(sizeGB)+"G")
}

// VirtualSize is a disk image's size as its guest sees it.
func (p *FilePool) VirtualSize(ctx context.Context, path string) (int64, error) {
	out, err := p.output(ctx, "info", "--output=json", "-U", path)
	if err != nil {
		return 0, err
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return 0, fmt.Errorf("qemu-img info %s: %w", path, err)
	}
	return info.VirtualSize, nil
}

// ExtendVolume grows v's file to v.SizeGB.
func (p *FilePool) ExtendVolume(ctx context.Context, v *structs.Volume) error {
	path := p.VolumePath(v.ID)
	if !p.owned(path) {
		return fmt.Errorf("extend volume %s: the pool has no file for it", v.ID)
	}
	if err := p.grow(ctx, path, v.SizeGB); err != nil {
		return fmt.Errorf("extend volume %s: %w", v.ID, err)
	}
	return nil
}

// DeleteVolume removes volume id's file if the pool made it.
func (p *FilePool) DeleteVolume(_ context.Context, id string) error {
	return p.remove(p.VolumePath(id))
}

// CreateSnapshot copies the volume's file as it is now.
func (p *FilePool) CreateSnapshot(ctx context.Context, snap *structs.VolumeSnapshot) (string, error) {
	path := p.SnapshotPath(snap.ID)
	src := p.VolumePath(snap.VolumeID)
	if _, err := os.Stat(path); err != nil && !p.owned(src) {
		return "", fmt.Errorf("snapshot %s: the pool has no file for volume %s", snap.ID, snap.VolumeID)
	}
	if err := p.build(ctx, path, src, snap.SizeGB); err != nil {
		return "", fmt.Errorf("snapshot %s: %w", snap.ID, err)
	}
	return path, nil
}

// DeleteSnapshot removes snapshot id's file if the pool made it.
func (p *FilePool) DeleteSnapshot(_ context.Context, id string) error {
	return p.remove(p.SnapshotPath(id))
}

// remove deletes a file the pool made, its leftover .part and its
// marker; a file without a marker stays.
func (p *FilePool) remove(path string) error {
	if !p.owned(path) {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s was not created by the pool; it is left alone", path)
		}
		return nil
	}
	for _, f := range []string{path, path + ".part"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", f, err)
		}
	}
	if err := os.Remove(p.marker(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the marker of %s: %w", path, err)
	}
	return nil
}

// CapacityGB is the size of the file system under the pool.
func (p *FilePool) CapacityGB() (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(p.dir, &st); err != nil {
		return 0, fmt.Errorf("storage pool %s: %w", p.dir, err)
	}
	return int64(st.Blocks) * int64(st.Bsize) >> 30, nil
}

func (p *FilePool) run(ctx context.Context, args ...string) error {
	_, err := p.output(ctx, args...)
	return err
}

func (p *FilePool) output(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, p.qemuImg, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("qemu-img %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
