package client

import (
	"errors"
	"maps"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// Extending an in-use volume (Cinder 3.42) ends on the compute hosts of
// its instances, as Nova's extend_volume on Cinder's volume-extended
// event: the guest's disk is grown (virDomainBlockResize) so the guest
// sees the new size. Stratus drives it from the volume's record rather
// than from an event: the compute agent watches the volumes attached to
// its instances and grows each disk smaller than its volume, so an
// agent restarted mid-way finishes the work when it lists them again.
//
// Who grows the storage depends on who holds it:
//   - an RBD image, or a file no instance on its storage host opens
//     directly, is grown by the storage host, which then reports the
//     volume in-use with its new size; the compute agents then grow the
//     guests' disks;
//   - a file an instance on its own storage host opens directly is held
//     by that instance's QEMU, so the compute agent of that host grows
//     it through the guest's disk while the volume is extending, and
//     reports the extend done (in-use) or failed (error_extending) as
//     the storage host would.

// watchVolumeSizes runs until shutdown, growing the attached volumes'
// disks (see above).
func (c *Client) watchVolumeSizes() {
	vr, ok := c.driver.(virt.VolumeResizer)
	if !ok {
		return
	}
	var index uint64
	grown := map[string]int64{} // instance/volume → bytes the disk was grown to
	b := c.newBackoff()
	for {
		req := &structs.VolumeAttachedRequest{HostID: c.hostID, QueryOptions: structs.QueryOptions{
			Region: c.cfg.Region, AuthToken: c.cfg.NodeSecret, MinQueryIndex: index, MaxQueryTime: c.maxQueryTime}}
		var resp structs.VolumeListResponse
		err := c.call("Volume.HostAttached", req, &resp)
		if err == nil {
			err = c.growVolumes(vr, resp.Volumes, grown)
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			wait := b.Next()
			c.logger.Warn("attached volume sizes not in step; retrying", "error", err, "retry_in", wait)
			if !c.sleep(wait) {
				return
			}
			index = 0
			continue
		}
		b.Reset()
		index = max(resp.Index, 1)
	}
}

// growVolumes grows the disks of one listing; it returns the first
// failure, after trying every disk.
func (c *Client) growVolumes(vr virt.VolumeResizer, vols []*structs.Volume, grown map[string]int64) error {
	var first error
	seen := map[string]bool{}
	for _, v := range vols {
		for _, a := range v.Attachments {
			if a.External || a.Host != c.hostID || a.AttachedAt == 0 {
				continue
			}
			seen[a.InstanceID+"/"+v.ID] = true
			if err := c.growVolume(vr, v, a, grown); err != nil && first == nil {
				first = err
			}
		}
	}
	// Forget the disks detached since: attached again, they are
	// checked again.
	maps.DeleteFunc(grown, func(key string, _ int64) bool { return !seen[key] })
	return first
}

// growVolume grows one instance's disk of v when v asks for it.
func (c *Client) growVolume(vr virt.VolumeResizer, v *structs.Volume, a *structs.VolumeAttachment, grown map[string]int64) error {
	key := a.InstanceID + "/" + v.ID
	size := int64(v.SizeGB) << 30
	switch {
	case v.Status == structs.VolumeExtending && holdsFile(v, a, c.hostID):
		err := vr.ResizeVolume(c.ctx, a.InstanceID, v.ID, size)
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		if err == nil {
			grown[key] = size
		}
		return c.reportExtend(v, err)
	case v.Status == structs.VolumeInUse && grown[key] < size:
		err := vr.ResizeVolume(c.ctx, a.InstanceID, v.ID, size)
		switch {
		case err == nil:
			grown[key] = size
			c.logger.Info("guest disk of an extended volume grown", "instance_id", a.InstanceID, "volume_id", v.ID, "size_gb", v.SizeGB)
		case errors.Is(err, virt.ErrNotFound), errors.Is(err, virt.ErrVolumeNotAttached):
			// Not (or no longer) this host's instance or disk: the
			// attach or the move that brings it here attaches it at
			// the volume's size.
			grown[key] = size
		default:
			return err
		}
	}
	return nil
}

// holdsFile reports whether the instance of attachment a opens v's file
// directly on this host, its storage host.
func holdsFile(v *structs.Volume, a *structs.VolumeAttachment, hostID string) bool {
	return v.Backend != structs.VolumeBackendRBD && v.Host == hostID && !a.Exported
}

// reportExtend reports the extend of a volume whose file this host's
// instance holds: done (in-use) or failed (error_extending).
func (c *Client) reportExtend(v *structs.Volume, failure error) error {
	u := &structs.VolumeUpdateEntry{ID: v.ID, FromStatus: []string{structs.VolumeExtending},
		Status: structs.VolumeInUse, UpdatedAt: time.Now().UnixNano()}
	msg := ""
	if failure != nil {
		c.logger.Error("extending an attached volume failed", "volume_id", v.ID, "error", failure)
		msg = failure.Error()
		u.Status = structs.VolumeErrorExtend
	}
	u.ErrorMessage = &msg
	err := c.call("Volume.Report", &structs.VolumeReportRequest{HostID: c.hostID, Update: u, WriteRequest: c.writeRequest()},
		&structs.GenericResponse{})
	switch structs.KindOf(err) {
	case structs.KindInvalid, structs.KindConflict, structs.KindNotFound:
		// The volume moved on (reset, deleted): nothing to report.
		c.logger.Info("volume extend report refused: the volume moved on", "volume_id", v.ID, "error", err)
		return nil
	}
	return err
}
