// Package scheduler decides where instances run. It owns the feasibility
// filters, the weighers and the placement explanations (Nova's
// NoValidHost with per-filter counts), and nothing else: Schedule is a
// pure function of a read-only state snapshot and an evaluation that
// returns a plan.
//
// The scheduler follows Nova's filter scheduler. Filters (ComputeFilter,
// RetryFilter, ResourceFilter, AvailabilityZoneFilter,
// ComputeCapabilitiesFilter, ImagePropertiesFilter, TraitsFilter, in that
// order) drop the hosts that cannot take an instance; weighers (RAM, CPU,
// disk and build failures) rank the rest, each normalised to [0,1] across
// the candidates and scaled by its multiplier; the instance goes to one of
// the best HostSubsetSize hosts, chosen by the caller's random source so a
// seed reproduces a plan. The instances of one evaluation are placed one
// after the other, each counted against its host (an overlay on the host's
// usage) for those that follow.
//
// It must not write state: it never modifies the hosts or instances it is
// given, and it imports only structs and the standard library (never
// server, fsm, rpc or agent). Committing a plan, and refusing placements
// that no longer fit, is the plan applier's job.
package scheduler
