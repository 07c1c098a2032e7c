package fake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/virt"
)

// Shared storage (Config.SharedDir), modelled on the libvirt driver's
// shared_storage: every instance's disks are also files in the shared
// directory, named <id>+<attempt>-<role> under an attempt drawn at its
// spawn, so two hosts building the same instance (a move onto shared
// storage, an evacuation) never write one file. A host writes and
// deletes only its own attempt's files; another host's are only ever
// read (SharedDisks, an evacuation's destination), so a revert finds the
// source's disks as they were and a confirm deletes them only then.

// newAttempt names a spawn's files.
func newAttempt() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sharedFile is the file of an instance's disk of a role in an attempt.
func (d *Driver) sharedFile(id, attempt, role string) string {
	return filepath.Join(d.cfg.SharedDir, id+"+"+attempt+"-"+role)
}

// writeSharedLocked writes in's disks to its attempt's files, when the
// host has shared storage; callers hold d.mu.
func (d *Driver) writeSharedLocked(id string, in *instance) error {
	if d.cfg.SharedDir == "" || in.attempt == "" {
		return nil
	}
	if err := os.MkdirAll(d.cfg.SharedDir, 0o755); err != nil {
		return fmt.Errorf("shared storage: %w", err)
	}
	for _, role := range diskRoles(&in.spec) {
		path := d.sharedFile(id, in.attempt, role)
		if err := os.WriteFile(path+".tmp", in.disks[role], 0o600); err != nil {
			return fmt.Errorf("shared storage: %w", err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return fmt.Errorf("shared storage: %w", err)
		}
	}
	return nil
}

// removeSharedLocked deletes in's own files from shared storage;
// callers hold d.mu.
func (d *Driver) removeSharedLocked(id string, in *instance) error {
	if d.cfg.SharedDir == "" || in.attempt == "" {
		return nil
	}
	for _, role := range diskRoles(&in.spec) {
		if err := os.Remove(d.sharedFile(id, in.attempt, role)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("shared storage: %w", err)
		}
	}
	return nil
}

// SharedDisks finds the root and ephemeral disks another host built for
// instance id in the shared directory, none without shared storage
// (virt.SharedDiskFinder). When several attempts left files there, the
// one whose root disk was written last is the instance's, as with the
// libvirt driver.
func (d *Driver) SharedDisks(ctx context.Context, id, imageID string) ([]virt.ImportedDisk, error) {
	if err := d.begin(ctx, "SharedDisks", 0); err != nil {
		return nil, wrap("SharedDisks", id, err)
	}
	if d.cfg.SharedDir == "" {
		return nil, nil
	}
	d.mu.Lock()
	own := ""
	if in, ok := d.instances[id]; ok {
		own = in.attempt
	}
	d.mu.Unlock()
	entries, err := os.ReadDir(d.cfg.SharedDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, wrap("SharedDisks", id, err)
	}
	type found struct {
		roles map[string]string // role → path
		mtime time.Time         // the root disk's
	}
	attempts := map[string]*found{}
	for _, e := range entries {
		attempt, role, ok := strings.Cut(strings.TrimPrefix(e.Name(), id+"+"), "-")
		if !strings.HasPrefix(e.Name(), id+"+") || !ok || attempt == own || !e.Type().IsRegular() ||
			(role != virt.DiskRoleRoot && role != virt.DiskRoleEphemeral) {
			continue
		}
		f := attempts[attempt]
		if f == nil {
			f = &found{roles: map[string]string{}}
			attempts[attempt] = f
		}
		f.roles[role] = filepath.Join(d.cfg.SharedDir, e.Name())
		if role == virt.DiskRoleRoot {
			if info, err := e.Info(); err == nil {
				f.mtime = info.ModTime()
			}
		}
	}
	var best *found
	for _, f := range attempts {
		if _, ok := f.roles[virt.DiskRoleRoot]; ok && (best == nil || f.mtime.After(best.mtime)) {
			best = f
		}
	}
	if best == nil {
		return nil, nil
	}
	var out []virt.ImportedDisk
	for _, role := range []string{virt.DiskRoleRoot, virt.DiskRoleEphemeral} {
		if path, ok := best.roles[role]; ok {
			disk := virt.ImportedDisk{Role: role, Format: "raw", Path: path, Shared: true}
			if role == virt.DiskRoleRoot {
				disk.BackingImageID = imageID
			}
			out = append(out, disk)
		}
	}
	return out, nil
}

// SharedFile returns the path of the regular file name in the shared
// directory (virt.SharedPool), so that a move between hosts sharing it
// reads the source's file there instead of fetching it; a name that
// could lead elsewhere is refused.
func (d *Driver) SharedFile(name string) (string, bool) {
	if d.cfg.SharedDir == "" || name == "" || strings.HasPrefix(name, ".") || strings.ContainsAny(name, `/\`) {
		return "", false
	}
	path := filepath.Join(d.cfg.SharedDir, name)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return path, true
}
