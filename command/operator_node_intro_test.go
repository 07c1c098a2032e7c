package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// TestOperatorNodeIntroCreate issues introductions from a real agent:
// the token alone on a line, or with its host and expiry in -json; a
// TTL that is not positive is a usage error.
func TestOperatorNodeIntroCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	readyDevAgent(t)
	out := strings.TrimSpace(runOK(t, "operator", "node-intro", "create"))
	if !strings.HasPrefix(out, "v2.") || strings.Contains(out, "\n") {
		t.Fatalf("the token alone: %q", out)
	}
	var got api.NodeIntro
	raw := runOK(t, "operator", "node-intro", "create", "-host", "hv-7", "-ttl", "10m", "-json")
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("-json: %v %q", err, raw)
	}
	if got.HostName != "hv-7" || !strings.HasPrefix(got.Token, "v2.") {
		t.Fatalf("-json: %+v", got)
	}
	if d := time.Until(got.ExpiresAt); d <= 0 || d > 10*time.Minute {
		t.Fatalf("expires in %s", d)
	}
	if _, _, code := run(t, "operator", "node-intro", "create", "-ttl", "0s"); code == 0 {
		t.Fatal("-ttl 0s accepted")
	}
	if _, _, code := run(t, "operator", "node-intro", "create", "-ttl", "400h"); code == 0 {
		t.Fatal("a TTL over the maximum accepted")
	}
}
