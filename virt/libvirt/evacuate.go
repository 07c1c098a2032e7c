package libvirt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/virt"
)

// Evacuation from shared storage (virt.SharedDiskFinder). With
// shared_storage the pool's directory is the same on every host, so the
// disks an instance's host built there outlive the host. The evacuation's
// destination finds them by name (<domain>+<attempt>-<role>: the volumes
// of the instance that no domain of its own records) and builds the
// instance on copies under its own attempt's names: the files of the
// host that went down are never written, moved or deleted here, since
// that host may come back to them (its agent then destroys its copy of
// the evacuated instance, by the names its own domain recorded).

// sharedRoles are the disks an evacuation takes from shared storage:
// those a cold move carries (moveRoles). Swap and the config drive are
// built afresh.
var sharedRoles = map[string]string{diskRoot: virt.DiskRoleRoot, diskEphemeral: virt.DiskRoleEphemeral}

// SharedDisks finds the root and ephemeral disks another host built for
// instance id in the shared pool, none without shared_storage. When
// several attempts left disks there (a move cut short by a crash), the
// one whose root disk was written last is the instance's.
func (d *Driver) SharedDisks(ctx context.Context, id, imageID string) ([]virt.ImportedDisk, error) {
	if !d.cfg.SharedStorage {
		return nil, nil
	}
	var out []virt.ImportedDisk
	err := d.read(ctx, "SharedDisks", id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		own, err := d.ownVolumes(lv, id)
		if err != nil {
			return err
		}
		attempts, err := d.sharedAttempts(id, own)
		if err != nil {
			return err
		}
		best := latestAttempt(attempts)
		if best == nil {
			return nil
		}
		if len(attempts) > 1 {
			d.cfg.Logger.Warn("several attempts left disks of the instance on shared storage; taking the one written last",
				"instance_id", id, "attempts", len(attempts), "root", best[diskRoot].name)
		}
		for own, role := range sharedRoles {
			f, ok := best[own]
			if !ok {
				continue
			}
			disk := virt.ImportedDisk{Role: role, Format: "qcow2", Path: f.path, Shared: true}
			if own == diskRoot {
				backed, err := hasBackingFile(f.path)
				if err != nil {
					return fmt.Errorf("the shared %s disk: %w", role, err)
				}
				if backed {
					disk.BackingImageID = imageID
				}
			}
			out = append(out, disk)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sharedFile is one volume of the instance found in the shared pool.
type sharedFile struct {
	name, path string
	mtime      time.Time
}

// ownVolumes are the volumes this host's domain of instance id records:
// they are its own, not another host's.
func (d *Driver) ownVolumes(lv *golibvirt.Libvirt, id string) (map[string]bool, error) {
	own := map[string]bool{}
	dom, err := d.lookup(lv, id)
	switch {
	case errors.Is(err, virt.ErrNotFound):
		return own, nil
	case err != nil:
		return nil, err
	}
	m, err := d.meta(lv, dom)
	if errors.Is(err, errNotOurs) {
		return own, nil
	} else if err != nil {
		return nil, fmt.Errorf("domain %s: %w", dom.Name, err)
	}
	for _, disk := range m.Disks {
		own[disk.Volume] = true
	}
	return own, nil
}

// sharedAttempts reads the pool's directory itself (this host's libvirtd
// has not listed the volumes another host's created) for the root and
// ephemeral volumes of instance id, grouped by attempt, leaving out the
// names in own.
func (d *Driver) sharedAttempts(id string, own map[string]bool) (map[string]map[string]sharedFile, error) {
	entries, err := os.ReadDir(d.cfg.ImagesDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // no host built anything here yet
	}
	if err != nil {
		return nil, fmt.Errorf("read the shared pool's directory: %w", err)
	}
	re := d.instanceVolumeRE(id)
	attempts := map[string]map[string]sharedFile{}
	for _, e := range entries {
		sub := re.FindStringSubmatch(e.Name())
		if sub == nil || own[e.Name()] || !e.Type().IsRegular() {
			continue
		}
		if _, ok := sharedRoles[sub[2]]; !ok {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted since the listing
		} else if err != nil {
			return nil, err
		}
		if attempts[sub[1]] == nil {
			attempts[sub[1]] = map[string]sharedFile{}
		}
		attempts[sub[1]][sub[2]] = sharedFile{name: e.Name(), path: filepath.Join(d.cfg.ImagesDir, e.Name()), mtime: info.ModTime()}
	}
	return attempts, nil
}

// latestAttempt is the attempt with a root disk written last, nil if
// no attempt has a root disk.
func latestAttempt(attempts map[string]map[string]sharedFile) map[string]sharedFile {
	var best map[string]sharedFile
	for _, files := range attempts {
		root, ok := files[diskRoot]
		if !ok {
			continue
		}
		if best == nil || root.mtime.After(best[diskRoot].mtime) ||
			(root.mtime.Equal(best[diskRoot].mtime) && root.name > best[diskRoot].name) {
			best = files
		}
	}
	return best
}
