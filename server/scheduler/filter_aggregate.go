package scheduler

import (
	"sort"
	"strings"
)

// aggregateScope is the extra spec scope AggregateInstanceExtraSpecsFilter
// reads. Nova also reads unscoped keys; Stratus runs the filter by
// default, so it reads only scoped ones, lest a flavor's unscoped
// extra spec make every host without aggregates unfit.
const aggregateScope = "aggregate_instance_extra_specs:"

// tenantKeyPrefix starts the aggregate metadata keys that isolate hosts
// to projects: filter_tenant_id, filter_tenant_id_2, …
const tenantKeyPrefix = "filter_tenant_id"

// aggregateSpec is one flavor extra spec an aggregate must match.
type aggregateSpec struct {
	key string
	m   specMatcher
}

// aggregateSpecs parses a flavor's aggregate_instance_extra_specs:KEY
// extra specs, sorted by key; other specs are not read.
func aggregateSpecs(specs map[string]string) []aggregateSpec {
	var out []aggregateSpec
	for k, v := range specs {
		key, ok := strings.CutPrefix(k, aggregateScope)
		if !ok || key == "" {
			continue
		}
		out = append(out, aggregateSpec{key: key, m: parseSpec(v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// AggregateInstanceExtraSpecsFilter passes hosts whose aggregates'
// metadata satisfy the flavor's aggregate_instance_extra_specs:KEY extra
// specs, as Nova's filter of that name does for scoped keys: some
// aggregate of the host must have KEY with a value that matches (Nova's
// operators; comma-separated metadata values are each tried). A host in
// no aggregate with KEY fails. Flavors without such specs pass
// everywhere.
type AggregateInstanceExtraSpecsFilter struct{}

// Name implements Filter.
func (AggregateInstanceExtraSpecsFilter) Name() string { return "AggregateInstanceExtraSpecsFilter" }

func (AggregateInstanceExtraSpecsFilter) applies(req *Request) bool {
	return req.place != nil && len(req.place.aggSpecs) > 0
}

// Filter implements Filter.
func (f AggregateInstanceExtraSpecsFilter) Filter(h *HostView, req *Request) (bool, string) {
	if !f.applies(req) {
		return true, ""
	}
	meta := req.hostMeta(h.Host.ID)
specs:
	for i := range req.place.aggSpecs {
		s := &req.place.aggSpecs[i]
		for _, v := range meta[s.key] {
			if s.m.match(v, true) {
				continue specs
			}
		}
		return false, "aggregate metadata mismatch"
	}
	return true, ""
}

// AggregateMultiTenancyIsolation keeps hosts in an aggregate with
// filter_tenant_id (or filter_tenant_id_*) metadata for the projects it
// lists (comma-separated), as Nova's filter of that name does; hosts in
// no such aggregate take every project.
type AggregateMultiTenancyIsolation struct{}

// Name implements Filter.
func (AggregateMultiTenancyIsolation) Name() string { return "AggregateMultiTenancyIsolation" }

func (AggregateMultiTenancyIsolation) applies(req *Request) bool {
	return req.place != nil && req.place.run.tenantIsolation
}

// Filter implements Filter.
func (f AggregateMultiTenancyIsolation) Filter(h *HostView, req *Request) (bool, string) {
	if !f.applies(req) {
		return true, ""
	}
	restricted := false
	for k, vals := range req.hostMeta(h.Host.ID) {
		if !strings.HasPrefix(k, tenantKeyPrefix) {
			continue
		}
		for _, v := range vals {
			if v == "" {
				continue
			}
			if v == req.Instance.ProjectID {
				return true, ""
			}
			restricted = true
		}
	}
	if restricted {
		return false, "isolated to other projects"
	}
	return true, ""
}
