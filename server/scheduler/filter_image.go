package scheduler

import (
	"strconv"
	"strings"
)

// ImagePropertiesFilter passes hosts that can run the instance's image,
// as Nova's filter of that name does: the image's architecture
// (hw_architecture, or the legacy architecture) must be the host's Arch,
// its hypervisor type (img_hv_type, or the legacy hypervisor_type) the
// host's HypervisorType, and the host's HypervisorVersion must satisfy
// img_hv_requested_version (">=6.0", ">=6.0,<7"). Architectures and
// hypervisor types are compared canonically (amd64 is x86_64). As in
// Nova, a host that does not report its hypervisor version passes the
// version check.
type ImagePropertiesFilter struct{}

// Name implements Filter.
func (ImagePropertiesFilter) Name() string { return "ImagePropertiesFilter" }

func (ImagePropertiesFilter) applies(req *Request) bool { return len(req.image) > 0 }

// Filter implements Filter.
func (ImagePropertiesFilter) Filter(h *HostView, req *Request) (bool, string) {
	for i := range req.image {
		c := &req.image[i]
		var ok bool
		switch c.kind {
		case imageArch:
			ok = canonicalArch(h.Host.Arch) == c.want
		case imageHVType:
			ok = canonicalHVType(h.Host.HypervisorType) == c.want
		case imageHVVersion:
			ok = h.Host.HypervisorVersion == "" || c.pred.satisfiedBy(hostVersion(h.Host.HypervisorVersion))
		}
		if !ok {
			return false, c.reason
		}
	}
	return true, ""
}

const (
	imageArch = iota
	imageHVType
	imageHVVersion
)

// imageCheck is one image property the host must satisfy.
type imageCheck struct {
	kind   int
	want   string // canonical arch or hypervisor type
	pred   versionPredicate
	reason string
}

// imageChecks parses an image's properties once per request. The modern
// property name wins over the legacy one when both are set.
func imageChecks(props map[string]string) []imageCheck {
	var out []imageCheck
	if k, v := firstProp(props, "hw_architecture", "architecture"); v != "" {
		out = append(out, imageCheck{kind: imageArch, want: canonicalArch(v), reason: "image needs " + k + " " + v})
	}
	if k, v := firstProp(props, "img_hv_type", "hypervisor_type"); v != "" {
		out = append(out, imageCheck{kind: imageHVType, want: canonicalHVType(v), reason: "image needs " + k + " " + v})
	}
	if k, v := firstProp(props, "img_hv_requested_version", "hypervisor_version_requires"); v != "" {
		out = append(out, imageCheck{kind: imageHVVersion, pred: parseVersionPredicate(v), reason: "image needs " + k + " " + v})
	}
	return out
}

func firstProp(props map[string]string, keys ...string) (string, string) {
	for _, k := range keys {
		if v := strings.TrimSpace(props[k]); v != "" {
			return k, v
		}
	}
	return "", ""
}

// canonicalArch is Nova's Architecture.canonicalize, plus arm64 (Go's
// name for aarch64).
func canonicalArch(a string) string {
	a = strings.ToLower(a)
	switch a {
	case "i386", "i486", "i586", "x86_32", "x86_32p", "ia32":
		return "i686"
	case "amd64", "x64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return a
}

// canonicalHVType is Nova's HVType.canonicalize.
func canonicalHVType(t string) string {
	t = strings.ToLower(t)
	if t == "xapi" {
		return "xen"
	}
	return t
}

// hostVersion turns Nova's integer encoding of a hypervisor version
// (6002000) into dotted form (6.2.0); dotted versions pass unchanged.
func hostVersion(v string) string {
	if strings.IndexByte(v, '.') >= 0 || len(v) < 7 {
		return v
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	return strconv.FormatInt(n/1000000, 10) + "." + strconv.FormatInt(n/1000%1000, 10) + "." + strconv.FormatInt(n%1000, 10)
}

// versionPredicate is a comma-separated list of comparisons such as
// ">=6.0,<7"; a bare version means ==. A malformed predicate matches no
// version.
type versionPredicate struct {
	ops, vers []string
	bad       bool
}

func parseVersionPredicate(s string) versionPredicate {
	var p versionPredicate
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		op := "=="
		for _, o := range []string{">=", "<=", "==", "!=", ">", "<"} {
			if rest, ok := strings.CutPrefix(part, o); ok {
				op, part = o, strings.TrimSpace(rest)
				break
			}
		}
		if _, ok := compareVersions(part, part); !ok {
			p.bad = true
			return p
		}
		p.ops, p.vers = append(p.ops, op), append(p.vers, part)
	}
	return p
}

func (p *versionPredicate) satisfiedBy(v string) bool {
	if p.bad || len(p.ops) == 0 {
		return false
	}
	for i, op := range p.ops {
		c, ok := compareVersions(v, p.vers[i])
		if !ok {
			return false
		}
		var sat bool
		switch op {
		case ">=":
			sat = c >= 0
		case "<=":
			sat = c <= 0
		case "==":
			sat = c == 0
		case "!=":
			sat = c != 0
		case ">":
			sat = c > 0
		case "<":
			sat = c < 0
		}
		if !sat {
			return false
		}
	}
	return true
}
