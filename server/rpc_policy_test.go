package server

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/rpc"
)

// registeredMethods are the RPC methods and the streams a server
// serves, from the RPC server's own registry.
func registeredMethods(t *testing.T) []string {
	t.Helper()
	s := &Server{rpcServer: rpc.NewServer(rpc.ServerConfig{})}
	if err := s.registerEndpoints(); err != nil {
		t.Fatal(err)
	}
	if err := s.registerStreams(); err != nil {
		t.Fatal(err)
	}
	methods := s.rpcServer.Methods()
	if len(methods) < 100 {
		t.Fatalf("only %d methods registered: %v", len(methods), methods)
	}
	streams := s.rpcServer.StreamMethods()
	if len(streams) < 4 {
		t.Fatalf("only %d streams registered: %v", len(streams), streams)
	}
	return append(methods, streams...)
}

// TestEveryRPCMethodHasARule fails when an endpoint gains a method (or
// the server a stream) without a rule in rpcRules, or a rule names no
// method.
func TestEveryRPCMethodHasARule(t *testing.T) {
	registered := map[string]bool{}
	for _, m := range registeredMethods(t) {
		registered[m] = true
		if _, ok := rpcRules[m]; !ok {
			t.Errorf("RPC method or stream %s has no rule in rpcRules (server/rpc_policy.go): say who may call it", m)
		}
	}
	for m, r := range rpcRules {
		if !registered[m] {
			t.Errorf("rpcRules has a rule for %s, which no endpoint serves", m)
		}
		if r.nodeCheck != nil && r.node != nodeOwn || r.nodeFilter != nil && r.node != nodeOwn {
			t.Errorf("%s: a node check or filter needs node: nodeOwn", m)
		}
		if r.self && r.userCheck == nil {
			t.Errorf("%s: a self rule needs a userCheck to decide", m)
		}
	}
}

// renderRPCPolicy is the rule table as a Markdown table, by method.
func renderRPCPolicy() string {
	methods := make([]string, 0, len(rpcRules))
	for m := range rpcRules {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	var b strings.Builder
	b.WriteString("| RPC method | who may call it |\n| --- | --- |\n")
	for _, m := range methods {
		fmt.Fprintf(&b, "| `%s` | %s |\n", m, rpcRules[m].describe())
	}
	return b.String()
}

// TestRPCPolicyIsDocumented keeps website/policy.md's RPC table equal
// to rpcRules; STRATUS_UPDATE_DOCS=1 rewrites it.
func TestRPCPolicyIsDocumented(t *testing.T) {
	if err := docgen.Sync(filepath.Join("..", "website", "policy.md"), "rpc-policy", renderRPCPolicy()); err != nil {
		t.Error(err)
	}
}
