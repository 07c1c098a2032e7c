package libvirt

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// Live migration without shared storage (block migration). The source
// prepares the destination's disks through the destination's libvirtd,
// in the pool of the same name, under a fresh attempt's names (so the
// destination never writes a file of the source's, even where the two
// see one filesystem): the root disk an overlay on the instance's image
// when the destination has that image at the same path — then only what
// the guest wrote travels (VIR_MIGRATE_NON_SHARED_INC) — and a
// standalone disk of the same size otherwise, into which QEMU copies
// the whole disk (VIR_MIGRATE_NON_SHARED_DISK). The destination's agent
// fetches the image into its cache before the migration starts
// (client/liveprepare.go) and names its file there, which the overlay is
// built on and the domain's record names from then on; without that
// name the source's path is tried. Libvirt copies only
// writable disks, so the read-only config drive is uploaded first. The
// domain's definition on the destination names the new files and
// volumes (VIR_MIGRATE_PARAM_DEST_XML).

// blockPlan is a block migration prepared on the destination.
type blockPlan struct {
	flags  golibvirt.DomainMigrateFlags
	params []golibvirt.TypedParam
	// created are the destination's volumes, deleted if the migration
	// fails.
	dest    *golibvirt.Libvirt
	created []golibvirt.StorageVol
}

// close deletes the prepared volumes unless kept, and hangs up.
func (b *blockPlan) close(keep bool, d *Driver) {
	if !keep {
		for _, v := range b.created {
			if err := b.dest.StorageVolDelete(v, 0); err != nil && !isLibvirtError(err, golibvirt.ErrNoStorageVol) {
				d.cfg.Logger.Warn("cannot delete a prepared volume on the migration's destination", "volume", v.Name, "error", err)
			}
		}
	}
	_ = b.dest.Disconnect()
}

// performLive live-migrates dom (record m) to dconn with flags: in place
// on shared storage, else as a block migration onto disks prepared on
// the destination (the root overlay on destImage, the destination's
// file of the image, when given), which are deleted again if it fails.
func (d *Driver) performLive(lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, dconn, destImage string, flags golibvirt.DomainMigrateFlags) (err error) {
	var params []golibvirt.TypedParam
	switch {
	case d.cfg.SharedStorage:
		flags |= golibvirt.MigrateUnsafe
	case len(m.Disks) == 0 && (m.RootVolume != nil || len(m.Volumes) > 0):
		// Booted from a volume with no disk of its own: every disk is
		// reached over the network from both hosts (its storage
		// host's export, an RBD image), shared storage as far as the
		// migration goes, and libvirt must copy none of them.
		d.cfg.Logger.Info("live migration on network volumes alone", "instance_id", m.ID, "destination", dconn)
	default:
		plan, perr := d.prepareBlockMigration(lv, dom, m, dconn, destImage)
		if perr != nil {
			return fmt.Errorf("prepare the live migration to %s: %w", dconn, perr)
		}
		disks, derr := migrateDisksParams(lv, dom, m) // blockmigrate_volumes.go
		if derr != nil {
			if plan != nil {
				plan.close(false, d)
			}
			return fmt.Errorf("prepare the live migration to %s: %w", dconn, derr)
		}
		// With volumes and no writable disk of its own (a read-only
		// config drive, uploaded by the plan), nothing is copied.
		copies := disks == nil || len(disks) > 0
		switch {
		case plan == nil && copies:
			flags |= golibvirt.MigrateNonSharedDisk
		case plan != nil:
			if copies {
				flags |= plan.flags
			}
			params = plan.params
			defer func() { plan.close(err == nil, d) }()
		}
		params = append(params, disks...)
		d.cfg.Logger.Info("block migration", "instance_id", m.ID, "destination", dconn,
			"incremental", flags&golibvirt.MigrateNonSharedInc != 0, "dest_image", destImage)
	}
	if _, merr := lv.DomainMigratePerform3Params(dom, []string{dconn}, params, nil, flags); merr != nil {
		return fmt.Errorf("live migration to %s: %w", dconn, merr)
	}
	return nil
}

