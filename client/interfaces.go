package client

import (
	"errors"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// interfaceLoop hot-plugs the ports os-interface attaches to the
// instances on this host, and unplugs those it detaches, with a driver
// that can (virt.InterfaceAttacher). It watches the ports bound to the
// host; what it saw is kept in memory, so after a restart it plugs
// every port again (a no-op for those the guest has) but cannot know
// what was detached meanwhile — the guest keeps such a NIC, unwired,
// until its next spawn.
func (c *Client) interfaceLoop() {
	ia, ok := c.driver.(virt.InterfaceAttacher)
	if !ok || !c.driver.Capabilities().AttachInterface {
		return
	}
	var index uint64
	known := map[string]map[string]bool{}
	b := c.newBackoff()
	for c.ctx.Err() == nil {
		var out structs.NetListResponse
		req := &structs.NetListRequest{Kind: structs.NetKindPort, HostID: c.hostID, Caller: structs.NetCaller{Admin: true}}
		req.MinQueryIndex, req.MaxQueryTime = index, c.maxQueryTime
		err := c.call("Net.List", req, &out)
		if err == nil && out.Index == 0 {
			err = errors.New("port list without an index")
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			wait := b.Next()
			c.logger.Warn("cannot watch the host's ports for interface changes", "error", err, "retry_in", wait)
			if !c.sleep(wait) {
				return
			}
			continue
		}
		b.Reset()
		if out.Index < index {
			index = 0 // the servers' state was restored
		} else {
			index = out.Index
		}
		c.syncInterfaces(ia, out.Ports, known)
	}
}

// syncInterfaces plugs the ports of each instance it has not seen and
// unplugs those gone since. A port of an instance the driver does not
// have (not spawned yet: its spawn brings its ports) counts as plugged.
func (c *Client) syncInterfaces(ia virt.InterfaceAttacher, ports []*structs.Port, known map[string]map[string]bool) {
	now := map[string]map[string]*structs.Port{}
	for _, p := range ports {
		if !p.IsCompute() || p.DeviceID == "" {
			continue
		}
		if now[p.DeviceID] == nil {
			now[p.DeviceID] = map[string]*structs.Port{}
		}
		now[p.DeviceID][p.ID] = p
	}
	for inst, ps := range now {
		if known[inst] == nil {
			known[inst] = map[string]bool{}
		}
		for id, p := range ps {
			if known[inst][id] {
				continue
			}
			nic := nicOf(p)
			err := ia.AttachInterface(c.ctx, inst, &nic)
			if err != nil && !errors.Is(err, virt.ErrNotFound) {
				c.logger.Warn("cannot plug the instance's new port", "instance_id", inst, "port_id", id, "error", err)
				continue
			}
			known[inst][id] = true
		}
	}
	stillOwned := c.portsStillOwned(known, now)
	for inst, ids := range known {
		for id := range ids {
			if now[inst][id] != nil {
				continue
			}
			if stillOwned[id] == inst {
				// The port still belongs to the instance, which moved
				// away (a migration): not ours to unplug.
				delete(ids, id)
				continue
			}
			err := ia.DetachInterface(c.ctx, inst, id)
			if err != nil && !errors.Is(err, virt.ErrNotFound) {
				c.logger.Warn("cannot unplug the instance's removed port", "instance_id", inst, "port_id", id, "error", err)
				continue
			}
			delete(ids, id)
		}
		if len(ids) == 0 {
			delete(known, inst)
		}
	}
}

// portsStillOwned reads the ports that left the host's list and returns
// the instance each still belongs to (a port of an instance that moved
// away keeps its device); a port deleted or detached is absent.
func (c *Client) portsStillOwned(known map[string]map[string]bool, now map[string]map[string]*structs.Port) map[string]string {
	var gone []string
	for inst, ids := range known {
		for id := range ids {
			if now[inst][id] == nil {
				gone = append(gone, id)
			}
		}
	}
	out := map[string]string{}
	if len(gone) == 0 {
		return out
	}
	var res structs.NetListResponse
	err := c.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, IDs: gone,
		Caller: structs.NetCaller{Admin: true}}, &res)
	if err != nil {
		// Unsure: treat every one as still owned, so nothing is
		// unplugged by mistake.
		c.logger.Warn("cannot read the ports that left the host", "error", err)
		for inst, ids := range known {
			for id := range ids {
				if now[inst][id] == nil {
					out[id] = inst
				}
			}
		}
		return out
	}
	for _, p := range res.Ports {
		if p.DeviceID != "" {
			out[p.ID] = p.DeviceID
		}
	}
	return out
}
