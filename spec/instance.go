package spec

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/stratus-cloud/stratus/structs"
)

// The instance block, as gohcl decodes it: unknown attributes and
// blocks, wrong types and missing required attributes are diagnostics
// at their place.
type instanceBlock struct {
	Count            *int               `hcl:"count,optional"`
	Flavor           string             `hcl:"flavor"`
	Image            string             `hcl:"image"`
	AvailabilityZone string             `hcl:"availability_zone,optional"`
	KeyName          string             `hcl:"key_name,optional"`
	Metadata         map[string]string  `hcl:"metadata,optional"`
	UserData         string             `hcl:"user_data,optional"`
	Networks         []*networkBlock    `hcl:"network,block"`
	Placement        *placementBlock    `hcl:"placement,block"`
	Constraints      []*constraintBlock `hcl:"constraint,block"`
	Update           *updateBlock       `hcl:"update,block"`
}

type networkBlock struct {
	Name    string `hcl:"name,label"`
	FixedIP string `hcl:"fixed_ip,optional"`
}

type placementBlock struct {
	Policy     string `hcl:"policy"`
	MaxPerHost *int   `hcl:"max_per_host,optional"`
}

type constraintBlock struct {
	Attribute string `hcl:"attribute"`
	Operator  string `hcl:"operator,optional"`
	Value     string `hcl:"value,optional"`
}

type updateBlock struct {
	MaxParallel    *int   `hcl:"max_parallel,optional"`
	HealthCheck    string `hcl:"health_check,optional"`
	MinHealthyTime string `hcl:"min_healthy_time,optional"`
}

// syntaxBody finds the positions of a block's attributes and blocks.
type syntaxBody struct {
	body *hclsyntax.Body
	def  hcl.Range
}

// attr is the range of an attribute's value, or the block's.
func (b syntaxBody) attr(name string) *hcl.Range {
	if b.body != nil {
		if a, ok := b.body.Attributes[name]; ok {
			return a.Expr.Range().Ptr()
		}
	}
	return b.def.Ptr()
}

// blocks returns the bodies of the nested blocks of a type, in order.
func (b syntaxBody) blocks(typ string) []syntaxBody {
	var out []syntaxBody
	if b.body == nil {
		return nil
	}
	for _, nb := range b.body.Blocks {
		if nb.Type == typ {
			out = append(out, syntaxBody{body: nb.Body, def: nb.DefRange()})
		}
	}
	return out
}

func bodyOf(block *hcl.Block) syntaxBody {
	sb, _ := block.Body.(*hclsyntax.Body)
	return syntaxBody{body: sb, def: block.DefRange}
}

