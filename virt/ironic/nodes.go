package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/stratus-cloud/stratus/virt"
)

// Ironic provision and power states the driver acts on.
const (
	stateAvailable  = string(nodes.Available)
	stateActive     = string(nodes.Active)
	stateDeployFail = string(nodes.DeployFail)
	stateError      = string(nodes.Error)
	stateWait       = string(nodes.DeployWait)
	stateCleaning   = string(nodes.Cleaning)
	stateCleanWait  = string(nodes.CleanWait)
	stateCleanFail  = string(nodes.CleanFail)
	powerOn         = "power on"
	powerOff        = "power off"
)

// retryAttempts bounds the retries of a call Ironic answers 409 or 503.
const retryAttempts = 60

// apiError turns a gophercloud error into one that says what Ironic said
// (its faultstring), keeping the error chain. Ironic's refusal of an
// action in the node's current state is a virt.ErrInvalidState too.
func apiError(op string, err error) error {
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		var outer struct {
			ErrorMessage string `json:"error_message"`
		}
		var inner struct {
			Faultstring string `json:"faultstring"`
		}
		msg := strings.TrimSpace(string(code.Body))
		if json.Unmarshal(code.Body, &outer) == nil && outer.ErrorMessage != "" {
			msg = outer.ErrorMessage
			if json.Unmarshal([]byte(outer.ErrorMessage), &inner) == nil && inner.Faultstring != "" {
				msg = inner.Faultstring
			}
		}
		err = fmt.Errorf("ironic: %s: HTTP %d: %s: %w", op, code.Actual, msg, err)
		if code.Actual == http.StatusBadRequest && refusedForState(msg) {
			return virt.AsInvalidState(err)
		}
		return err
	}
	return fmt.Errorf("ironic: %s: %w", op, err)
}

// refusedForState reports whether an Ironic 400's message is its
// InvalidStateRequested: "The requested action "X" can not be performed
// on node "Y" while it is in state "Z"." (or "in maintenance mode").
func refusedForState(msg string) bool {
	return strings.Contains(msg, "can not be performed on node") && strings.Contains(msg, "while it is in")
}

// retry calls f until it succeeds, fails with anything but 409 (node
// locked) or 503, or retryAttempts are used up, backing off from a tenth
// of the poll interval up to the poll interval.
func (d *Driver) retry(ctx context.Context, op string, f func(sc *gophercloud.ServiceClient) error) error {
	sc, err := d.client(ctx)
	if err != nil {
		return err
	}
	wait := max(d.cfg.PollInterval/10, time.Millisecond)
	for attempt := 1; ; attempt++ {
		err := f(sc)
		if err == nil {
			return nil
		}
		busy := gophercloud.ResponseCodeIs(err, http.StatusConflict) || gophercloud.ResponseCodeIs(err, http.StatusServiceUnavailable)
		if !busy || attempt >= retryAttempts || ctx.Err() != nil {
			return apiError(op, err)
		}
		d.logger.Debug("ironic busy; retrying", "op", op, "attempt", attempt, "error", err)
		if !sleepCtx(ctx, wait) {
			return fmt.Errorf("ironic: %s: %w", op, ctx.Err())
		}
		wait = min(2*wait, d.cfg.PollInterval)
	}
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is alive.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// getNode reads a node by uuid.
func (d *Driver) getNode(ctx context.Context, id string) (*nodes.Node, error) {
	sc, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	n, err := nodes.Get(ctx, sc, id).Extract()
	if err != nil {
		return nil, apiError("get node "+id, err)
	}
	return n, nil
}

// listNodes lists the nodes this driver fronts (its prefix, its scope),
// sorted by uuid; opts may filter further.
func (d *Driver) listNodes(ctx context.Context, opts nodes.ListOpts) ([]nodes.Node, error) {
	sc, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	pages, err := nodes.ListDetail(sc, opts).AllPages(ctx)
	if err != nil {
		return nil, apiError("list nodes", err)
	}
	all, err := nodes.ExtractNodes(pages)
	if err != nil {
		return nil, apiError("list nodes", err)
	}
	out := all[:0]
	for _, n := range all {
		if d.fronts(&n) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b nodes.Node) int { return strings.Compare(a.UUID, b.UUID) })
	return out, nil
}

