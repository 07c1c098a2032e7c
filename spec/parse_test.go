package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/stratus-cloud/stratus/structs"
)

func TestParseValidSpecs(t *testing.T) {
	cloudInit, err := os.ReadFile("testdata/cloud-init.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		file string
		opts *Options
		want *structs.InstanceGroupSpec
	}{
		{"full example", "testdata/web.hcl", nil, &structs.InstanceGroupSpec{
			Name: "web", Count: 3, Flavor: "m1.small", Image: "debian-12", AZ: "nova", KeyName: "ops",
			Metadata: map[string]string{"role": "web", "env": "prod"}, UserData: string(cloudInit),
			Networks:    []*structs.GroupNetwork{{Name: "private"}},
			Placement:   &structs.GroupPlacement{Policy: "anti-affinity"},
			Constraints: []*structs.Constraint{{Attribute: "host.arch", Operator: "=", Value: "x86_64"}},
			Update:      &structs.GroupUpdate{MaxParallel: 1, HealthCheck: "active", MinHealthyTime: 10 * time.Second},
		}},
		{"var file, -var and environment", "testdata/web.hcl", &Options{
			VarFiles: []string{"testdata/vars.hcl"},
			Vars:     []string{"count=4", `extra_meta={tier = "front"}`},
			Env:      []string{"CLOUDCTL_VAR_env=ignored-by-var-file", "CLOUDCTL_VAR_nope=x", "HOME=/root"},
		}, &structs.InstanceGroupSpec{
			Name: "web", Count: 4, Flavor: "m1.small", Image: "debian-12", AZ: "nova", KeyName: "ops",
			Metadata: map[string]string{"role": "web", "env": "staging", "tier": "front"}, UserData: string(cloudInit),
			Networks:    []*structs.GroupNetwork{{Name: "private"}},
			Placement:   &structs.GroupPlacement{Policy: "anti-affinity"},
			Constraints: []*structs.Constraint{{Attribute: "host.arch", Operator: "=", Value: "x86_64"}},
			Update:      &structs.GroupUpdate{MaxParallel: 1, HealthCheck: "active", MinHealthyTime: 10 * time.Second},
		}},
		{"environment", "testdata/web.hcl", &Options{Env: []string{"CLOUDCTL_VAR_env=qa"}}, &structs.InstanceGroupSpec{
			Name: "web", Count: 3, Flavor: "m1.small", Image: "debian-12", AZ: "nova", KeyName: "ops",
			Metadata: map[string]string{"role": "web", "env": "qa"}, UserData: string(cloudInit),
			Networks:    []*structs.GroupNetwork{{Name: "private"}},
			Placement:   &structs.GroupPlacement{Policy: "anti-affinity"},
			Constraints: []*structs.Constraint{{Attribute: "host.arch", Operator: "=", Value: "x86_64"}},
			Update:      &structs.GroupUpdate{MaxParallel: 1, HealthCheck: "active", MinHealthyTime: 10 * time.Second},
		}},
		{"defaults", "testdata/minimal.hcl", nil, &structs.InstanceGroupSpec{
			Name: "db", Count: 1, Flavor: "m1.tiny", Image: "cirros",
			Update: &structs.GroupUpdate{MaxParallel: 1, HealthCheck: "active", MinHealthyTime: 10 * time.Second},
		}},
		{"functions", "testdata/functions.hcl", nil, &structs.InstanceGroupSpec{
			Name: "api", Count: 3, Flavor: "m1.tiny", Image: "ubuntu-24.04",
			Metadata: map[string]string{"zones": "a,b,c", "name": "API-2", "b64": "aGk="},
			UserData: `{"hostname":"api-2"}`,
			Constraints: []*structs.Constraint{
				{Attribute: "host.name", Operator: "regexp", Value: "^cmp-"},
				{Attribute: "host.hypervisor_version", Operator: "version", Value: ">= 8.0"},
			},
			Update: &structs.GroupUpdate{MaxParallel: 2, HealthCheck: "none", MinHealthyTime: 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseFile(c.file, c.opts)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %s\nwant %s", dump(got), dump(c.want))
			}
			if err := got.Validate(); err != nil {
				t.Errorf("a parsed spec does not validate: %v", err)
			}
		})
	}
}