// prepareBlockMigration prepares the destination at dconn for the
// block migration of dom (record m), the root overlay on destImage when
// given. It returns nil when the destination has no pool of this
// driver's name to prepare, and the migration then copies the disks to
// the same paths as before.
func (d *Driver) prepareBlockMigration(lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, dconn, destImage string) (_ *blockPlan, err error) {
	u, err := url.Parse(dconn)
	if err != nil {
		return nil, fmt.Errorf("destination %s: %w", dconn, err)
	}
	dest, err := golibvirt.ConnectToURI(u)
	if err != nil {
		return nil, fmt.Errorf("connect to the destination's libvirtd: %w", err)
	}
	plan := &blockPlan{dest: dest, flags: golibvirt.MigrateNonSharedInc}
	defer func() {
		if err != nil {
			plan.close(false, d)
		}
	}()
	dp, err := dest.StoragePoolLookupByName(d.cfg.PoolName)
	if isLibvirtError(err, golibvirt.ErrNoStoragePool) {
		d.cfg.Logger.Warn("the migration's destination has no pool of this name; its disks go to the same paths", "pool", d.cfg.PoolName)
		_ = dest.Disconnect()
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("the destination's pool %s: %w", d.cfg.PoolName, err)
	}
	live, err := lv.DomainGetXMLDesc(dom, golibvirt.DomainXMLMigratable|golibvirt.DomainXMLSecure)
	if err != nil {
		return nil, fmt.Errorf("domain %s: %w", dom.Name, err)
	}
	persistent, err := lv.DomainGetXMLDesc(dom, golibvirt.DomainXMLMigratable|golibvirt.DomainXMLSecure|golibvirt.DomainXMLInactive)
	if err != nil {
		return nil, fmt.Errorf("domain %s: %w", dom.Name, err)
	}
	attempt := newAttempt()
	var renames []string // old, new, …: paths and volume names
	base := ""
	if m.Image != nil {
		base = m.Image.Base
	}
	if destImage == "" {
		destImage = base
	} else if base != "" && destImage != base {
		renames = append(renames, base, destImage)
	}
	for _, disk := range m.Disks {
		vol, err := d.prepareDestVolume(lv, dest, dp, m, disk, attempt, destImage, plan)
		if err != nil {
			return nil, err
		}
		path, err := dest.StorageVolGetPath(vol)
		if err != nil {
			return nil, fmt.Errorf("the destination's volume %s: %w", vol.Name, err)
		}
		renames = append(renames, disk.Path, path, disk.Volume, vol.Name)
	}
	if m.Attempt != "" {
		renames = append(renames, ">"+m.Attempt+"<", ">"+attempt+"<")
	}
	r := longestFirst(renames)
	plan.params = []golibvirt.TypedParam{
		{Field: golibvirt.MigrateParamDestXML, Value: *golibvirt.NewTypedParamValueString(r.Replace(live))},
		{Field: golibvirt.MigrateParamPersistXML, Value: *golibvirt.NewTypedParamValueString(r.Replace(persistent))},
	}
	return plan, nil
}

// prepareDestVolume creates on the destination the volume that takes
// disk: an overlay on the image file destImage for the root disk when
// the destination can open it (else the plan falls back to a full
// copy), the config drive's data uploaded, any other disk empty.
func (d *Driver) prepareDestVolume(lv, dest *golibvirt.Libvirt, dp golibvirt.StoragePool, m *instanceMeta, disk metaDisk, attempt, destImage string, plan *blockPlan) (golibvirt.StorageVol, error) {
	name := d.domainName(m.ID) + attemptSep + attempt + "-" + disk.Role
	p, err := d.pool(lv)
	if err != nil {
		return golibvirt.StorageVol{}, err
	}
	capacity, err := d.volumeCapacity(lv, p, disk.Volume)
	if err != nil {
		return golibvirt.StorageVol{}, err
	}
	format := "qcow2"
	if disk.Role == diskConfig {
		format = "raw"
	}
	vol := &libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: capacity},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: format}},
	}
	if disk.Role == diskRoot && m.Image != nil && destImage != "" {
		if backed, err := hasBackingFile(disk.Path); err != nil {
			return golibvirt.StorageVol{}, fmt.Errorf("the root disk: %w", err)
		} else if backed {
			overlay := *vol
			overlay.BackingStore = &libvirtxml.StorageVolumeBackingStore{Path: destImage,
				Format: &libvirtxml.StorageVolumeTargetFormat{Type: m.Image.Format}}
			v, err := createVol(dest, dp, &overlay)
			if err == nil {
				plan.created = append(plan.created, v)
				return v, nil
			}
			// Without the image the whole disk travels.
			d.cfg.Logger.Info("the migration's destination cannot open the instance's image; copying the whole root disk",
				"instance_id", m.ID, "image", destImage, "error", err)
			plan.flags = golibvirt.MigrateNonSharedDisk
		}
	}
	v, err := createVol(dest, dp, vol)
	if err != nil {
		return golibvirt.StorageVol{}, err
	}
	plan.created = append(plan.created, v)
	if disk.Role == diskConfig {
		if err := uploadFile(dest, v, disk.Path); err != nil {
			return golibvirt.StorageVol{}, err
		}
	}
	return v, nil
}

// createVol creates a volume from its definition in pool p.
func createVol(lv *golibvirt.Libvirt, p golibvirt.StoragePool, vol *libvirtxml.StorageVolume) (golibvirt.StorageVol, error) {
	doc, err := vol.Marshal()
	if err != nil {
		return golibvirt.StorageVol{}, err
	}
	v, err := lv.StorageVolCreateXML(p, doc, 0)
	if err != nil {
		return golibvirt.StorageVol{}, fmt.Errorf("create volume %s on the destination: %w", vol.Name, err)
	}
	return v, nil
}

// uploadFile writes the local file at path into volume v.
func uploadFile(lv *golibvirt.Libvirt, v golibvirt.StorageVol, path string) error {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := lv.StorageVolUpload(v, f, 0, uint64(st.Size()), 0); err != nil {
		return fmt.Errorf("upload %s to the destination: %w", path, err)
	}
	return nil
}

// longestFirst is a replacer of the old, new pairs that tries longer old
// strings first (NewReplacer tries them in argument order): a root
// disk's name is a prefix of its config drive's.
func longestFirst(pairs []string) *strings.Replacer {
	type pair struct{ old, new string }
	ps := make([]pair, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		ps = append(ps, pair{pairs[i], pairs[i+1]})
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	flat := make([]string, 0, len(pairs))
	for _, p := range ps {
		flat = append(flat, p.old, p.new)
	}
	return strings.NewReplacer(flat...)
}
