package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/server/scheduler"
	"github.com/stratus-cloud/stratus/structs"
)

// Scheduler configuration sources reported by SchedulerGetConfiguration.
const (
	schedulerConfigFromOperator = "operator"
	schedulerConfigFromFile     = "config"
)

// SchedulerGetConfiguration returns the scheduler configuration in
// force: the operator's, once set, else this server's file.
func (e *Operator) SchedulerGetConfiguration(args *structs.GenericRequest, reply *structs.SchedulerConfigResponse) error {
	if done, err := e.srv.forward("Operator.SchedulerGetConfiguration", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		c, err := state.SchedulerConfig(ws)
		if err != nil {
			return nil, 0, err
		}
		reply.Config, reply.Source = c, schedulerConfigFromOperator
		if c == nil {
			reply.Config, reply.Source = configFromScheduler(e.srv.config.Scheduler), schedulerConfigFromFile
		}
		return reply.Config, state.Index(fsm.TableSchedulerConfig), nil
	})
}

// SchedulerSetConfiguration replaces the scheduler configuration for
// every server; with CAS only if it is still at CheckIndex.
func (e *Operator) SchedulerSetConfiguration(args *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigResponse) error {
	if done, err := e.srv.forward("Operator.SchedulerSetConfiguration", args, args, reply); done {
		return err
	}
	if err := args.Config.Validate(); err != nil {
		return err
	}
	entry := &structs.SchedulerSetConfigEntry{Config: args.Config.Copy(), CAS: args.CAS, CheckIndex: args.CheckIndex}
	b, err := structs.EncodeEntry(structs.SchedulerConfigSetType, entry)
	if err != nil {
		return err
	}
	index, resp, err := e.srv.raftApply(b)
	if err != nil {
		return err
	}
	reply.Index = index
	reply.Updated, _ = resp.(bool)
	if reply.Updated {
		e.srv.logger.Info("scheduler configuration set by operator", "config", entry.Config.String())
	}
	return nil
}

// schedulerConfig is the configuration placements use now: the
// operator's from state when set, else the server's own.
func (s *Server) schedulerConfig(state *fsm.StateStore) scheduler.Config {
	c, err := state.SchedulerConfig(nil)
	if err != nil || c == nil {
		return s.config.Scheduler
	}
	return scheduler.Config{
		RAMWeightMultiplier: c.RAMWeightMultiplier, CPUWeightMultiplier: c.CPUWeightMultiplier,
		DiskWeightMultiplier: c.DiskWeightMultiplier, BuildFailureWeightMultiplier: c.BuildFailureWeightMultiplier,
		HostSubsetSize:               c.HostSubsetSize,
		SoftAffinityWeightMultiplier: c.SoftAffinityWeightMultiplier, SoftAntiAffinityWeightMultiplier: c.SoftAntiAffinityWeightMultiplier,
	}
}

func configFromScheduler(c scheduler.Config) *structs.SchedulerConfiguration {
	return &structs.SchedulerConfiguration{
		RAMWeightMultiplier: c.RAMWeightMultiplier, CPUWeightMultiplier: c.CPUWeightMultiplier,
		DiskWeightMultiplier: c.DiskWeightMultiplier, BuildFailureWeightMultiplier: c.BuildFailureWeightMultiplier,
		HostSubsetSize:               max(c.HostSubsetSize, 1),
		SoftAffinityWeightMultiplier: c.SoftAffinityWeightMultiplier, SoftAntiAffinityWeightMultiplier: c.SoftAntiAffinityWeightMultiplier,
	}
}
