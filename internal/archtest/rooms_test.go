package archtest

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// httpAPIs are the packages that serve an HTTP API. They reach the
// servers over RPC and hypervisors through the agent that hosts them,
// so they import neither the servers' internals nor the hypervisor
// agent nor a concrete virt driver (virt's interfaces and errors are
// theirs to use).
var httpAPIs = []string{
	"agent/native", "agent/nova", "agent/glance", "agent/cinder", "agent/neutron", "agent/identity",
	"agent/s3", "agent/metadata", "agent/console", "agent/guest",
}

// apiBanned is what httpAPIs must not import.
var apiBanned = []string{"server", "fsm", "gossip", "command", "client", "agent"}

// apiAllowed are the exceptions to apiBanned: the metadata service
// answers the content the hypervisor agent writes on config drives; the
// native API shows the agent's own gossip pool (/v1/agent/members, as
// Nomad's) in gossip's member type; and the APIs share the agent's
// small edge helpers.
var apiAllowed = map[string][]string{
	"agent/metadata": {"client/instancedata"},
	"agent/native":   {"gossip"},
	"":               {"agent/identity", "agent/forward", "agent/console", "agent/guest"},
}

func TestHTTPAPIsImportNoServerClientOrDriver(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := relPath(p.ImportPath)
		if !isAPI(rel) {
			continue
		}
		for _, imp := range p.Imports {
			target, ours := ourPath(imp)
			if !ours || within(target, rel) || allowedFor(rel, target) {
				continue
			}
			for _, b := range apiBanned {
				if within(target, b) {
					t.Errorf("%s imports %s: an HTTP API may not import %s", p.ImportPath, imp, b)
				}
			}
		}
	}
}

// concreteDrivers are the virt drivers. Only virt/ (the drivers, their
// conformance suite and the registry that builds one by name) and test
// helpers name them; everything else sees virt.Driver.
var concreteDrivers = []string{"virt/fake", "virt/libvirt", "virt/vmware", "virt/ironic"}

func TestOnlyVirtNamesConcreteDrivers(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := relPath(p.ImportPath)
		if within(rel, "virt") || strings.HasSuffix(p.Name, "test") {
			continue
		}
		for _, imp := range p.Imports {
			target, ours := ourPath(imp)
			if !ours {
				continue
			}
			for _, d := range concreteDrivers {
				if within(target, d) {
					t.Errorf("%s imports the concrete driver %s: use virt's interfaces and errors (the registry is in virt/)", p.ImportPath, imp)
				}
			}
		}
	}
}

// TestAgentSubpackagesDoNotImportTheDaemon: the daemon (package agent)
// wires its subpackages together; none of them reaches back up.
func TestAgentSubpackagesDoNotImportTheDaemon(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := relPath(p.ImportPath)
		if !strings.HasPrefix(rel, "agent/") {
			continue
		}
		for _, imp := range p.Imports {
			if imp == module+"/agent" {
				t.Errorf("%s imports the daemon package agent", p.ImportPath)
			}
		}
	}
}

// mustNot finds where a package doc says what the package must not do.
var mustNot = regexp.MustCompile(`(?i)\b(must not|must never|never|may not)\b`)

// TestEveryPackageDocSaysWhatItMustNotDo reads each package's whole doc
// comment (go list gives only its first sentence): it names what the
// package owns, and what it must not do.
func TestEveryPackageDocSaysWhatItMustNotDo(t *testing.T) {
	for _, p := range listPackages(t) {
		doc := fullDoc(t, p)
		if doc == "" {
			continue // TestEveryPackageHasADocComment reports it
		}
		if !mustNot.MatchString(strings.Join(strings.Fields(doc), " ")) {
			t.Errorf("package %s's doc does not say what it must not do (\"must not …\")", p.ImportPath)
		}
	}
}

// fullDoc is the package's doc comment, from the file that has it.
func fullDoc(t *testing.T, p pkg) string {
	t.Helper()
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			return f.Doc.Text()
		}
	}
	return ""
}

func relPath(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}

// ourPath is an import path relative to the module, and whether it is
// one of ours.
func ourPath(imp string) (string, bool) {
	if !strings.HasPrefix(imp, module+"/") {
		return "", false
	}
	return strings.TrimPrefix(imp, module+"/"), true
}

// within reports whether rel is dir or below it.
func within(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

func isAPI(rel string) bool {
	for _, a := range httpAPIs {
		if within(rel, a) {
			return true
		}
	}
	return false
}

func allowedFor(rel, target string) bool {
	for _, key := range []string{rel, ""} {
		for _, a := range apiAllowed[key] {
			if within(target, a) {
				return true
			}
		}
	}
	return false
}
