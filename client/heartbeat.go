package client

import (
	"github.com/stratus-cloud/stratus/internal/retry"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// register fingerprints the host and registers it.
func (c *Client) register() error {
	host, err := c.fingerprint()
	if err != nil {
		return err
	}
	return c.registerHost(host)
}

// registerHost sends Host.Register and records the host and heartbeat TTL.
func (c *Client) registerHost(host *structs.Host) error {
	if err := host.Validate(); err != nil {
		return err
	}
	req := &structs.HostRegisterRequest{Host: host, WriteRequest: c.writeRequest()}
	if c.cfg.IntroToken != nil {
		req.IntroToken = c.cfg.IntroToken(host.Name)
	}
	var resp structs.HostRegisterResponse
	if err := c.call("Host.Register", req, &resp); err != nil {
		return err
	}
	c.regMu.Lock()
	c.registered = host
	c.ttl = resp.HeartbeatTTL
	c.regMu.Unlock()
	c.logger.Info("host registered", "name", host.Name, "heartbeat_ttl", resp.HeartbeatTTL)
	return nil
}

// Registered reports whether the servers have accepted the host's
// registration (since this client started).
func (c *Client) Registered() bool {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	return c.registered != nil
}

// writeRequest is the WriteRequest of the client's calls about its
// host: its region and its node secret.
func (c *Client) writeRequest() structs.WriteRequest {
	return structs.WriteRequest{Region: c.cfg.Region, AuthToken: c.cfg.NodeSecret}
}

// heartbeatInterval is half the TTL the servers gave, ±10 %.
func (c *Client) heartbeatInterval() time.Duration {
	c.regMu.Lock()
	ttl := c.ttl
	c.regMu.Unlock()
	if ttl <= 0 {
		ttl = c.defaultHeartbeatTTL
	}
	return retry.Jitter(ttl/2, 0.1)
}

// heartbeat sends Host.Heartbeat and records the TTL it returns.
func (c *Client) heartbeat() error {
	req := &structs.HostHeartbeatRequest{HostIDs: []string{c.hostID}, WriteRequest: c.writeRequest()}
	var resp structs.HostRegisterResponse
	if err := c.call("Host.Heartbeat", req, &resp); err != nil {
		return err
	}
	if resp.HeartbeatTTL > 0 {
		c.regMu.Lock()
		c.ttl = resp.HeartbeatTTL
		c.regMu.Unlock()
	}
	return nil
}

// heartbeatLoop heartbeats every TTL/2, registers again when the servers
// forgot the host, and fingerprints the host every FingerprintInterval,
// registering again only when its record changed.
func (c *Client) heartbeatLoop() {
	hb := time.NewTimer(c.heartbeatInterval())
	defer hb.Stop()
	fp := time.NewTicker(c.cfg.FingerprintInterval)
	defer fp.Stop()
	b := c.newBackoff()
	for {
		select {
		case <-c.ctx.Done():
			return

		case <-fp.C:
			c.refingerprint()

		case <-hb.C:
			err := c.heartbeat()
			if err != nil && structs.KindOf(err) == structs.KindNotFound {
				c.logger.Warn("servers do not know this host; registering again", "error", err)
				err = c.register()
			}
			switch {
			case c.ctx.Err() != nil:
				return
			case err == nil:
				b.Reset()
				hb.Reset(c.heartbeatInterval())
			default:
				wait := min(b.Next(), c.heartbeatInterval())
				c.logger.Warn("heartbeat failed", "error", err, "retry_in", wait)
				hb.Reset(wait)
			}
		}
	}
}

// refingerprint registers the host again when its record changed, or
// when the servers' copy lost what it registered (recordLost); on
// failure the record stays stale and the next tick retries.
func (c *Client) refingerprint() {
	host, err := c.fingerprint()
	if err != nil {
		if c.ctx.Err() == nil {
			c.logger.Warn("fingerprint failed", "error", err)
		}
		return
	}
	c.regMu.Lock()
	same := sameHost(host, c.registered)
	c.regMu.Unlock()
	switch {
	case !same:
		c.logger.Info("host fingerprint changed; registering again")
	case c.recordLost(host):
		c.logger.Info("the servers' record of this host lacks its tunnel endpoint; registering again")
	default:
		return
	}
	if err := c.registerHost(host); err != nil && c.ctx.Err() == nil {
		c.logger.Warn("registration failed", "error", err)
	}
}

// recordLost reports whether the servers' record of the host lacks its
// tunnel endpoint. A leader of an older release decodes no TunnelIP,
// so a host that registered under it is stored without one (out of
// the overlay), and its unchanged fingerprint would never register it
// again before its agent restarted. While such a leader leads, each
// tick registers again in vain; the first under a current leader
// sticks.
func (c *Client) recordLost(host *structs.Host) bool {
	if host.TunnelIP == "" {
		return false
	}
	req := &structs.HostSpecificRequest{HostID: host.ID,
		QueryOptions: structs.QueryOptions{Region: c.cfg.Region, AuthToken: c.cfg.NodeSecret}}
	var out structs.SingleHostResponse
	if err := c.call("Host.Get", req, &out); err != nil {
		if c.ctx.Err() == nil {
			c.logger.Debug("cannot read the host's record", "error", err)
		}
		return false
	}
	return out.Host != nil && out.Host.TunnelIP != host.TunnelIP
}
