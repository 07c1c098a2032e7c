package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// variable is one declared variable.
type variable struct {
	name        string
	typ         cty.Type
	def         *hcl.Block
	hasValue    bool
	value       cty.Value
	validations []*validation
}

type validation struct {
	condition hcl.Expression
	message   hcl.Expression
	rng       hcl.Range
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message", Required: true}},
}

// variables declares the variables, sets their values (defaults, then
// the environment, the var files and -var in that order) and checks
// their validations; the var object is then in p.ctx.
func (p *parser) variables(blocks []*hcl.Block) bool {
	p.vars = map[string]*variable{}
	for _, b := range blocks {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			p.errorf(b.LabelRanges[0].Ptr(), "Invalid variable name", "%q is not a valid name: use letters, digits, underscores and dashes, starting with a letter", name)
			continue
		}
		if prev, dup := p.vars[name]; dup {
			p.errorf(b.DefRange.Ptr(), "Duplicate variable", "A variable named %q was already declared at %s", name, prev.def.DefRange)
			continue
		}
		v := &variable{name: name, typ: cty.DynamicPseudoType, def: b}
		p.vars[name] = v
		content, diags := b.Body.Content(variableSchema)
		if !p.add(diags) {
			continue
		}
		if a, ok := content.Attributes["type"]; ok {
			ty, diags := typeexpr.TypeConstraint(a.Expr)
			if !p.add(diags) {
				continue
			}
			v.typ = ty
		}
		if a, ok := content.Attributes["description"]; ok {
			val, diags := a.Expr.Value(nil)
			if p.add(diags) && (val.IsNull() || !val.Type().Equals(cty.String)) {
				p.errorf(a.Expr.Range().Ptr(), "Invalid description", "A variable's description must be a string")
			}
		}
		if a, ok := content.Attributes["default"]; ok {
			val, diags := a.Expr.Value(nil)
			if !p.add(diags) {
				continue
			}
			if val, ok := p.convert(val, v, a.Expr.Range().Ptr(), "default"); ok {
				v.value, v.hasValue = val, true
			}
		}
		for _, vb := range content.Blocks {
			vc, diags := vb.Body.Content(validationSchema)
			if !p.add(diags) {
				continue
			}
			v.validations = append(v.validations, &validation{condition: vc.Attributes["condition"].Expr,
				message: vc.Attributes["error_message"].Expr, rng: vb.DefRange})
		}
	}
	if p.diags.HasErrors() {
		return false
	}
	p.envValues()
	for _, path := range p.opts.VarFiles {
		p.varFile(path)
	}
	p.cliValues()
	if p.diags.HasErrors() {
		return false
	}
	for _, name := range p.varNames() {
		v := p.vars[name]
		if !v.hasValue {
			p.errorf(v.def.DefRange.Ptr(), "No value for required variable",
				"The variable %q has no default: set it with -var '%s=…', -var-file or %s%s", name, name, EnvVarPrefix, name)
		}
	}
	if p.diags.HasErrors() {
		return false
	}
	p.ctx.Variables["var"] = p.varsObject()
	for _, name := range p.varNames() {
		for _, val := range p.vars[name].validations {
			p.validate(p.vars[name], val)
		}
	}
	return !p.diags.HasErrors()
}

