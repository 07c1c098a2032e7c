// Package scheduler decides where instances run. It owns the feasibility
// filters, the weighers and the placement explanations (Nova's
// NoValidHost with per-filter counts), and nothing else: Schedule is a
// pure function of a read-only state snapshot and an evaluation that
// returns a plan.
//
// The scheduler follows Nova's filter scheduler. Filters (see
// DefaultFilters for their order: target host, compute, retry,
// resources, zone, aggregates, capabilities, image, traits, same/different
// host hints, server groups) drop the hosts that cannot take an instance;
// weighers (RAM, CPU, disk, build failures and the soft server group
// policies) rank the rest, each normalised to [0,1] across
// the candidates and scaled by its multiplier; the instance goes to one of
// the best HostSubsetSize hosts, chosen by the caller's random source so a
// seed reproduces a plan. The instances of one evaluation are placed one
// after the other, each counted against its host (an overlay on the host's
// usage) for those that follow.
//
// What placement depends on beyond the hosts — effective availability
// zones, aggregates, where server group members and hinted instances run
// — comes from the caller as a Topology (a State that implements
// TopologyState), read from the same snapshot as the hosts.
//
// It must not write state: it never modifies the hosts or instances it is
// given, and it imports only structs and the standard library (never
// server, fsm, rpc or agent). Committing a plan, and refusing placements
// that no longer fit, is the plan applier's job.
package scheduler