func dump(s *structs.InstanceGroupSpec) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(strings.TrimSpace(
		strings.Join([]string{s.Name, s.Flavor, s.Image, s.AZ, s.KeyName, s.UserData}, "|")), "\n", `\n`))
	b.WriteString(" meta=" + strings.Join(sortedPairs(s.Metadata), ","))
	for _, n := range s.Networks {
		b.WriteString(" net=" + n.Name + "/" + n.FixedIP)
	}
	if s.Placement != nil {
		b.WriteString(" placement=" + s.Placement.Policy)
	}
	b.WriteString(" constraints=" + structs.ConstraintsString(s.Constraints))
	if s.Update != nil {
		b.WriteString(" update=" + s.Update.HealthCheck + "/" + s.Update.MinHealthyTime.String())
	}
	return b.String()
}

func sortedPairs(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// want is one expected diagnostic: where, and words of its summary and
// detail.
type want struct {
	file      string
	line, col int
	summary   string
	detail    string
}

func TestParseErrors(t *testing.T) {
	const head = "instance \"web\" {\n  flavor = \"m1.tiny\"\n  image  = \"cirros\"\n"
	cases := []struct {
		name string
		src  string
		opts *Options
		want []want
	}{
		{"syntax error", "instance \"web\" {\n  flavor = \n}\n", nil,
			[]want{{"web.hcl", 2, 12, "Invalid expression", ""}}},
		{"unknown attribute", head + "  colour = \"red\"\n}\n", nil,
			[]want{{"web.hcl", 4, 3, "Unsupported argument", `"colour" is not expected`}}},
		{"unknown block", head + "  volume \"data\" {}\n}\n", nil,
			[]want{{"web.hcl", 4, 3, "Unsupported block type", `"volume" are not expected`}}},
		{"unknown top-level block", "job \"web\" {}\n", nil,
			[]want{{"web.hcl", 1, 1, "Unsupported block type", `"job" are not expected`}}},
		{"unknown attribute in a nested block", head + "  update {\n    canary = 1\n  }\n}\n", nil,
			[]want{{"web.hcl", 5, 5, "Unsupported argument", `"canary" is not expected`}}},
		{"wrong type", head + "  count = \"three\"\n}\n", nil,
			[]want{{"web.hcl", 4, 12, "Unsuitable value type", "a number is required"}}},
		{"wrong type of metadata", head + "  metadata = [\"a\"]\n}\n", nil,
			[]want{{"web.hcl", 4, 14, "Unsuitable value type", "map of string required"}}},
		{"fractional count", head + "  count = 1.5\n}\n", nil,
			[]want{{"web.hcl", 4, 11, "Unsuitable value type", "whole number"}}},
		{"missing required attribute", "instance \"web\" {\n  flavor = \"m1.tiny\"\n}\n", nil,
			[]want{{"web.hcl", 1, 16, "Missing required argument", `"image" is required`}}},
		{"missing required attribute in a block", head + "  placement {}\n}\n", nil,
			[]want{{"web.hcl", 4, 13, "Missing required argument", `"policy" is required`}}},
		{"duplicate placement", head + "  placement { policy = \"affinity\" }\n  placement { policy = \"affinity\" }\n}\n", nil,
			[]want{{"web.hcl", 5, 3, "Duplicate placement block", ""}}},
		{"no instance block", "locals {\n  a = 1\n}\n", nil,
			[]want{{"web.hcl", 1, 1, "Missing instance block", ""}}},
		{"two instance blocks", head + "}\ninstance \"db\" {\n  flavor = \"m1.tiny\"\n  image = \"cirros\"\n}\n", nil,
			[]want{{"web.hcl", 5, 1, "Duplicate instance block", `"web" is declared at web.hcl:1`}}},
		{"invalid group name", "instance \"web server\" {\n  flavor = \"m1.tiny\"\n  image = \"cirros\"\n}\n", nil,
			[]want{{"web.hcl", 1, 10, "Invalid instance group name", ""}}},
		{"negative count", head + "  count = -1\n}\n", nil,
			[]want{{"web.hcl", 4, 11, "Invalid count", "between 0 and 1000"}}},
		{"bad placement policy", head + "  placement {\n    policy = \"spread\"\n  }\n}\n", nil,
			[]want{{"web.hcl", 5, 14, "Invalid placement policy", `not "spread"`}}},
		{"max_per_host without anti-affinity", head + "  placement {\n    policy = \"affinity\"\n    max_per_host = 2\n  }\n}\n", nil,
			[]want{{"web.hcl", 6, 20, "Invalid max_per_host", "anti-affinity"}}},
		{"bad duration", head + "  update {\n    min_healthy_time = \"10 seconds\"\n  }\n}\n", nil,
			[]want{{"web.hcl", 5, 24, "Invalid duration", `"10 seconds"`}}},
		{"bad health check", head + "  update {\n    health_check = \"http\"\n  }\n}\n", nil,
			[]want{{"web.hcl", 5, 20, "Invalid health_check", `not "http"`}}},
		{"bad constraint attribute", head + "  constraint {\n    attribute = \"arch\"\n    value = \"x86_64\"\n  }\n}\n", nil,
			[]want{{"web.hcl", 5, 17, "Invalid constraint attribute", "host.<key>"}}},
		{"bad constraint operator", head + "  constraint {\n    attribute = \"host.arch\"\n    operator = \"~\"\n    value = \"x\"\n  }\n}\n", nil,
			[]want{{"web.hcl", 6, 16, "Invalid constraint operator", `not "~"`}}},
		{"bad constraint regexp", head + "  constraint {\n    attribute = \"host.name\"\n    operator = \"regexp\"\n    value = \"(\"\n  }\n}\n", nil,
			[]want{{"web.hcl", 7, 13, "Invalid regular expression", "missing closing )"}}},
		{"constraint without value", head + "  constraint {\n    attribute = \"host.arch\"\n  }\n}\n", nil,
			[]want{{"web.hcl", 4, 3, "Missing required argument", "needs a value"}}},
		{"duplicate network", head + "  network \"a\" {}\n  network \"a\" {}\n}\n", nil,
			[]want{{"web.hcl", 5, 3, "Duplicate network", `"a"`}}},
		{"unknown function", head + "  key_name = nope(\"x\")\n}\n", nil,
			[]want{{"web.hcl", 4, 14, "Call to unknown function", `no function named "nope"`}}},
		{"wrong number of arguments", head + "  key_name = upper(\"a\", \"b\")\n}\n", nil,
			[]want{{"web.hcl", 4, 26, "Too many function arguments", ""}}},
		{"wrong argument type", head + "  key_name = join(\",\", \"a\")\n}\n", nil,
			[]want{{"web.hcl", 4, 25, "Invalid function argument", "list of string required"}}},
		{"file that does not exist", head + "  user_data = file(\"nope.yaml\")\n}\n", nil,
			[]want{{"web.hcl", 4, 15, "Error in function call", "cannot read testdata/nope.yaml"}}},
		{"reference to an undeclared variable", head + "  key_name = var.key\n}\n", nil,
			[]want{{"web.hcl", 4, 17, "Unsupported attribute", `an attribute named "key"`}}},
		{"reference to an undeclared local", head + "  key_name = local.key\n}\n", nil,
			[]want{{"web.hcl", 4, 19, "Unsupported attribute", `an attribute named "key"`}}},
		{"variable default of the wrong type", "variable \"n\" {\n  type = number\n  default = \"many\"\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 3, 13, "Invalid value for variable", "not a number"}}},
		{"invalid variable type", "variable \"n\" {\n  type = integer\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 2, 10, "Invalid type specification", `"integer" is not a valid type`}}},
		{"unknown attribute in a variable", "variable \"n\" {\n  type = number\n  sensitive = true\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 3, 3, "Unsupported argument", `"sensitive" is not expected`}}},
		{"duplicate variable", "variable \"n\" {}\nvariable \"n\" {}\n" + head + "}\n", &Options{Vars: []string{"n=1"}},
			[]want{{"web.hcl", 2, 1, "Duplicate variable", "already declared at web.hcl:1"}}},
		{"required variable without a value", "variable \"env\" {\n  type = string\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 1, 1, "No value for required variable", "-var 'env=…'"}}},
		{"variable in a default", "variable \"a\" {\n  default = var.b\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 2, 13, "Variables not allowed", ""}}},
		{"failed validation", "variable \"n\" {\n  type = number\n  default = 20\n  validation {\n    condition = var.n < 10\n    error_message = \"Fewer than 10, please.\"\n  }\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 5, 17, "Invalid value for variable", "Fewer than 10, please"}}},
		{"validation of another variable", "variable \"a\" {\n  default = 1\n}\nvariable \"n\" {\n  default = 1\n  validation {\n    condition = var.a > 0\n    error_message = \"x\"\n  }\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 7, 17, "Invalid validation condition", "only to var.n"}}},
		{"cycle in locals", "locals {\n  a = local.b\n  b = local.a\n}\n" + head + "}\n", nil,
			[]want{{"web.hcl", 2, 3, "Cycle in local values", "local.a"}}},
		{"undeclared -var", head + "}\n", &Options{Vars: []string{"region=eu"}},
			[]want{{"", 0, 0, "Undeclared variable", `"region" with -var`}}},
		{"-var without a value", head + "}\n", &Options{Vars: []string{"region"}},
			[]want{{"", 0, 0, "Invalid -var option", "NAME=VALUE"}}},
		{"-var of the wrong type", "variable \"n\" {\n  type = number\n}\n" + head + "}\n", &Options{Vars: []string{"n=lots"}},
			[]want{{"", 0, 0, "Invalid value for variable", "not a number"}}},
		{"-var that is not an expression", "variable \"n\" {\n  type = list(string)\n}\n" + head + "}\n", &Options{Vars: []string{"n=[a"}},
			[]want{{"<value for var.n>", 1, 1, "", ""}}},
		{"var file setting an undeclared variable", head + "}\n", &Options{VarFiles: []string{"testdata/vars.hcl"}},
			[]want{{"testdata/vars.hcl", 1, 1, "Undeclared variable", `"count"`}, {"testdata/vars.hcl", 2, 1, "Undeclared variable", `"env"`}}},
		{"missing var file", head + "}\n", &Options{VarFiles: []string{"testdata/nope.hcl"}},
			[]want{{"", 0, 0, "Cannot read var file", "nope.hcl"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			if opts == nil {
				opts = &Options{}
			}
			if opts.BaseDir == "" {
				opts.BaseDir = "testdata"
			}
			spec, err := Parse("web.hcl", []byte(c.src), opts)
			if err == nil {
				t.Fatalf("parsed: %+v", spec)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("not an *Error: %T %v", err, err)
			}
			var errs hcl.Diagnostics
			for _, d := range perr.Diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != len(c.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(errs), len(c.want), perr)
			}
			for i, w := range c.want {
				d := errs[i]
				var file string
				var line, col int
				if d.Subject != nil {
					file, line, col = d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column
				}
				if file != w.file || line != w.line || col != w.col {
					t.Errorf("error %d at %s:%d:%d, want %s:%d:%d: %s", i, file, line, col, w.file, w.line, w.col, FormatDiagnostic(d))
				}
				if !strings.Contains(d.Summary, w.summary) || !strings.Contains(d.Detail, w.detail) {
					t.Errorf("error %d is %q / %q, want %q / %q", i, d.Summary, d.Detail, w.summary, w.detail)
				}
			}
			if w := c.want[0]; w.file != "" && !strings.HasPrefix(err.Error(), w.file+":") {
				t.Errorf("Error() does not start with the position: %q", err.Error())
			}
		})
	}
}

func TestErrorRendersSource(t *testing.T) {
	_, err := Parse("web.hcl", []byte("instance \"web\" {\n  flavor = \"m1.tiny\"\n  image  = \"cirros\"\n  colour = \"red\"\n}\n"), nil)
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("%T %v", err, err)
	}
	if got, want := err.Error(), `web.hcl:4:3: Unsupported argument: An argument named "colour" is not expected here`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var b strings.Builder
	if werr := perr.WriteTo(&b, 0, false); werr != nil {
		t.Fatal(werr)
	}
	for _, s := range []string{"Error: Unsupported argument", "on web.hcl line 4", `colour = "red"`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("rendered error lacks %q:\n%s", s, b.String())
		}
	}
}

func TestFileIsRelativeToTheSpec(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "init.sh"), []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "web.hcl")
	src := "instance \"web\" {\n  flavor = \"m1.tiny\"\n  image = \"cirros\"\n  user_data = file(\"init.sh\")\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ParseFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.UserData != "#!/bin/sh\n" {
		t.Errorf("user_data %q", s.UserData)
	}
	// Binary files are refused, with the position of the call.
	if err := os.WriteFile(filepath.Join(dir, "init.sh"), []byte{0xff, 0xfe}, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(path, nil); err == nil || !strings.Contains(err.Error(), "web.hcl:4:15: Error in function call") || !strings.Contains(err.Error(), "not UTF-8") {
		t.Errorf("binary file: %v", err)
	}
	if _, err := ParseFile(filepath.Join(dir, "nope.hcl"), nil); err == nil || !strings.Contains(err.Error(), "Cannot read the spec") {
		t.Errorf("missing spec: %v", err)
	}
}
