package fsm

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestExternalAttachments: the Block Storage API's attachments reserve
// a volume (once: a second reservation is refused), take a connector,
// complete and go, moving the volume reserved → attaching → in-use →
// available; an attachment the Compute API made cannot be changed
// through them.
func TestExternalAttachments(t *testing.T) {
	b := attachFixture(t)
	b.putVolume(&structs.Volume{ID: "v1", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/v1"})
	call := func(op, att string, connector map[string]string) any {
		return b.apply(structs.VolumeAttachmentType, &structs.VolumeAttachmentEntry{Op: op, VolumeID: "v1", ProjectID: "p1", At: 7,
			Attachment: &structs.VolumeAttachment{ID: att, InstanceID: "srv", Connector: connector}})
	}
	step := func(op, att string, connector map[string]string, status, attStatus string) {
		t.Helper()
		if resp := call(op, att, connector); resp != nil {
			t.Fatalf("%s: %v", op, resp)
		}
		v := b.volume("v1")
		if v.Status != status {
			t.Fatalf("after %s: volume %s, want %s", op, v.Status, status)
		}
		if attStatus != "" && (len(v.Attachments) != 1 || v.Attachments[0].Status() != attStatus) {
			t.Fatalf("after %s: attachments %+v", op, v.Attachments)
		}
	}
	step(structs.AttachmentCreate, "x1", nil, structs.VolumeReserved, structs.AttachmentReserved)
	if resp, ok := call(structs.AttachmentCreate, "x2", nil).(error); !ok || !strings.Contains(resp.Error(), "the current status is reserved") {
		t.Fatalf("second reservation: %v", resp)
	}
	if resp := b.apply(structs.VolumeAttachmentType, &structs.VolumeAttachmentEntry{Op: structs.AttachmentDelete, VolumeID: "v1", ProjectID: "p2",
		Attachment: &structs.VolumeAttachment{ID: "x1"}}); resp == nil {
		t.Fatal("another project deleted the attachment")
	}
	step(structs.AttachmentUpdate, "x1", map[string]string{"host": "edge"}, structs.VolumeAttaching, structs.AttachmentAttaching)
	step(structs.AttachmentComplete, "x1", nil, structs.VolumeInUse, structs.AttachmentAttached)
	step(structs.AttachmentDelete, "x1", nil, structs.VolumeAvailable, "")

	if resp := b.task(structs.OpAttachVolume, withVolume("v1", "")); resp != nil {
		t.Fatalf("attach: %v", resp)
	}
	if resp, ok := call(structs.AttachmentDelete, "att-v1", nil).(error); !ok || !strings.Contains(resp.Error(), "through the Compute API") {
		t.Fatalf("deleting the Compute API's attachment: %v", resp)
	}
}

// TestLegacyAttachActions: Cinder's older attach actions move a volume
// as Cinder's conditional updates do — reserve only from available,
// unreserve back, attach from attaching, begin/roll detaching between
// in-use and detaching, detach by id or the only attachment — and never
// detach what the Compute API attached.
func TestLegacyAttachActions(t *testing.T) {
	b := attachFixture(t)
	b.putVolume(&structs.Volume{ID: "v1", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/v1"})
	call := func(op, att string) any {
		return b.apply(structs.VolumeAttachmentType, &structs.VolumeAttachmentEntry{Op: op, VolumeID: "v1", ProjectID: "p1", At: 9,
			Attachment: &structs.VolumeAttachment{ID: att, InstanceID: "srv", Device: "/dev/vdc"}})
	}
	step := func(op, att, want string) {
		t.Helper()
		if resp := call(op, att); resp != nil {
			t.Fatalf("%s: %v", op, resp)
		}
		if v := b.volume("v1"); v.Status != want {
			t.Fatalf("after %s: volume %s, want %s", op, v.Status, want)
		}
	}
	refused := func(op, att, msg string) {
		t.Helper()
		if resp, ok := call(op, att).(error); !ok || !strings.Contains(resp.Error(), msg) {
			t.Fatalf("%s: %v, want %q", op, resp, msg)
		}
	}
	step(structs.AttachmentUnreserve, "", structs.VolumeAvailable) // not reserved: nothing to do
	refused(structs.AttachmentBeginDetaching, "", "must be 'in-use'")
	step(structs.AttachmentReserve, "", structs.VolumeAttaching)
	refused(structs.AttachmentReserve, "", "the status is attaching")
	step(structs.AttachmentUnreserve, "", structs.VolumeAvailable)
	step(structs.AttachmentReserve, "", structs.VolumeAttaching)
	step(structs.AttachmentLegacyAttach, "l1", structs.VolumeInUse)
	refused(structs.AttachmentLegacyAttach, "l2", "already attached")
	if v := b.volume("v1"); len(v.Attachments) != 1 || v.Attachments[0].AttachedAt != 9 || !v.Attachments[0].External || v.Attachments[0].Mode != "rw" {
		t.Fatalf("attachment %+v", v.Attachments)
	}
	step(structs.AttachmentBeginDetaching, "", structs.VolumeDetaching)
	step(structs.AttachmentRollDetaching, "", structs.VolumeInUse)
	refused(structs.AttachmentLegacyDetach, "nope", "could not be found")
	step(structs.AttachmentLegacyDetach, "", structs.VolumeAvailable)
	refused(structs.AttachmentLegacyDetach, "", "is not attached")

	if resp := b.task(structs.OpAttachVolume, withVolume("v1", "")); resp != nil {
		t.Fatalf("attach: %v", resp)
	}
	refused(structs.AttachmentLegacyDetach, "", "through the Compute API")
}
