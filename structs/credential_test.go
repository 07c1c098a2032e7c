package structs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCredentialCarrierIsCredentialed parses this package: a struct
// with an AuthToken field of its own must have the Credentialed methods
// (the edges stamp tokens only through them), and no struct may embed
// both QueryOptions and WriteRequest (its methods would be ambiguous and
// it would silently stop being Credentialed).
func TestEveryCredentialCarrierIsCredentialed(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	owners := map[string]bool{}
	methods := map[string]map[string]bool{}
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				star, ok := d.Recv.List[0].Type.(*ast.StarExpr)
				if !ok {
					continue
				}
				if id, ok := star.X.(*ast.Ident); ok {
					if methods[id.Name] == nil {
						methods[id.Name] = map[string]bool{}
					}
					methods[id.Name][d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					embeds := map[string]bool{}
					for _, field := range st.Fields.List {
						if len(field.Names) == 0 {
							if id, ok := field.Type.(*ast.Ident); ok {
								embeds[id.Name] = true
							}
						}
						for _, n := range field.Names {
							if n.Name == "AuthToken" {
								owners[ts.Name.Name] = true
							}
						}
					}
					if embeds["QueryOptions"] && embeds["WriteRequest"] {
						t.Errorf("%s embeds both QueryOptions and WriteRequest", ts.Name.Name)
					}
				}
			}
		}
	}
	if len(owners) < 6 {
		t.Fatalf("found only %d types with an AuthToken field: the parse is broken", len(owners))
	}
	for name := range owners {
		if !methods[name]["AuthTokenValue"] || !methods[name]["SetAuthToken"] {
			t.Errorf("%s has an AuthToken field but not the Credentialed methods", name)
		}
	}
	var _ Credentialed = &InstanceCreateRequest{}
	var _ Credentialed = &InstanceListRequest{}
}
