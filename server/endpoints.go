package server

import "fmt"

// registerEndpoints exposes every endpoint under its RPC name
// ("Flavor.Upsert", …).
func (s *Server) registerEndpoints() error {
	endpoints := map[string]any{
		"Status":   &Status{srv: s},
		"Flavor":   &Flavor{srv: s},
		"Operator": &Operator{srv: s},
	}
	for name, e := range endpoints {
		if err := s.rpcServer.Register(name, e); err != nil {
			return fmt.Errorf("register %s endpoint: %w", name, err)
		}
	}
	return nil
}
