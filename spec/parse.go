package spec

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"

	"github.com/stratus-cloud/stratus/structs"
)

// EnvVarPrefix starts the environment variables that set a spec's
// variables: CLOUDCTL_VAR_region=eu sets var.region.
const EnvVarPrefix = "CLOUDCTL_VAR_"

// maxSpecSize bounds a spec or var file.
const maxSpecSize = 4 << 20

// Options are the inputs of a parse besides the spec itself.
type Options struct {
	// Vars are -var assignments, "NAME=VALUE", applied in order after
	// the var files. A VALUE of a variable whose type is not string is
	// read as an HCL expression (count=3, zones=["a","b"]).
	Vars []string
	// VarFiles are -var-file paths (HCL files of NAME = VALUE), applied
	// in order after the environment.
	VarFiles []string
	// Env is the environment to read CLOUDCTL_VAR_NAME from, applied
	// after the defaults; nil reads none.
	Env []string
	// BaseDir is the directory relative file() paths start from; it
	// defaults to the spec file's directory.
	BaseDir string
	// ReadFile reads var files and file()'s files; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
}

// Error is a parse's failure: HCL diagnostics with the sources they
// point into.
type Error struct {
	Diags hcl.Diagnostics
	Files map[string]*hcl.File
}

// Error renders each diagnostic as "file:line:column: summary: detail".
func (e *Error) Error() string {
	var lines []string
	for _, d := range e.Diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		lines = append(lines, FormatDiagnostic(d))
	}
	return strings.Join(lines, "\n")
}

// FormatDiagnostic renders one diagnostic on one line.
func FormatDiagnostic(d *hcl.Diagnostic) string {
	msg := d.Summary
	if d.Detail != "" {
		msg += ": " + strings.TrimSuffix(d.Detail, ".")
	}
	if d.Subject == nil {
		return msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
}

// WriteTo writes the diagnostics with the source lines they point at,
// as Terraform and Nomad show them.
func (e *Error) WriteTo(w io.Writer, width uint, color bool) error {
	return hcl.NewDiagnosticTextWriter(w, e.Files, width, color).WriteDiagnostics(e.Diags)
}

// ParseFile reads and parses the spec at path.
func ParseFile(path string, opts *Options) (*structs.InstanceGroupSpec, error) {
	o := options(opts)
	if opts == nil || opts.BaseDir == "" {
		o.BaseDir = filepath.Dir(path)
	}
	src, err := o.ReadFile(path)
	if err != nil {
		return nil, &Error{Diags: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the spec",
			Detail: err.Error()}}}
	}
	return Parse(path, src, o)
}

func options(opts *Options) *Options {
	o := &Options{}
	if opts != nil {
		c := *opts
		o = &c
	}
	if o.ReadFile == nil {
		o.ReadFile = os.ReadFile
	}
	if o.BaseDir == "" {
		o.BaseDir = "."
	}
	return o
}

// Parse parses a spec's source; filename names it in diagnostics.
func Parse(filename string, src []byte, opts *Options) (*structs.InstanceGroupSpec, error) {
	p := &parser{opts: options(opts), hp: hclparse.NewParser()}
	spec := p.parse(filename, src)
	if p.diags.HasErrors() {
		return nil, &Error{Diags: dedupe(p.diags), Files: p.hp.Files()}
	}
	return spec, nil
}

// dedupe drops the "value must be known" diagnostics HCL adds after
// an error it already reported: a spec has no unknown values of its own,
// so an unknown value is what a failed expression leaves behind.
func dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	out := diags[:0:0]
	for _, d := range diags {
		if strings.Contains(d.Detail, "must be known") {
			continue
		}
		out = append(out, d)
	}
	if !out.HasErrors() {
		return diags
	}
	return out
}

type parser struct {
	opts  *Options
	hp    *hclparse.Parser
	diags hcl.Diagnostics
	vars  map[string]*variable
	ctx   *hcl.EvalContext
}

