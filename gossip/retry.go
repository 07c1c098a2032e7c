package gossip

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// RetryJoin joins addrs, retrying every interval until one join succeeds
// or stop closes, so members may start in any order (Nomad's and
// Consul's retry_join). It returns once joined or stopped; run it in a
// goroutine.
func (p *Pool) RetryJoin(addrs []string, interval time.Duration, stop <-chan struct{}, logger hclog.Logger) {
	if len(addrs) == 0 {
		return
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	for attempt := 1; ; attempt++ {
		n, err := p.Join(addrs)
		if err == nil && n > 0 {
			logger.Info("joined the gossip pool", "contacted", n, "attempts", attempt)
			return
		}
		logger.Warn("join failed; retrying", "addrs", addrs, "error", err, "retry_in", interval)
		select {
		case <-stop:
			return
		case <-time.After(interval):
		}
	}
}
