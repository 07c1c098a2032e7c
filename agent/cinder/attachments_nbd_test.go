package cinder

import (
	"fmt"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAttachmentConnectionInfo: an attachment the Compute API made on
// the volume's own host is reached as its file; one on another host as
// the storage host's NBD export of that attachment, with TLS.
func TestAttachmentConnectionInfo(t *testing.T) {
	v := &structs.Volume{ID: "v1", Host: "hs", ProviderLocation: "/pool/volume-v1.qcow2", Format: "qcow2"}
	local := attachmentDetail(attachmentOf{v, &structs.VolumeAttachment{ID: "a1", InstanceID: "i1", Host: "hs", Mode: "rw"}})
	if got := fmt.Sprint(local["connection_info"]); got != "map[access_mode:rw data:map[device_path:/pool/volume-v1.qcow2 format:qcow2 host:hs] driver_volume_type:file]" {
		t.Errorf("same host: %s", got)
	}
	far := attachmentDetail(attachmentOf{v, &structs.VolumeAttachment{ID: "a2", InstanceID: "i2", Host: "h2", Mode: "rw"}})
	if got := fmt.Sprint(far["connection_info"]); got != "map[access_mode:rw data:map[export_name:volume-v1-a2 host:hs tls:true] driver_volume_type:nbd]" {
		t.Errorf("another host: %s", got)
	}
	ext := attachmentDetail(attachmentOf{v, &structs.VolumeAttachment{ID: "a3", Host: "elsewhere", External: true}})
	if ext["connection_info"] != nil {
		t.Errorf("an external record without a connector: %v", ext["connection_info"])
	}
}
