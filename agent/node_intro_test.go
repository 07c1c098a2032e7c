package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestIntroTokenSources: a client agent without a server introduces its
// hosts with client { intro_token }, else the file intro_token_file
// names (read at each attempt), else $STRATUS_INTRO_TOKEN.
func TestIntroTokenSources(t *testing.T) {
	t.Setenv(IntroTokenEnv, " from-env\n")
	file := filepath.Join(t.TempDir(), "intro")
	a := &Agent{config: &Config{Client: &ClientConfig{}}, logger: hclog.NewNullLogger()}
	if got := a.introToken("hv"); got != "from-env" {
		t.Fatalf("environment: %q", got)
	}
	a.config.Client.IntroTokenFile = file
	if got := a.introToken("hv"); got != "" {
		t.Fatalf("a file not written yet: %q", got)
	}
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := a.introToken("hv"); got != "from-file" {
		t.Fatalf("file: %q", got)
	}
	a.config.Client.IntroToken = "from-config"
	if got := a.introToken("hv"); got != "from-config" {
		t.Fatalf("config: %q", got)
	}
}
