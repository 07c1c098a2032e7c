package fake

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"

	"github.com/stratus-cloud/stratus/virt"
)

// The fake's disks are byte slices per role, kept with the instance:
// empty when built fresh, what WriteDisk put there, or the files a move
// fetched (InstanceSpec.Disks). That is enough to model the DiskMover
// contract: what the "guest" wrote on one host is there on the next.

// roles are the disks an instance with spec has.
func diskRoles(spec *virt.InstanceSpec) []string {
	roles := []string{virt.DiskRoleRoot}
	if spec.EphemeralGB > 0 {
		roles = append(roles, virt.DiskRoleEphemeral)
	}
	return roles
}

// importDisks reads the disks a move fetched for spec, by role.
func importDisks(spec *virt.InstanceSpec) (map[string][]byte, error) {
	if len(spec.Disks) == 0 {
		return nil, nil
	}
	out := make(map[string][]byte, len(spec.Disks))
	for _, d := range spec.Disks {
		data, err := os.ReadFile(d.Path)
		if err != nil {
			return nil, fmt.Errorf("import %s disk: %w", d.Role, err)
		}
		out[d.Role] = data
	}
	return out, nil
}

// ExportDisks lists a powered-off instance's disks (virt.DiskMover).
func (d *Driver) ExportDisks(ctx context.Context, id string) ([]virt.ExportedDisk, error) {
	if err := d.begin(ctx, "ExportDisks", 0); err != nil {
		return nil, wrap("ExportDisks", id, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return nil, wrap("ExportDisks", id, virt.ErrNotFound)
	}
	if in.power != virt.PowerShutdown && in.power != virt.PowerCrashed {
		return nil, wrap("ExportDisks", id, virt.InvalidState("export the disks of", in.power))
	}
	var out []virt.ExportedDisk
	for _, role := range diskRoles(&in.spec) {
		data := bytes.Clone(in.disks[role])
		base := ""
		if role == virt.DiskRoleRoot {
			base = in.spec.ImageID
		}
		file := ""
		if d.cfg.SharedDir != "" && in.attempt != "" {
			file = filepath.Base(d.sharedFile(id, in.attempt, role))
		}
		out = append(out, virt.ExportedDisk{Role: role, Format: "raw", BackingImageID: base, File: file,
			Open: func() (io.ReadSeekCloser, error) { return nopCloser{bytes.NewReader(data)}, nil }})
	}
	return out, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// WriteDisk sets what an instance's disk of a role holds, as its guest
// writing to it would; tests use it to follow data through moves.
func (d *Driver) WriteDisk(id, role string, data []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return wrap("WriteDisk", id, virt.ErrNotFound)
	}
	if in.disks == nil {
		in.disks = map[string][]byte{}
	}
	in.disks[role] = bytes.Clone(data)
	if err := d.writeSharedLocked(id, in); err != nil {
		return wrap("WriteDisk", id, err)
	}
	return d.saveLocked()
}

// Disk returns what an instance's disk of a role holds.
func (d *Driver) Disk(id, role string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return nil, wrap("Disk", id, virt.ErrNotFound)
	}
	return bytes.Clone(in.disks[role]), nil
}

func cloneDisks(m map[string][]byte) map[string][]byte {
	if m == nil {
		return nil
	}
	c := maps.Clone(m)
	for k, v := range c {
		c[k] = bytes.Clone(v)
	}
	return c
}
