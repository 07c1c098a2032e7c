package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// runner runs the host's networking commands, inside a network
// namespace when netns is set (through `ip netns exec`).
type runner struct {
	netns string
}

// command builds the command line for name and args.
func (r runner) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if r.netns != "" {
		return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", r.netns, name}, args...)...)
	}
	return exec.CommandContext(ctx, name, args...)
}

// run runs a command and returns its standard output; a failure's
// error carries the command and its standard error.
func (r runner) run(ctx context.Context, name string, args ...string) (string, error) {
	return r.runInput(ctx, nil, name, args...)
}

// runInput is run with stdin.
func (r runner) runInput(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cmd := r.command(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.String(), nil
}

// Tools lists the commands the dataplane needs; Missing says which of
// them are not installed.
var Tools = []string{"ip", "bridge", "nft", "dnsmasq", "sysctl"}

// Missing returns the tools of Tools not found on PATH.
func Missing() []string {
	var out []string
	for _, t := range Tools {
		if _, err := exec.LookPath(t); err != nil {
			out = append(out, t)
		}
	}
	return out
}
