package client

import (
	"time"

	"github.com/stratus-cloud/stratus/virt"
)

// powerSyncLoop is Nova's _sync_power_states: every PowerSyncInterval
// each runner reads its instance's power state from the driver and
// reports drift (a guest that shut down is reported stopped, not
// restarted; a guest running while desired stopped is powered off; a
// vanished instance desired running is reported failed). The runners do
// the driver calls themselves, so they never race their own actions.
func (c *Client) powerSyncLoop() {
	t := time.NewTicker(c.cfg.PowerSyncInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			for _, r := range c.runnerList() {
				r.poke()
			}
		}
	}
}

// eventLoop is the power sync of one instance at a time, driven by a
// driver that reports power-state changes as they happen
// (virt.EventSource): each event pokes the runners of its instance, which
// read the state with GetInfo as a power sync would. The poll stays as the
// safety net for events lost or dropped.
func (c *Client) eventLoop(events <-chan virt.InstanceEvent) {
	for {
		select {
		case <-c.ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			for _, r := range c.runnerList() {
				if r.managedInstance() == ev.ID {
					r.poke()
				}
			}
		}
	}
}
