package ironic

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/stratus-cloud/stratus/virt"
)

// Spawn implements virt.Driver: claim a node, set its instance_info,
// validate, deploy and wait until it is active. An instance that already
// has a node is waited for (and deployed if it never was); a deploy that
// fails is torn down again and its node's last_error is the error.
func (d *Driver) Spawn(ctx context.Context, spec *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	if err := validateSpec(spec); err != nil {
		return nil, err
	}
	n, err := d.nodeOf(ctx, spec.ID)
	switch {
	case errors.Is(err, virt.ErrNotFound):
		if n, err = d.claim(ctx, spec); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	if err := d.deploy(ctx, spec, n); err != nil {
		// Remove what this spawn made, with a context of its own: ctx
		// may be what ended it.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.DeployTimeout)
		defer cancel()
		if terr := d.teardown(cctx, spec.ID, n); terr != nil {
			d.logger.Error("tearing down a failed deploy failed", "instance", spec.ID, "node", n.UUID, "error", terr)
		}
		return nil, err
	}
	return d.GetInfo(ctx, spec.ID)
}

// validateSpec rejects specs no node could run.
func validateSpec(spec *virt.InstanceSpec) error {
	switch {
	case spec == nil || spec.ID == "":
		return errors.New("ironic: spawn: the spec has no instance id")
	case spec.VCPUs <= 0 || spec.MemoryMB <= 0:
		return fmt.Errorf("ironic: spawn %s: vcpus (%d) and memory (%d MiB) must be positive", spec.ID, spec.VCPUs, spec.MemoryMB)
	case spec.RootGB < 0:
		return fmt.Errorf("ironic: spawn %s: negative root disk", spec.ID)
	}
	return nil
}

// claim picks a free node (this driver's own when scoped, else the first
// available of the flavor's resource class) and sets its instance_uuid;
// a node another claimer took first (409) is skipped.
func (d *Driver) claim(ctx context.Context, spec *virt.InstanceSpec) (*nodes.Node, error) {
	d.conn.claimMu.Lock()
	defer d.conn.claimMu.Unlock()
	list, err := d.listNodes(ctx, nodes.ListOpts{})
	if err != nil {
		return nil, err
	}
	want := flavorClass(spec)
	var why []string
	for i := range list {
		n := &list[i]
		switch {
		case n.InstanceUUID == spec.ID:
			return n, nil // claimed meanwhile by another spawn of ours
		case !schedulable(n):
			why = append(why, fmt.Sprintf("%s is %s (maintenance %v, instance %q)", n.UUID, n.ProvisionState, n.Maintenance, n.InstanceUUID))
			continue
		case want != "" && resourceClass(n.ResourceClass) != want:
			why = append(why, fmt.Sprintf("%s is of class %s, not %s", n.UUID, resourceClass(n.ResourceClass), want))
			continue
		}
		err := d.patchNode(ctx, n.UUID, nodes.UpdateOpts{
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_uuid", Value: spec.ID},
		})
		var code gophercloud.ErrUnexpectedResponseCode
		if errors.As(err, &code) && code.Actual == http.StatusConflict {
			why = append(why, fmt.Sprintf("%s was claimed by another instance", n.UUID))
			continue
		}
		if err != nil {
			return nil, err
		}
		d.logger.Info("claimed node", "instance", spec.ID, "node", n.UUID)
		n.InstanceUUID = spec.ID
		return n, nil
	}
	if d.node != "" && len(list) == 0 {
		return nil, fmt.Errorf("ironic: spawn %s: node %s not found", spec.ID, d.node)
	}
	return nil, fmt.Errorf("ironic: spawn %s: no node can take it: %s", spec.ID, strings.Join(why, "; "))
}

// instanceInfo is what Nova's Ironic driver puts in instance_info.
func instanceInfo(spec *virt.InstanceSpec) map[string]any {
	src := spec.ImageProperties[ImageSourceProperty]
	if src == "" {
		src = spec.ImageID
	}
	caps := map[string]string{}
	for k, v := range spec.ExtraSpecs {
		if c, ok := strings.CutPrefix(k, "capabilities:"); ok {
			caps[c] = v
		}
	}
	info := map[string]any{
		"image_source": src, "root_gb": fmt.Sprint(spec.RootGB), "display_name": spec.Name,
		"vcpus": fmt.Sprint(spec.VCPUs), "memory_mb": fmt.Sprint(spec.MemoryMB),
	}
	if spec.EphemeralGB > 0 {
		info["ephemeral_gb"] = fmt.Sprint(spec.EphemeralGB)
	}
	if spec.SwapMB > 0 {
		info["swap_mb"] = fmt.Sprint(spec.SwapMB)
	}
	if len(caps) > 0 {
		info["capabilities"] = caps
	}
	return info
}

// configDrive is the deploy's config drive: the agent's ISO image
// gzipped and base64-encoded, as Ironic takes it, or else (no ISO but
// user data) the metadata and user data for Ironic to build one from.
func configDrive(spec *virt.InstanceSpec) (any, error) {
	if len(spec.ConfigDrive) > 0 {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(spec.ConfigDrive); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
	}
	if len(spec.UserData) == 0 {
		return nil, nil
	}
	meta := map[string]any{"uuid": spec.ID, "name": spec.Name, "hostname": spec.Name}
	if len(spec.Metadata) > 0 {
		meta["meta"] = maps.Clone(spec.Metadata)
	}
	return nodes.ConfigDrive{MetaData: meta, UserData: string(spec.UserData)}, nil
}

// deploy brings a node claimed for spec to active.
func (d *Driver) deploy(ctx context.Context, spec *virt.InstanceSpec, n *nodes.Node) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.DeployTimeout)
	defer cancel()
	n, err := d.waitNode(ctx, n.UUID, func(n *nodes.Node) (bool, error) { return n.TargetProvisionState == "", nil })
	if err != nil {
		return err
	}
	if n.InstanceUUID != spec.ID {
		return fmt.Errorf("ironic: spawn %s: node %s was released meanwhile", spec.ID, n.UUID)
	}
	switch n.ProvisionState {
	case stateActive:
		return nil
	case stateAvailable, stateDeployFail:
	default:
		return virt.AsInvalidState(fmt.Errorf("ironic: spawn %s: node %s is %q, cannot deploy", spec.ID, n.UUID, n.ProvisionState))
	}
	if err := d.patchNode(ctx, n.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info", Value: instanceInfo(spec)},
	}); err != nil {
		return err
	}
	if err := d.validateNode(ctx, n.UUID); err != nil {
		return fmt.Errorf("ironic: spawn %s: %w", spec.ID, err)
	}
	opts := nodes.ProvisionStateOpts{Target: nodes.TargetActive}
	cd, err := configDrive(spec)
	if err != nil {
		return fmt.Errorf("ironic: spawn %s: config drive: %w", spec.ID, err)
	}
	if cd != nil {
		opts.ConfigDrive = cd
	}
	d.logger.Info("deploying node", "instance", spec.ID, "node", n.UUID)
	if err := d.setProvision(ctx, n.UUID, opts); err != nil {
		return err
	}
	started := time.Now()
	_, err = d.waitNode(ctx, n.UUID, func(n *nodes.Node) (bool, error) {
		switch {
		case n.InstanceUUID != spec.ID:
			return true, fmt.Errorf("ironic: spawn %s: node %s was released during the deploy", spec.ID, n.UUID)
		case n.ProvisionState == stateActive && n.TargetProvisionState == "":
			return true, nil
		case n.ProvisionState == stateDeployFail || n.ProvisionState == stateError:
			return true, fmt.Errorf("ironic: deploy of node %s failed (%s): %s", n.UUID, n.ProvisionState, n.LastError)
		}
		return false, nil
	})
	if err == nil {
		d.logger.Info("node active", "instance", spec.ID, "node", n.UUID, "took", time.Since(started))
	}
	return err
}

// validateNode checks that the node's power, management, boot and deploy
// interfaces can act on it.
func (d *Driver) validateNode(ctx context.Context, id string) error {
	sc, err := d.client(ctx)
	if err != nil {
		return err
	}
	v, err := nodes.Validate(ctx, sc, id).Extract()
	if err != nil {
		return apiError("validate node "+id, err)
	}
	var bad []string
	for name, r := range map[string]nodes.DriverValidation{"power": v.Power, "deploy": v.Deploy, "boot": v.Boot, "management": v.Management} {
		if !r.Result {
			bad = append(bad, fmt.Sprintf("%s: %s", name, r.Reason))
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("node %s failed validation: %s", id, strings.Join(bad, "; "))
	}
	return nil
}