// fronts reports whether the node is one of this driver's.
func (d *Driver) fronts(n *nodes.Node) bool {
	if d.node != "" && n.UUID != d.node {
		return false
	}
	return strings.HasPrefix(n.ResourceClass, d.cfg.ResourceClassPrefix)
}

// nodeOf finds the node that runs instance id, or returns ErrNotFound.
func (d *Driver) nodeOf(ctx context.Context, id string) (*nodes.Node, error) {
	if id == "" {
		return nil, fmt.Errorf("ironic: empty instance id: %w", virt.ErrNotFound)
	}
	found, err := d.listNodes(ctx, nodes.ListOpts{InstanceUUID: id})
	if err != nil {
		return nil, err
	}
	for i := range found {
		if found[i].InstanceUUID == id {
			return &found[i], nil
		}
	}
	return nil, fmt.Errorf("ironic: instance %s: no node runs it: %w", id, virt.ErrNotFound)
}

// patchNode applies JSON-patch operations, retrying while locked.
func (d *Driver) patchNode(ctx context.Context, id string, ops nodes.UpdateOpts) error {
	return d.retry(ctx, "update node "+id, func(sc *gophercloud.ServiceClient) error {
		_, err := nodes.Update(ctx, sc, id, ops).Extract()
		return err
	})
}

// setProvision asks for a provision state, retrying while locked.
func (d *Driver) setProvision(ctx context.Context, id string, opts nodes.ProvisionStateOpts) error {
	return d.retry(ctx, fmt.Sprintf("set provision state %q on node %s", opts.Target, id), func(sc *gophercloud.ServiceClient) error {
		return nodes.ChangeProvisionState(ctx, sc, id, opts).ExtractErr()
	})
}

// setPower asks for a power state, retrying while locked.
func (d *Driver) setPower(ctx context.Context, id string, target nodes.TargetPowerState, timeout time.Duration) error {
	opts := nodes.PowerStateOpts{Target: target}
	if timeout > 0 {
		opts.Timeout = max(int(timeout/time.Second), 1)
	}
	return d.retry(ctx, fmt.Sprintf("set power state %q on node %s", target, id), func(sc *gophercloud.ServiceClient) error {
		return nodes.ChangePowerState(ctx, sc, id, opts).ExtractErr()
	})
}

// waitNode polls a node until done says it is finished (true, nil) or
// failed (true, err), or ctx ends.
func (d *Driver) waitNode(ctx context.Context, id string, done func(*nodes.Node) (bool, error)) (*nodes.Node, error) {
	wait := max(d.cfg.PollInterval/10, time.Millisecond)
	for {
		n, err := d.getNode(ctx, id)
		if err != nil {
			return nil, err
		}
		if ok, err := done(n); ok {
			return n, err
		}
		if !sleepCtx(ctx, wait) {
			return n, fmt.Errorf("ironic: node %s still %q (target %q): %w", id, n.ProvisionState, n.TargetProvisionState, ctx.Err())
		}
		wait = min(2*wait, d.cfg.PollInterval)
	}
}

// waitPower waits until a node's power state is settled at want.
func (d *Driver) waitPower(ctx context.Context, id, want string) error {
	_, err := d.waitNode(ctx, id, func(n *nodes.Node) (bool, error) {
		return n.TargetPowerState == "" && n.PowerState == want, nil
	})
	return err
}

// powerState maps Ironic's power state to ours.
func powerState(n *nodes.Node) int {
	switch n.PowerState {
	case powerOn:
		return virt.PowerRunning
	case powerOff:
		return virt.PowerShutdown
	default:
		return virt.PowerNoState
	}
}

// schedulable reports whether a free node may take a new instance.
func schedulable(n *nodes.Node) bool {
	return !n.Maintenance && n.ProvisionState == stateAvailable && n.InstanceUUID == ""
}

// resourceClass is the custom resource class of a node:
// CUSTOM_<resource_class in upper case, other characters as _>.
func resourceClass(rc string) string {
	if rc == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("CUSTOM_")
	for _, r := range strings.ToUpper(rc) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// intProp reads a numeric node property (Ironic stores them as numbers
// or strings).
func intProp(props map[string]any, key string) int64 {
	switch v := props[key].(type) {
	case float64:
		return int64(v)
	case string:
		var n int64
		_, _ = fmt.Sscan(v, &n)
		return n
	}
	return 0
}
