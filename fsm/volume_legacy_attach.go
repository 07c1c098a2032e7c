package fsm

import (
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// Cinder's older attach actions (os-reserve, os-unreserve, os-attach,
// os-detach, os-begin_detaching, os-roll_detaching), as cinder.volume.
// api and its manager apply them: conditional status changes on the
// volume, and attachment records the caller made (External, as the
// attachments API's), which no agent acts upon. Status rules and
// messages are Cinder's.

// legacyAttachment applies one of the older attach actions to v.
func legacyAttachment(v *structs.Volume, e *structs.VolumeAttachmentEntry) error {
	switch e.Op {
	case structs.AttachmentReserve:
		if v.Status != structs.VolumeAvailable && !(v.Multiattach && v.Status == structs.VolumeInUse) {
			want := "available"
			if v.Multiattach {
				want = "available or in-use"
			}
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume status must be %s to reserve, but the status is %s.", want, v.Status)
		}
		v.Status = structs.VolumeAttaching
	case structs.AttachmentUnreserve:
		// Not reserved: nothing to do, as Cinder's unreserve_volume.
		if v.Status == structs.VolumeAttaching && !slices.ContainsFunc(v.Attachments, pending) {
			v.Status = settledStatus(v)
		}
	case structs.AttachmentLegacyAttach:
		return legacyAttach(v, e)
	case structs.AttachmentLegacyDetach:
		return legacyDetach(v, e)
	case structs.AttachmentBeginDetaching:
		attached := slices.ContainsFunc(v.Attachments, func(a *structs.VolumeAttachment) bool { return a.AttachedAt != 0 })
		if v.Status != structs.VolumeInUse || !attached {
			if v.Multiattach && v.Status == structs.VolumeDetaching {
				return nil
			}
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach.")
		}
		v.Status = structs.VolumeDetaching
	case structs.AttachmentRollDetaching:
		if v.Status == structs.VolumeDetaching {
			v.Status = structs.VolumeInUse
		}
	}
	return nil
}

// pending reports whether an attachment is reserved but not attached.
func pending(a *structs.VolumeAttachment) bool { return a.AttachedAt == 0 }

// settledStatus is the status of a volume no call is changing: in-use
// with an attachment, available without.
func settledStatus(v *structs.Volume) string {
	if slices.ContainsFunc(v.Attachments, func(a *structs.VolumeAttachment) bool { return a.AttachedAt != 0 }) {
		return structs.VolumeInUse
	}
	return structs.VolumeAvailable
}

// legacyAttach records an attachment the caller made (os-attach): to
// an instance or a host, at a mountpoint, rw or ro. The volume must be
// available or reserved (attaching), or in-use when it is multiattach.
func legacyAttach(v *structs.Volume, e *structs.VolumeAttachmentEntry) error {
	ok := v.Status == structs.VolumeAvailable || v.Status == structs.VolumeAttaching ||
		v.Status == structs.VolumeReserved || (v.Multiattach && v.Status == structs.VolumeInUse)
	if !ok {
		if v.Status == structs.VolumeInUse {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: volume is already attached and multiple attachments are not enabled")
		}
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available or attaching to attach, but the current status is %s.", v.ID, v.Status)
	}
	if slices.ContainsFunc(v.Attachments, func(a *structs.VolumeAttachment) bool { return a.ID == e.Attachment.ID }) {
		return structs.Errorf(structs.KindConflict, "attachment %s exists", e.Attachment.ID)
	}
	a := *e.Attachment
	a.External, a.AttachedAt = true, e.At
	if a.Mode == "" {
		a.Mode = "rw"
	}
	v.Attachments = append(v.Attachments, &a)
	v.Status = structs.VolumeInUse
	return nil
}

// legacyDetach removes an attachment the caller made (os-detach): the
// one named, or the only one. Attachments the Compute API made are
// detached through it, never here.
func legacyDetach(v *structs.Volume, e *structs.VolumeAttachmentEntry) error {
	i := -1
	if id := e.Attachment.ID; id != "" {
		i = slices.IndexFunc(v.Attachments, func(a *structs.VolumeAttachment) bool { return a.ID == id })
		if i < 0 {
			return structs.Errorf(structs.KindNotFound, "VolumeAttachment %s could not be found.", id)
		}
	} else {
		switch len(v.Attachments) {
		case 0:
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is not attached.", v.ID)
		case 1:
			i = 0
		default:
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Detach volume failed: More than one attachment, but no attachment_id provided.")
		}
	}
	if a := v.Attachments[i]; !a.External {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: attachment %s belongs to server %s; attach and detach it through the Compute API", a.ID, a.InstanceID)
	}
	v.Attachments = slices.Delete(v.Attachments, i, i+1)
	v.Status = settledStatus(v)
	return nil
}
