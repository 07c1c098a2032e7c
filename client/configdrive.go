package client

import (
	"fmt"

	"github.com/stratus-cloud/stratus/client/instancedata"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/configdrive"
)

// configDrive builds the instance's config drive: the metadata service's
// tree (read from the servers now) as an ISO 9660 image labelled
// config-2, staged in the client's data dir.
func (r *runner) configDrive(inst *structs.Instance) ([]byte, error) {
	data, err := instancedata.FetchFor(r.c.call, inst)
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	files, err := data.Files()
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	img, err := configdrive.Build(files, r.c.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	r.logger.Info("built config drive", "bytes", len(img))
	return img, nil
}

// bytesOrNil is s as bytes, nil when empty.
func bytesOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}
