package spec

import (
	"errors"
	"os"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// FuzzParse feeds the parser arbitrary specs: it must never panic, every
// error must be diagnostics, and a spec it accepts must be valid and
// canonical. The seed corpus is under testdata/fuzz/FuzzParse; the test
// target of the GNUmakefile runs a short fuzzing session.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/web.hcl", "testdata/minimal.hcl", "testdata/functions.hcl"} {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	readFile := func(path string) ([]byte, error) {
		if path == "testdata/cloud-init.yaml" {
			return []byte("#cloud-config\n"), nil
		}
		return nil, os.ErrNotExist
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 64<<10 {
			return
		}
		spec, err := Parse("fuzz.hcl", src, &Options{BaseDir: "testdata", ReadFile: readFile, Vars: nil})
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if !perr.Diags.HasErrors() {
				t.Fatalf("an *Error without errors: %v", perr.Diags)
			}
			for _, d := range perr.Diags {
				if d.Severity == hcl.DiagError && d.Summary == "" {
					t.Fatalf("an error without a summary: %#v", d)
				}
			}
			_ = err.Error()
			return
		}
		if spec == nil {
			t.Fatal("no spec and no error")
		}
		if verr := spec.Validate(); verr != nil {
			t.Fatalf("accepted an invalid spec: %v", verr)
		}
		c := spec.Copy()
		c.Canonicalize()
		if !c.Equal(spec) {
			t.Fatalf("accepted a spec that is not canonical: %+v", spec)
		}
	})
}
