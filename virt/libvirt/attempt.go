package libvirt

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Volume names. Every spawn (and so every move's destination) draws a
// fresh attempt and names the volumes it creates
// <domain>+<attempt>-<role>, recording each name in the domain's
// metadata. Two hosts building the same instance on shared storage (a
// resize, cold migration or evacuation onto it) therefore never name
// the same file, and every deletion goes by the names a domain recorded,
// never by names worked out again: a Destroy on one host cannot delete
// the disks the instance runs from on another.

// errVolumeExists means a volume about to be created already exists.
// Creating never replaces one: on shared storage it may be the disk of
// the instance's copy on another host.
var errVolumeExists = errors.New("a volume of that name exists already")

// newAttempt draws the random suffix of one spawn's volume names.
func newAttempt() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a fixed suffix would only
		// make createVolume refuse, never overwrite.
		return "00000000"
	}
	return hex.EncodeToString(b[:])
}

// ensureAttempt gives a record an attempt if it has none (a domain from
// before attempts), so that the volumes it creates from now on get
// unique names too.
func (m *instanceMeta) ensureAttempt() {
	if m.Attempt == "" {
		m.Attempt = newAttempt()
	}
}

// diskVolume is the name of the volume of a role that the domain of
// record m creates: the name before attempts existed if m has none
// (only tests build such domains now).
func (d *Driver) diskVolume(m *instanceMeta, role string) string {
	if m.Attempt == "" {
		return d.legacyVolumeName(m.ID, role)
	}
	return d.domainName(m.ID) + attemptSep + m.Attempt + "-" + role
}

// checkFree fails with errVolumeExists if the pool, or the pool's
// directory behind libvirtd's back (another host's libvirtd on shared
// storage), already has a volume called name.
func (d *Driver) checkFree(lv *golibvirt.Libvirt, p golibvirt.StoragePool, name string) error {
	_, err := lv.StorageVolLookupByName(p, name)
	switch {
	case err == nil:
		return fmt.Errorf("create volume %s: %w", name, errVolumeExists)
	case !isLibvirtError(err, golibvirt.ErrNoStorageVol):
		return fmt.Errorf("volume %s: %w", name, err)
	}
	if _, err := os.Lstat(filepath.Join(d.cfg.ImagesDir, name)); err == nil {
		return fmt.Errorf("create volume %s: %w (a file of the pool's directory libvirtd has not listed)", name, errVolumeExists)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	return nil
}

// deleteDisks deletes the volumes a domain's record names; missing ones
// are no error.
func (d *Driver) deleteDisks(lv *golibvirt.Libvirt, p golibvirt.StoragePool, m *instanceMeta) error {
	for _, disk := range m.Disks {
		if err := d.deleteVolume(lv, p, disk.Volume); err != nil {
			return err
		}
	}
	return nil
}

// instanceVolumeRE matches the names of every volume instance id's
// domains may have created, with or without an attempt.
func (d *Driver) instanceVolumeRE(id string) *regexp.Regexp {
	roles := make([]string, len(allDiskRoles))
	for i, r := range allDiskRoles {
		roles[i] = regexp.QuoteMeta(r)
	}
	return regexp.MustCompile(`^` + regexp.QuoteMeta(d.domainName(id)) +
		`(` + regexp.QuoteMeta(attemptSep) + `[0-9a-f]{8})?-(` + strings.Join(roles, "|") + `)$`)
}

// sweepVolumes deletes the volumes of instance id that no domain of this
// host records: left by a spawn or destroy cut short. Only a pool of
// this host's own can be swept: on shared storage such a volume may be
// the disk of the instance's copy on another host, and is left alone.
func (d *Driver) sweepVolumes(lv *golibvirt.Libvirt, p golibvirt.StoragePool, id string) error {
	d.sweepImports(id, time.Now())
	if d.cfg.SharedStorage {
		return nil
	}
	vols, _, err := lv.StoragePoolListAllVolumes(p, 1, 0)
	if err != nil {
		return fmt.Errorf("list volumes: %w", err)
	}
	re := d.instanceVolumeRE(id)
	for _, v := range vols {
		if !re.MatchString(v.Name) {
			continue
		}
		if err := d.deleteVolume(lv, p, v.Name); err != nil {
			return err
		}
		d.cfg.Logger.Info("deleted a leftover volume", "instance_id", id, "volume", v.Name)
	}
	return nil
}

// importIdle is how long a leftover of an import into a shared pool
// must have gone unwritten before it is swept: a copy in progress on
// another host (a retried move) keeps writing its file.
const importIdle = 10 * time.Minute

// sweepImports removes what an import of instance id cut short left in
// the images directory (importVolume): the ".import" copy of a disk and
// the hidden temporary file of its clone (".<name>.import.part-*").
// Such files are never volumes, so libvirt's pool never lists them and
// nothing else would remove them. In a shared pool only those idle for
// importIdle are removed. Failures are logged: a leftover costs space,
// not correctness.
func (d *Driver) sweepImports(id string, now time.Time) {
	if d.cfg.ImagesDir == "" {
		return
	}
	entries, err := os.ReadDir(d.cfg.ImagesDir)
	if err != nil {
		d.cfg.Logger.Warn("list the images directory for leftovers", "error", err)
		return
	}
	re := d.instanceVolumeRE(id)
	for _, e := range entries {
		name := strings.TrimPrefix(e.Name(), ".")
		vol, rest, ok := strings.Cut(name, ".import")
		if !ok || !e.Type().IsRegular() || !re.MatchString(vol) || (rest != "" && !strings.HasPrefix(rest, ".part-")) {
			continue
		}
		if d.cfg.SharedStorage {
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) < importIdle {
				continue
			}
		}
		path := filepath.Join(d.cfg.ImagesDir, e.Name())
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.cfg.Logger.Warn("remove a leftover import", "path", path, "error", err)
			continue
		}
		d.cfg.Logger.Info("removed a leftover import", "instance_id", id, "path", path)
	}
}

// createOwnVolume creates the volume of a role that the domain of record
// m (with an attempt) does not have yet. A volume already bearing that
// name can only be a leftover of this very domain (a rescue whose disk
// could not be deleted, say), since the attempt is its own: it is
// deleted first.
func (d *Driver) createOwnVolume(lv *golibvirt.Libvirt, p golibvirt.StoragePool, m *instanceMeta, role string, capacity uint64, base *metaImage) (string, error) {
	name := d.diskVolume(m, role)
	if err := d.deleteVolume(lv, p, name); err != nil {
		return "", err
	}
	return d.createVolume(lv, p, name, capacity, base)
}

// spawnAttempt is a new spawn's attempt: none when a test builds a
// domain named the old way.
func (d *Driver) spawnAttempt() string {
	if d.legacyNames {
		return ""
	}
	return newAttempt()
}
