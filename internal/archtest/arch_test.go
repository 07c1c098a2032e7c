package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/stratus-cloud/stratus"

type pkg struct {
	ImportPath string
	Dir        string
	Doc        string
	Imports    []string
	Name       string
	GoFiles    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(out)
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no doc comment saying what it owns and must not do", p.ImportPath)
		}
	}
}

// forbidden maps a package (and its subpackages) to the packages of
// ours it must not import, from DESIGN.md's package table.
var forbidden = map[string][]string{
	"structs": {""}, // the leaf: nothing of ours at all
	"api":     {""}, // the public client: its own types only
	"fsm":     {"server", "agent", "client", "rpc", "gossip", "command", "virt"},
	"rpc":     {"server", "agent", "client", "fsm", "command", "virt"},
	"gossip":  {"server", "agent", "client", "fsm", "rpc", "command", "virt"},
	"server":  {"agent", "client", "command", "virt", "api"},
	"virt":    {"server", "fsm", "rpc", "agent", "client", "command"},
	"command": {"fsm", "server", "client"},
	// The hypervisor agent reaches the servers through an RPC interface
	// it is given, and never the HTTP APIs: it depends on nothing above
	// it.
	"client": {"agent", "server", "fsm", "gossip", "command", "api"},
	// The routing kit knows HTTP, policy and error kinds, nothing that
	// serves or runs.
	"internal/route": {"agent", "server", "fsm", "client", "rpc", "gossip", "command", "virt"},
	// The HCL instance spec parser works on local input only: it must
	// not talk to servers.
	"spec": {"server", "fsm", "rpc", "gossip", "agent", "api", "command", "virt", "imagestore"},
	// The image store keeps files; records and replication are the
	// server's.
	"imagestore": {""},
	// The certificate authority builds PEM in memory only.
	"tlsutil": {""},
	// The web UI knows the APIs only over HTTP, as a browser does.
	"agent/ui": {""},
}

func TestForbiddenImports(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for owner, banned := range forbidden {
			if rel != owner && !strings.HasPrefix(rel, owner+"/") {
				continue
			}
			for _, imp := range p.Imports {
				if !strings.HasPrefix(imp, module+"/") {
					continue
				}
				target := strings.TrimPrefix(imp, module+"/")
				for _, b := range banned {
					if b == "" || target == b || strings.HasPrefix(target, b+"/") {
						// A package tree may import itself.
						if target == owner || strings.HasPrefix(target, owner+"/") {
							continue
						}
						t.Errorf("%s imports %s, which DESIGN.md forbids", p.ImportPath, imp)
					}
				}
			}
		}
	}
}

// testOnly are packages only tests may import: simulators and fakes of
// the systems drivers talk to. A package may import them only from its
// _test.go files, or if it is itself a test helper (its name ends in
// "test").
var testOnly = []string{
	"github.com/vmware/govmomi/simulator",
	module + "/virt/ironic/ironictest",
	// docgen rewrites the website's pages; only doc tests use it.
	module + "/internal/docgen",
}

func TestTestOnlyImports(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.HasSuffix(p.Name, "test") {
			continue
		}
		for _, imp := range p.Imports {
			for _, banned := range testOnly {
				if imp == banned || strings.HasPrefix(imp, banned+"/") {
					t.Errorf("%s imports %s, which only tests may import", p.ImportPath, imp)
				}
			}
		}
	}
}
