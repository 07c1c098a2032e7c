package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// TestEndpointFilesNamedAfterEndpoint keeps each RPC endpoint easy to find:
// every exported method of an endpoint registered in registerEndpoints
// lives in <endpoint>_endpoint.go or <endpoint>_<topic>_endpoint.go, where
// <endpoint> is the endpoint's name in snake_case (KeyPair → key_pair, or
// keypair). A file belongs to the endpoint whose name is its longest prefix,
// so Instance methods in instance_group_endpoint.go are reported too.
func TestEndpointFilesNamedAfterEndpoint(t *testing.T) {
	fset := token.NewFileSet()
	endpoints := registeredEndpoints(t, fset)
	if len(endpoints) == 0 {
		t.Fatal("found no endpoints in registerEndpoints")
	}
	prefixes := map[string]string{} // file prefix → endpoint
	for name := range endpoints {
		prefixes[snakeCase(name)] = name
		prefixes[strings.ToLower(name)] = name
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		owner := fileEndpoint(name, prefixes)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			recv := receiverType(fn.Recv.List[0].Type)
			if !endpoints[recv] || recv == owner {
				continue
			}
			t.Errorf("%s.%s is in %s; want it in %s_endpoint.go or %s_<topic>_endpoint.go",
				recv, fn.Name.Name, name, snakeCase(recv), snakeCase(recv))
		}
	}
}

// registeredEndpoints reads the endpoint types out of the map literal in
// registerEndpoints, so a new endpoint is checked without touching this test.
func registeredEndpoints(t *testing.T, fset *token.FileSet) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(fset, "endpoints.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		if u, ok := kv.Value.(*ast.UnaryExpr); ok {
			if cl, ok := u.X.(*ast.CompositeLit); ok {
				if id, ok := cl.Type.(*ast.Ident); ok {
					found[id.Name] = true
				}
			}
		}
		return true
	})
	return found
}

// fileEndpoint names the endpoint an *_endpoint.go file belongs to: the one
// whose prefix is the longest match. Other files belong to none.
func fileEndpoint(file string, prefixes map[string]string) string {
	base, ok := strings.CutSuffix(filepath.Base(file), "_endpoint.go")
	if !ok {
		return ""
	}
	keys := make([]string, 0, len(prefixes))
	for p := range prefixes {
		keys = append(keys, p)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, p := range keys {
		if base == p || strings.HasPrefix(base, p+"_") {
			return prefixes[p]
		}
	}
	return ""
}

func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// snakeCase turns an endpoint name into its file prefix: "ImageCache" →
// "image_cache", "CA" → "ca", "S3" → "s3".
func snakeCase(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if unicode.IsUpper(r) && i > 0 && !unicode.IsUpper(runes[i-1]) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
