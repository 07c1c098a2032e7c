package scheduler

// BuildFailureWeigher pushes hosts that recently failed to spawn
// instances to the back, as Nova's weigher of that name does: the raw
// weight is minus the host's BuildFailures, and the large default
// multiplier (Config.BuildFailureWeightMultiplier) outweighs the
// resource weighers.
type BuildFailureWeigher struct{}

// Name implements Weigher.
func (BuildFailureWeigher) Name() string { return "BuildFailureWeigher" }

// Multiplier implements Weigher.
func (BuildFailureWeigher) Multiplier(cfg Config) float64 { return cfg.BuildFailureWeightMultiplier }

// Weigh implements Weigher.
func (BuildFailureWeigher) Weigh(h *HostView, _ *Request) float64 {
	return -float64(h.Host.BuildFailures)
}
