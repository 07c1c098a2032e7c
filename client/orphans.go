package client

// reapOrphans runs once, after the first complete allocation sync. It
// destroys the instances of allocations remembered in state.db that the
// servers no longer list (they vanished while the agent was down), then
// every instance the driver lists that belongs to no allocation (Nova's
// running_deleted_instance_action=reap).
func (c *Client) reapOrphans() {
	ctx := c.ctx
	recorded, err := c.state.allocs()
	if err != nil {
		c.logger.Error("cannot read local allocation state; skipping the clean-up of vanished allocations", "error", err)
	}
	for allocID, st := range recorded {
		if c.runner(allocID) != nil {
			continue
		}
		// An instance that migrated away is not ours to destroy, even if
		// it came back under an allocation not yet handed over.
		if st.InstanceID != "" && !st.MigratedAway && !c.instanceManaged(st.InstanceID) {
			if err := c.driver.Destroy(ctx, st.InstanceID); err != nil && !isNotFound(err) {
				if ctx.Err() == nil {
					c.logger.Error("cannot destroy the instance of a vanished allocation", "alloc_id", allocID, "instance_id", st.InstanceID, "error", err)
				}
				continue
			}
			c.logger.Info("destroyed the instance of an allocation that vanished while the agent was down", "alloc_id", allocID, "instance_id", st.InstanceID)
		}
		if err := c.state.deleteAlloc(allocID); err != nil {
			c.logger.Error("cannot forget a vanished allocation", "alloc_id", allocID, "error", err)
		}
	}

	ids, err := c.driver.ListInstances(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.logger.Error("cannot list instances; skipping the orphan reap", "error", err)
		}
		return
	}
	for _, id := range ids {
		if c.instanceManaged(id) {
			continue
		}
		if err := c.driver.Destroy(ctx, id); err != nil && !isNotFound(err) {
			if ctx.Err() == nil {
				c.logger.Error("cannot destroy orphan instance", "instance_id", id, "error", err)
			}
			continue
		}
		c.logger.Warn("reaped an orphan instance that belongs to no allocation", "instance_id", id)
	}
}

// instanceManaged reports whether any runner, live or not, manages
// instance id.
func (c *Client) instanceManaged(id string) bool {
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	for _, r := range c.runners {
		if r.managedInstance() == id {
			return true
		}
	}
	return false
}