// instance decodes and checks the instance block.
func (p *parser) instance(block *hcl.Block) *structs.InstanceGroupSpec {
	name := block.Labels[0]
	if !structs.ValidGroupName(name) {
		p.errorf(block.LabelRanges[0].Ptr(), "Invalid instance group name",
			"%q must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	var ib instanceBlock
	if !p.add(gohcl.DecodeBody(block.Body, p.ctx, &ib)) {
		return nil
	}
	body := bodyOf(block)
	spec := &structs.InstanceGroupSpec{Name: name, Count: 1, Flavor: ib.Flavor, Image: ib.Image, AZ: ib.AvailabilityZone,
		KeyName: ib.KeyName, Metadata: ib.Metadata, UserData: ib.UserData}
	if ib.Count != nil {
		spec.Count = *ib.Count
	}
	p.checkAttributes(spec, body)
	spec.Networks = p.networks(block, body, ib.Networks)
	if ib.Placement != nil {
		spec.Placement = p.placement(ib.Placement, body.blocks("placement")[0])
	}
	cbodies := body.blocks("constraint")
	for i, cb := range ib.Constraints {
		cbody := syntaxBody{def: block.DefRange}
		if i < len(cbodies) {
			cbody = cbodies[i]
		}
		c := &structs.Constraint{Attribute: cb.Attribute, Operator: cb.Operator, Value: cb.Value}
		p.constraint(c, cbody)
		spec.Constraints = append(spec.Constraints, c)
	}
	if ib.Update != nil {
		spec.Update = p.update(ib.Update, body.blocks("update")[0])
	}
	if p.diags.HasErrors() {
		return nil
	}
	spec.Canonicalize()
	if err := spec.Validate(); err != nil {
		// A check above should have caught it, with a better position.
		p.errorf(block.DefRange.Ptr(), "Invalid instance group", "%s", structs.Message(err))
		return nil
	}
	return spec
}

// checkAttributes checks an instance block's plain attributes: count,
// flavor, image, metadata and user data.
func (p *parser) checkAttributes(spec *structs.InstanceGroupSpec, body syntaxBody) {
	if spec.Count < 0 || spec.Count > structs.MaxGroupCount {
		p.errorf(body.attr("count"), "Invalid count", "count must be between 0 and %d, not %d", structs.MaxGroupCount, spec.Count)
	}
	for field, v := range map[string]string{"flavor": spec.Flavor, "image": spec.Image} {
		if strings.TrimSpace(v) == "" {
			p.errorf(body.attr(field), "Invalid "+field, "%s must not be empty", field)
		}
	}
	if len(spec.Metadata) > structs.MaxGroupMetadata {
		p.errorf(body.attr("metadata"), "Too much metadata", "at most %d metadata items are allowed, not %d", structs.MaxGroupMetadata, len(spec.Metadata))
	}
	keys := make([]string, 0, len(spec.Metadata))
	for k := range spec.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "" || len(k) > 255 || len(spec.Metadata[k]) > 255 {
			p.errorf(body.attr("metadata"), "Invalid metadata", "metadata %q: keys must be 1-255 and values 0-255 characters", k)
		}
	}
	if len(spec.UserData) > structs.MaxGroupUserData {
		p.errorf(body.attr("user_data"), "User data too large", "user_data is %d bytes; at most %d are allowed", len(spec.UserData), structs.MaxGroupUserData)
	}
}

// networks checks the network blocks: each named, none twice.
func (p *parser) networks(block *hcl.Block, body syntaxBody, list []*networkBlock) []*structs.GroupNetwork {
	var out []*structs.GroupNetwork
	nets := body.blocks("network")
	seen := map[string]bool{}
	for i, n := range list {
		rng := block.DefRange.Ptr()
		if i < len(nets) {
			rng = nets[i].def.Ptr()
		}
		if strings.TrimSpace(n.Name) == "" {
			p.errorf(rng, "Invalid network", "a network needs a name")
		} else if seen[n.Name] {
			p.errorf(rng, "Duplicate network", "the network %q is listed twice", n.Name)
		}
		seen[n.Name] = true
		out = append(out, &structs.GroupNetwork{Name: n.Name, FixedIP: n.FixedIP})
	}
	return out
}

// placement checks the placement block.
func (p *parser) placement(pb *placementBlock, pbody syntaxBody) *structs.GroupPlacement {
	out := &structs.GroupPlacement{Policy: pb.Policy}
	if !slices.Contains(structs.ServerGroupPolicies, pb.Policy) {
		p.errorf(pbody.attr("policy"), "Invalid placement policy", "policy must be one of %s, not %q", strings.Join(structs.ServerGroupPolicies, ", "), pb.Policy)
	}
	if pb.MaxPerHost != nil {
		out.MaxPerHost = *pb.MaxPerHost
		switch {
		case *pb.MaxPerHost < 1:
			p.errorf(pbody.attr("max_per_host"), "Invalid max_per_host", "max_per_host must be at least 1")
		case pb.Policy != structs.PolicyAntiAffinity:
			p.errorf(pbody.attr("max_per_host"), "Invalid max_per_host", "only the anti-affinity policy takes max_per_host")
		}
	}
	return out
}

// update checks the update block, defaulting what it leaves out.
func (p *parser) update(ub *updateBlock, ubody syntaxBody) *structs.GroupUpdate {
	u := &structs.GroupUpdate{MaxParallel: structs.DefaultGroupMaxParallel, HealthCheck: structs.DefaultGroupHealthCheck,
		MinHealthyTime: structs.DefaultGroupMinHealthyTime}
	if ub.MaxParallel != nil {
		u.MaxParallel = *ub.MaxParallel
		if u.MaxParallel < 0 {
			p.errorf(ubody.attr("max_parallel"), "Invalid max_parallel", "max_parallel must be 0 (all at once) or more")
		}
	}
	if ub.HealthCheck != "" {
		u.HealthCheck = ub.HealthCheck
		if u.HealthCheck != structs.GroupHealthActive && u.HealthCheck != structs.GroupHealthNone {
			p.errorf(ubody.attr("health_check"), "Invalid health_check", "health_check must be %q or %q, not %q",
				structs.GroupHealthActive, structs.GroupHealthNone, u.HealthCheck)
		}
	}
	if ub.MinHealthyTime != "" {
		d, err := time.ParseDuration(ub.MinHealthyTime)
		switch {
		case err != nil:
			p.errorf(ubody.attr("min_healthy_time"), "Invalid duration", "min_healthy_time %q is not a duration such as \"10s\" or \"1m30s\"", ub.MinHealthyTime)
		case d < 0 || d > structs.MaxGroupMinHealthyTime:
			p.errorf(ubody.attr("min_healthy_time"), "Invalid duration", "min_healthy_time must be between 0s and %s", structs.MaxGroupMinHealthyTime)
		default:
			u.MinHealthyTime = d
		}
	}
	return u
}

// constraint checks one constraint block.
func (p *parser) constraint(c *structs.Constraint, body syntaxBody) {
	if key, ok := strings.CutPrefix(c.Attribute, structs.ConstraintAttributePrefix); !ok || key == "" {
		p.errorf(body.attr("attribute"), "Invalid constraint attribute",
			"attribute %q must be host.<key>, such as host.arch, host.hypervisor_type or host.name", c.Attribute)
	}
	op := c.Operator
	if op == "" || op == "==" {
		op = structs.ConstraintEqual
	}
	switch op {
	case structs.ConstraintEqual, structs.ConstraintNotEqual:
		if body.body == nil || body.body.Attributes["value"] == nil {
			p.errorf(body.def.Ptr(), "Missing required argument", "The constraint needs a value for operator %q", op)
		}
	case structs.ConstraintRegexp:
		if _, err := regexp.Compile(c.Value); err != nil {
			p.errorf(body.attr("value"), "Invalid regular expression", "%v", err)
		}
	case structs.ConstraintVersion:
		if strings.TrimSpace(c.Value) == "" {
			p.errorf(body.attr("value"), "Invalid version constraint", "a version constraint needs a value such as \">= 6.0\"")
		}
	case structs.ConstraintIsSet, structs.ConstraintIsNotSet:
		if c.Value != "" {
			p.errorf(body.attr("value"), "Unexpected value", "the operator %q takes no value", op)
		}
	default:
		p.errorf(body.attr("operator"), "Invalid constraint operator", "operator must be one of %s, not %q",
			strings.Join(structs.ConstraintOperators, ", "), c.Operator)
	}
}
