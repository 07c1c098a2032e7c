package agent

import (
	"github.com/stratus-cloud/stratus/structs"
)

// seedDevNetworks creates dev mode's networks (private, public and
// router1; Net.SeedDev, idempotent) once the cluster leads and the
// identity is seeded.
func (a *Agent) seedDevNetworks() error {
	var resp structs.GenericResponse
	if err := a.self.RPC("Net.SeedDev", &structs.NetSeedRequest{}, &resp); err != nil {
		return err
	}
	a.logger.Info("dev mode: seeded networks private (10.0.0.0/24) and public (172.24.4.0/24) with router1")
	return nil
}
