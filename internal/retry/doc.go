// Package retry is the one retry helper of Stratus: a capped exponential
// Backoff with jitter for the loops that keep trying until they succeed
// or shut down (a host's registration, its reports, the dataplane's
// watch, the scheduler workers' dequeues), and Do, which retries a write
// across leader elections within a budget, so that an election shows as
// latency.
//
// What may be retried is decided by error kinds, which survive RPC hops
// (structs.KindOf), and by the RPC layer's own classification of
// transport failures (rpc.IsConnError) — never by matching error text.
// The servers give every failure that means "no leader, or the outcome
// is unknown because the leader changed or could not be reached" the
// kind structs.KindNoLeader or structs.KindUnavailable before it leaves
// them.
//
// It must not know an endpoint or an API format, and must not decide
// whether a write is safe to send twice: only callers whose writes are
// idempotent (creates with an idempotency key, deletes, tasks with their
// own ids) call Do. The virt drivers' reconnects and the RPC listener's
// accept loop keep their own pauses: those packages must not depend on
// RPC semantics.
package retry
