package server

// EvalBrokerCounts are the broker's evaluations of one trigger: ready
// (waiting for a worker, Blocked among them), unacked (handed to a
// worker), and blocked (ready, but naming an instance an unacked
// evaluation holds, so no worker may take it until that one is acked).
type EvalBrokerCounts struct {
	Ready, Unacked, Blocked int
}

// statsByTrigger counts the broker's evaluations by what triggered them
// (instance-create, resize, migrate, …): Stratus's scheduler is one, so
// the trigger is what tells the kinds of scheduling work apart, as
// Nomad's broker tells its schedulers apart.
func (b *evalBroker) statsByTrigger() map[string]EvalBrokerCounts {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]EvalBrokerCounts{}
	for _, ev := range b.ready {
		c := out[ev.TriggeredBy]
		c.Ready++
		if b.conflicts(ev) {
			c.Blocked++
		}
		out[ev.TriggeredBy] = c
	}
	for _, u := range b.unack {
		c := out[u.eval.TriggeredBy]
		c.Unacked++
		out[u.eval.TriggeredBy] = c
	}
	return out
}