func (p *parser) add(diags hcl.Diagnostics) bool {
	p.diags = append(p.diags, diags...)
	return !diags.HasErrors()
}

func (p *parser) errorf(subject *hcl.Range, summary, format string, args ...any) {
	p.diags = append(p.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
		Detail: fmt.Sprintf(format, args...), Subject: subject})
}

var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
		{Type: "instance", LabelNames: []string{"name"}},
	},
}

func (p *parser) parse(filename string, src []byte) *structs.InstanceGroupSpec {
	if len(src) > maxSpecSize {
		p.errorf(nil, "Spec too large", "%s is %d bytes; a spec may have at most %d", filename, len(src), maxSpecSize)
		return nil
	}
	file, diags := p.hp.ParseHCL(src, filename)
	if !p.add(diags) {
		return nil
	}
	content, diags := file.Body.Content(rootSchema)
	if !p.add(diags) {
		return nil
	}
	var instances []*hcl.Block
	var locals []*hcl.Block
	var varBlocks []*hcl.Block
	for _, b := range content.Blocks {
		switch b.Type {
		case "variable":
			varBlocks = append(varBlocks, b)
		case "locals":
			locals = append(locals, b)
		case "instance":
			instances = append(instances, b)
		}
	}
	p.ctx = &hcl.EvalContext{Functions: functions(p.opts.ReadFile, p.opts.BaseDir), Variables: map[string]cty.Value{}}
	if !p.variables(varBlocks) {
		return nil
	}
	if !p.locals(locals) {
		return nil
	}
	switch len(instances) {
	case 0:
		start := hcl.Pos{Line: 1, Column: 1}
		p.errorf(&hcl.Range{Filename: filename, Start: start, End: start}, "Missing instance block",
			`A spec declares one instance group in an instance "NAME" { … } block`)
		return nil
	case 1:
	default:
		p.errorf(instances[1].DefRange.Ptr(), "Duplicate instance block",
			"A spec declares one instance group; %q is declared at %s", instances[0].Labels[0], instances[0].DefRange)
		return nil
	}
	return p.instance(instances[0])
}

// varsObject is the var object expressions see.
func (p *parser) varsObject() cty.Value {
	vals := map[string]cty.Value{}
	for name, v := range p.vars {
		vals[name] = v.value
	}
	return cty.ObjectVal(vals)
}

// locals evaluates the locals blocks in dependency order.
func (p *parser) locals(blocks []*hcl.Block) bool {
	attrs := map[string]*hcl.Attribute{}
	for _, b := range blocks {
		as, diags := b.Body.JustAttributes()
		if !p.add(diags) {
			return false
		}
		for name, a := range as {
			if prev, dup := attrs[name]; dup {
				p.errorf(a.NameRange.Ptr(), "Duplicate local value", "A local value named %q was already defined at %s", name, prev.NameRange)
				return false
			}
			attrs[name] = a
		}
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	done := map[string]cty.Value{}
	p.ctx.Variables["local"] = cty.EmptyObjectVal
	for len(done) < len(attrs) {
		progress := false
		for _, name := range names {
			if _, ok := done[name]; ok {
				continue
			}
			a := attrs[name]
			ready := true
			for _, tr := range a.Expr.Variables() {
				if tr.RootName() != "local" || len(tr) < 2 {
					continue
				}
				if step, ok := tr[1].(hcl.TraverseAttr); ok {
					if _, known := attrs[step.Name]; known {
						if _, ok := done[step.Name]; !ok {
							ready = false
						}
					}
				}
			}
			if !ready {
				continue
			}
			val, diags := a.Expr.Value(p.ctx)
			if !p.add(diags) {
				return false
			}
			done[name] = val
			p.ctx.Variables["local"] = cty.ObjectVal(done)
			progress = true
		}
		if !progress {
			for _, name := range names {
				if _, ok := done[name]; !ok {
					p.errorf(attrs[name].NameRange.Ptr(), "Cycle in local values",
						"local.%s depends, directly or not, on itself", name)
					return false
				}
			}
		}
	}
	return true
}
