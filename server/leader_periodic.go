package server

import "time"

// runPeriodicAsLeader runs duty once at once and then every interval, in
// a goroutine of its own, until stopCh (the end of this leadership) or
// the server's shutdown; revokeLeadership waits for it through leaderWG.
// The leader's purges use it: each duty decides for itself whether
// there is anything to propose, so an idle cluster writes nothing. The
// first run is not left to the ticker: under load, leadership can change
// more often than the interval, and a duty that waited a whole interval
// at each leadership would never run (the 10-minute load run with a
// 3-minute retention saw it).
func (s *Server) runPeriodicAsLeader(stopCh chan struct{}, interval time.Duration, duty func(now time.Time)) {
	s.leaderWG.Add(1)
	go func() {
		defer s.leaderWG.Done()
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		select {
		case <-stopCh:
			return
		case <-s.shutdownCh:
			return
		default:
			duty(time.Now())
		}
		for {
			select {
			case <-stopCh:
				return
			case <-s.shutdownCh:
				return
			case now := <-ticker.C:
				duty(now)
			}
		}
	}()
}
