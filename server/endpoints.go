package server

import "fmt"

// registerEndpoints exposes every endpoint under its RPC name
// ("Flavor.Upsert", …).
func (s *Server) registerEndpoints() error {
	for name, e := range s.endpoints() {
		if err := s.rpcServer.Register(name, e); err != nil {
			return fmt.Errorf("register %s endpoint: %w", name, err)
		}
	}
	return nil
}

// endpoints are the server's RPC endpoints by name.
func (s *Server) endpoints() map[string]any {
	return map[string]any{
		"Status":    &Status{srv: s},
		"Flavor":    &Flavor{srv: s},
		"Operator":  &Operator{srv: s},
		"Host":      &Host{srv: s},
		"Instance":  &Instance{srv: s},
		"Alloc":     &Alloc{srv: s},
		"Eval":      &Eval{srv: s},
		"Plan":      &Plan{srv: s},
		"Identity":  &Identity{srv: s},
		"KeyPair":   &KeyPair{srv: s},
		"Migration": &Migration{srv: s},

		// Server groups, aggregates and availability zones, quotas.
		"ServerGroup": &ServerGroup{srv: s},
		"Aggregate":   &Aggregate{srv: s},
		"Quota":       &Quota{srv: s},
		// Image pre-caching on an aggregate's hosts (Nova's 2.81).
		"ImageCache": &ImageCache{srv: s},

		// Images: records and members (the data goes over streams).
		"Image": &Image{srv: s},
		// The S3 object store and EC2 credentials (data over streams).
		"S3": &S3{srv: s},

		// Networking: Neutron's resources and instances' interfaces.
		"Net": &Net{srv: s},
		// DHCP leases the hosts' dataplanes report.
		"NetLease": &NetLease{srv: s},

		// Instance groups: HCL specs, their versions and plans.
		"InstanceGroup": &InstanceGroup{srv: s},

		// Console authorization tokens.
		"Console": &Console{srv: s},

		// The certificate authority behind os-certificates.
		"CA": &CA{srv: s},

		// Block storage: volumes, snapshots, types, volume quotas, and
		// the storage agents' reads and reports.
		"Volume": &Volume{srv: s},
	}
}