func (p *parser) varNames() []string {
	names := make([]string, 0, len(p.vars))
	for n := range p.vars {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// convert converts a value to a variable's type.
func (p *parser) convert(val cty.Value, v *variable, rng *hcl.Range, what string) (cty.Value, bool) {
	out, err := convert.Convert(val, v.typ)
	if err != nil {
		p.errorf(rng, "Invalid value for variable", "The %s of variable %q is not a %s: %v", what, v.name, typeexpr.TypeString(v.typ), err)
		return cty.NilVal, false
	}
	return out, true
}

// envValues reads CLOUDCTL_VAR_NAME variables of declared names.
func (p *parser) envValues() {
	for _, kv := range p.opts.Env {
		k, raw, ok := strings.Cut(kv, "=")
		name, isVar := strings.CutPrefix(k, EnvVarPrefix)
		if !ok || !isVar {
			continue
		}
		if v := p.vars[name]; v != nil {
			p.rawValue(v, raw, "the environment variable "+k)
		}
	}
}

// cliValues applies -var assignments.
func (p *parser) cliValues() {
	for _, a := range p.opts.Vars {
		name, raw, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			p.errorf(nil, "Invalid -var option", "%q must be NAME=VALUE", a)
			continue
		}
		v := p.vars[name]
		if v == nil {
			p.errorf(nil, "Undeclared variable", "A value was given for the variable %q with -var, but the spec declares no such variable", name)
			continue
		}
		p.rawValue(v, raw, "-var "+name)
	}
}

// rawValue sets a variable from text: the text itself for strings, an
// HCL expression for any other type.
func (p *parser) rawValue(v *variable, raw, source string) {
	if v.typ.Equals(cty.String) || v.typ.Equals(cty.DynamicPseudoType) {
		v.value, v.hasValue = cty.StringVal(raw), true
		return
	}
	if v.typ.IsPrimitiveType() {
		out, err := convert.Convert(cty.StringVal(strings.TrimSpace(raw)), v.typ)
		if err != nil {
			p.errorf(nil, "Invalid value for variable", "The value of variable %q from %s is not a %s: %q", v.name, source, typeexpr.TypeString(v.typ), raw)
			return
		}
		v.value, v.hasValue = out, true
		return
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), "<value for var."+v.name+">", hcl.Pos{Line: 1, Column: 1})
	if !p.add(diags) {
		return
	}
	val, diags := expr.Value(nil)
	if !p.add(diags) {
		return
	}
	out, err := convert.Convert(val, v.typ)
	if err != nil {
		p.errorf(nil, "Invalid value for variable", "The value of variable %q from %s is not a %s: %v", v.name, source, typeexpr.TypeString(v.typ), err)
		return
	}
	v.value, v.hasValue = out, true
}

// varFile applies a var file: NAME = VALUE attributes of declared
// variables, constants only.
func (p *parser) varFile(path string) {
	src, err := p.opts.ReadFile(path)
	if err != nil {
		p.errorf(nil, "Cannot read var file", "%v", err)
		return
	}
	if len(src) > maxSpecSize {
		p.errorf(nil, "Var file too large", "%s is %d bytes; at most %d are allowed", path, len(src), maxSpecSize)
		return
	}
	file, diags := p.hp.ParseHCL(src, path)
	if !p.add(diags) {
		return
	}
	attrs, diags := file.Body.JustAttributes()
	if !p.add(diags) {
		return
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a := attrs[name]
		v := p.vars[name]
		if v == nil {
			p.errorf(a.NameRange.Ptr(), "Undeclared variable", "The var file sets %q, but the spec declares no such variable", name)
			continue
		}
		val, diags := a.Expr.Value(nil)
		if !p.add(diags) {
			continue
		}
		if val, ok := p.convert(val, v, a.Expr.Range().Ptr(), "value"); ok {
			v.value, v.hasValue = val, true
		}
	}
}

// validate checks one validation block of a variable.
func (p *parser) validate(v *variable, val *validation) {
	for _, tr := range val.condition.Variables() {
		if tr.RootName() != "var" || len(tr) < 2 {
			continue
		}
		if step, ok := tr[1].(hcl.TraverseAttr); !ok || step.Name != v.name {
			p.errorf(val.condition.Range().Ptr(), "Invalid validation condition",
				"The condition of variable %q may refer only to var.%s", v.name, v.name)
			return
		}
	}
	res, diags := val.condition.Value(p.ctx)
	if !p.add(diags) {
		return
	}
	res, err := convert.Convert(res, cty.Bool)
	if err != nil || res.IsNull() {
		p.errorf(val.condition.Range().Ptr(), "Invalid validation condition", "The condition must be true or false")
		return
	}
	if res.True() {
		return
	}
	msg, diags := val.message.Value(p.ctx)
	if !p.add(diags) {
		return
	}
	text := fmt.Sprintf("The value of variable %q is not valid", v.name)
	if !msg.IsNull() && msg.Type().Equals(cty.String) {
		text = msg.AsString()
	}
	p.errorf(val.condition.Range().Ptr(), "Invalid value for variable", "%s (var.%s, from %s)", strings.TrimSuffix(text, "."), v.name, val.rng)
}
