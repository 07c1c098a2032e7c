package server

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
)

// SeedDev creates dev mode's networks (see SeedDevNetworks).
func (e *Net) SeedDev(args *structs.NetSeedRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Net.SeedDev", args, args, reply); done {
		return err
	}
	if err := e.srv.SeedDevNetworks(); err != nil {
		return fmt.Errorf("seed dev networks: %w", err)
	}
	reply.Index = e.srv.fsm.State().LatestIndex()
	return nil
}
