// Command load runs the Stratus load test: a cluster of real `cloudctl
// agent` processes (3 servers, fake-driver clients) under 1,000
// concurrent Compute API clients on loopback, printing error rates,
// latencies, server memory and Raft storage growth. Run it with
//
//	go run ./scripts/load -duration 30m
//
// See website/robustness.md ("Load"). It must not run as part of make test:
// its thirty minutes are for an operator who asks.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/stratus-cloud/stratus/internal/loadtest"
)

func main() {
	o := loadtest.Options{Out: os.Stdout}
	flag.StringVar(&o.Cloudctl, "cloudctl", "", "cloudctl binary (default: build ./cmd/cloudctl)")
	flag.StringVar(&o.Dir, "dir", "", "directory for the agents' data and logs (default: a new temporary one, removed after)")
	flag.IntVar(&o.Servers, "servers", 3, "server agents")
	flag.IntVar(&o.Agents, "client-agents", 2, "fake-driver client agents")
	flag.IntVar(&o.SimHosts, "sim-hosts", 4, "simulated hosts behind each client agent")
	flag.IntVar(&o.Projects, "projects", 50, "projects, each with a user and a token its clients share")
	flag.IntVar(&o.Clients, "clients", 1000, "concurrent API clients")
	flag.IntVar(&o.ChurnEvery, "churn-every", 10, "one client in this many boots and deletes servers; the rest read (0: none)")
	flag.DurationVar(&o.Think, "think", 2*time.Second, "mean pause between a client's calls")
	flag.DurationVar(&o.Duration, "duration", 60*time.Second, "how long to run the load (e.g. 30m)")
	flag.DurationVar(&o.SampleEvery, "sample", 10*time.Second, "how often to sample server memory")
	flag.StringVar(&o.DeletedRetention, "deleted-retention", "", "the servers' deleted_retention, e.g. 5m (default: theirs, 24h)")
	flag.StringVar(&o.EvalGCThreshold, "eval-gc-threshold", "", "the servers' eval_gc_threshold, e.g. 5m (default: theirs, 1h)")
	flag.StringVar(&o.IdempotencyKeyTTL, "idempotency-key-ttl", "", "the servers' idempotency_key_ttl, e.g. 5m (default: theirs, 1h)")
	keep := flag.Bool("keep", false, "keep the data dir")
	flag.Parse()
	if err := run(o, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(o loadtest.Options, keep bool) error {
	if o.Clients < 1 || o.Projects < 1 || o.Servers < 1 || o.Agents < 1 || o.Think <= 0 || o.Duration <= 0 || o.SampleEvery <= 0 {
		return fmt.Errorf("clients, projects, servers, client-agents, think, duration and sample must be positive")
	}
	if o.Dir == "" {
		dir, err := loadtest.DefaultDir()
		if err != nil {
			return err
		}
		o.Dir = dir
		if !keep {
			defer os.RemoveAll(dir)
		}
	}
	if o.Cloudctl == "" {
		o.Cloudctl = filepath.Join(o.Dir, "cloudctl")
		build := exec.Command("go", "build", "-o", o.Cloudctl, "./cmd/cloudctl")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build cloudctl (run from the repository root): %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return loadtest.Run(ctx, o)
}
