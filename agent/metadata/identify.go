package metadata

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/client/instancedata"
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's metadata proxy headers (Neutron's metadata agent sends them).
const (
	headerInstanceID = "X-Instance-ID"
	headerSignature  = "X-Instance-ID-Signature"
	headerTenantID   = "X-Tenant-ID"
	headerForwarded  = "X-Forwarded-For"
)

// Sign is the X-Instance-ID-Signature a metadata proxy sends for an
// instance id: hex HMAC-SHA256 of the id with the shared secret.
func Sign(secret, instanceID string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(instanceID))
	return hex.EncodeToString(mac.Sum(nil))
}

// identify finds the instance a request is for: by the proxy's signed
// headers when a shared secret is configured and they are present, else
// by the request's source address.
func (s *Service) identify(r *http.Request) (*instancedata.InstanceData, error) {
	if s.cfg.SharedSecret != "" && r.Header.Get(headerInstanceID) != "" {
		return s.identifyProxied(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return s.identifyByAddress(host)
}

// identifyProxied checks Nova's proxy headers: every one present once
// (400 otherwise), the signature right (403), the instance existing and
// of the tenant named (404).
func (s *Service) identifyProxied(r *http.Request) (*instancedata.InstanceData, error) {
	ids, sigs, tenants := r.Header.Values(headerInstanceID), r.Header.Values(headerSignature), r.Header.Values(headerTenantID)
	switch {
	case len(sigs) == 0:
		return nil, errStatus(http.StatusBadRequest, "X-Instance-ID-Signature header is missing from request.")
	case len(tenants) == 0:
		return nil, errStatus(http.StatusBadRequest, "X-Tenant-ID header is missing from request.")
	case len(ids) > 1:
		return nil, errStatus(http.StatusBadRequest, "Multiple X-Instance-ID headers found within request.")
	case len(tenants) > 1:
		return nil, errStatus(http.StatusBadRequest, "Multiple X-Tenant-ID headers found within request.")
	}
	id := ids[0]
	want := Sign(s.cfg.SharedSecret, id)
	if !hmac.Equal([]byte(want), []byte(sigs[0])) {
		s.logger.Warn("metadata proxy request with a bad signature", "instance_id", id,
			"remote_address", r.Header.Get(headerForwarded))
		return nil, errStatus(http.StatusForbidden, "Access was denied to this resource.")
	}
	d, err := s.data(id)
	if err != nil {
		return nil, err
	}
	if d.Instance.ProjectID != tenants[0] {
		s.logger.Warn("metadata proxy request for another tenant's instance", "instance_id", id, "tenant_id", tenants[0])
		return nil, errNotFound
	}
	return d, nil
}

// identifyByAddress finds the instance on one of this agent's hosts that
// holds addr as a fixed IP; none, or more than one (overlapping tenant
// networks), is a 404.
func (s *Service) identifyByAddress(addr string) (*instancedata.InstanceData, error) {
	ids, err := s.instancesAt(addr)
	if err != nil {
		return nil, err
	}
	if len(ids) != 1 {
		if len(ids) > 1 {
			s.logger.Warn("metadata request from an address several instances hold", "address", addr, "instances", ids)
		} else {
			s.logger.Info("metadata request from an unknown address", "address", addr)
		}
		return nil, errNotFound
	}
	d, err := s.data(ids[0])
	if err != nil {
		return nil, err
	}
	// The address table may be older than a move or a delete.
	s.mu.Lock()
	mine := slices.Contains(s.hosts, d.Instance.HostID)
	s.mu.Unlock()
	if !mine || !slices.Contains(d.FixedIPs(), addr) {
		s.forget(ids[0])
		s.mu.Lock()
		s.ipsRead = time.Time{} // read the table again next time
		s.mu.Unlock()
		return nil, errNotFound
	}
	return d, nil
}

// ipMaxAge is how long the address table is trusted for a known
// address before it is read again.
const ipMaxAge = 30 * time.Second

// instancesAt lists the instances holding addr, reading the hosts'
// ports again when addr is unknown and the table is older than
// ipRefresh.
func (s *Service) instancesAt(addr string) ([]string, error) {
	s.mu.Lock()
	ids, age := s.byIP[addr], time.Since(s.ipsRead)
	s.mu.Unlock()
	if (len(ids) > 0 && age < ipMaxAge) || age < ipRefresh {
		return ids, nil
	}
	byIP := map[string][]string{}
	hosts := s.cfg.HostIDs()
	for _, h := range hosts {
		if h == "" {
			continue
		}
		var out structs.NetListResponse
		err := s.cfg.Call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, HostID: h,
			Caller: structs.NetCaller{Admin: true}}, &out)
		if err != nil {
			return nil, err
		}
		for _, p := range out.Ports {
			for _, ip := range p.FixedIPs {
				if p.DeviceID != "" && !slices.Contains(byIP[ip.IPAddress], p.DeviceID) {
					byIP[ip.IPAddress] = append(byIP[ip.IPAddress], p.DeviceID)
				}
			}
		}
	}
	s.mu.Lock()
	s.byIP, s.hosts, s.ipsRead = byIP, hosts, time.Now()
	s.mu.Unlock()
	return byIP[addr], nil
}

// data returns an instance's metadata, from the cache while it is
// fresh. A missing instance is a 404.
func (s *Service) data(id string) (*instancedata.InstanceData, error) {
	s.mu.Lock()
	c, ok := s.cache[id]
	s.mu.Unlock()
	if ok && s.ttl > 0 && time.Since(c.at) < s.ttl {
		return c.data, nil
	}
	d, err := instancedata.Fetch(s.cfg.Call, id)
	if err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, errNotFound
		}
		return nil, err
	}
	if s.ttl > 0 {
		s.mu.Lock()
		for k, old := range s.cache {
			if time.Since(old.at) >= s.ttl {
				delete(s.cache, k)
			}
		}
		s.cache[id] = cached{data: d, at: time.Now()}
		s.mu.Unlock()
	}
	return d, nil
}

// forget drops an instance's cached metadata.
func (s *Service) forget(id string) {
	s.mu.Lock()
	delete(s.cache, id)
	s.mu.Unlock()
}
