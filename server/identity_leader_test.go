package server

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServersOwnCallsAtClusterStartWaitForTheSigningKey: with ACLs on,
// each server of a new cluster makes its own credentialed calls at once,
// before its state holds the cluster's signing key (the first election
// may not even have happened). They wait for the key instead of being
// refused as unauthenticated, all succeed, and no server logs a
// credential or signing-key error.
func TestServersOwnCallsAtClusterStartWaitForTheSigningKey(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	const n = 3
	var servers []*Server
	for i := range n {
		servers = append(servers, testServer(t, func(c *Config) {
			c.ACLEnabled, c.BootstrapExpect = true, n
			c.Logger = hclog.New(&hclog.LoggerOptions{Name: c.NodeName, Level: hclog.Warn, Output: logs})
			if i > 0 {
				c.Join = []string{servers[0].Gossip().Addr()}
			}
		}))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := &structs.Flavor{ID: fmt.Sprintf("f%d", i), Name: fmt.Sprintf("flavor-%d", i), VCPUs: 1, MemoryMB: 64, RootGB: 1}
			if err := s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{f}}, &structs.FlavorUpsertResponse{}); err != nil {
				errs <- fmt.Errorf("%s: %w", s.config.NodeName, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	leader := waitForLeader(t, servers...)
	if fl, _ := leader.fsm.State().Flavors(nil); len(fl) != n {
		t.Fatalf("%d flavors, want %d", len(fl), n)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		l := strings.ToLower(line)
		if strings.Contains(l, "credential") || strings.Contains(l, "signing key") || strings.Contains(l, "unauthenticated") {
			t.Errorf("start-up logged: %s", line)
		}
	}
}
