package server

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestCheckAttachedExtend: an in-use file volume extends when the
// instances open its file on its storage host (or the caller of the
// attachments API drives the attachment), never when one reaches it
// through the storage host's NBD export; an RBD volume always does.
func TestCheckAttachedExtend(t *testing.T) {
	att := func(a structs.VolumeAttachment) *structs.Volume {
		return &structs.Volume{ID: "v1", Host: "st1", Backend: structs.VolumeBackendFile, Attachments: []*structs.VolumeAttachment{&a}}
	}
	for name, tc := range map[string]struct {
		v  *structs.Volume
		ok bool
	}{
		"local":    {att(structs.VolumeAttachment{InstanceID: "i1", Host: "st1"}), true},
		"external": {att(structs.VolumeAttachment{External: true, Host: "cn2"}), true},
		"shelved":  {att(structs.VolumeAttachment{InstanceID: "i1"}), true},
		"remote":   {att(structs.VolumeAttachment{InstanceID: "i1", Host: "cn2"}), false},
		"exported": {att(structs.VolumeAttachment{InstanceID: "i1", Host: "st1", Exported: true}), false},
		"moving":   {att(structs.VolumeAttachment{InstanceID: "i1", Host: "st1", MoveHost: "cn2"}), false},
		"rbd": {&structs.Volume{ID: "v1", Host: "st1", Backend: structs.VolumeBackendRBD,
			Attachments: []*structs.VolumeAttachment{{InstanceID: "i1", Host: "cn2"}}}, true},
	} {
		err := checkAttachedExtend(tc.v)
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && (structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "NBD export")) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
