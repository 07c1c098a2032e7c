package native

import "github.com/stratus-cloud/stratus/structs"

// A move's disk token opens the instance's disks on its source host's
// agent (client/diskxfer); it lives in the replicated state, which the
// /v1 views show, so they show it blanked.

// redactInstance returns inst without its task's disk token.
func redactInstance(inst *structs.Instance) *structs.Instance {
	if inst == nil || inst.Task == nil || inst.Task.DiskToken == "" {
		return inst
	}
	c := *inst
	c.Task = inst.Task.Copy()
	c.Task.DiskToken = ""
	return &c
}

// redactAlloc returns a without its disk tokens.
func redactAlloc(a *structs.Allocation) *structs.Allocation {
	if a == nil || (a.DiskExportToken == "" && a.DiskSource == nil && a.PrepareDest == nil) {
		return a
	}
	c := a.Copy()
	c.DiskExportToken = ""
	if a.DiskSource != nil {
		ds := *a.DiskSource
		ds.Token = ""
		c.DiskSource = &ds
	}
	if a.PrepareDest != nil {
		pd := *a.PrepareDest
		pd.Token = ""
		c.PrepareDest = &pd
	}
	return c
}
