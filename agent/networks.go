package agent

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// seedDevNetworks creates dev mode's networks (private, public and
// router1; Net.SeedDev, idempotent) once the cluster leads and the
// identity is seeded.
func (a *Agent) seedDevNetworks() {
	defer a.bgWG.Done()
	for {
		var resp structs.GenericResponse
		err := a.self.RPC("Net.SeedDev", &structs.NetSeedRequest{}, &resp)
		if err == nil {
			a.logger.Info("dev mode: seeded networks private (10.0.0.0/24) and public (172.24.4.0/24) with router1")
			return
		}
		a.logger.Debug("dev mode: waiting to seed networks", "error", err)
		select {
		case <-a.shutdownCh:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}
