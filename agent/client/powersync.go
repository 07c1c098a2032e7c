package client

import (
	"time"
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
