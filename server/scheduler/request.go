package scheduler

import (
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Request is what one instance asks of a host, worked out once per
// instance so filters and weighers do no parsing or allocation per host.
// Build it with NewRequest: a Request made by hand lacks the precomputed
// resource, capability and image checks.
type Request struct {
	// Instance is the instance being placed. It must not be modified.
	Instance *structs.Instance
	// Resources is the amount of each resource class the instance
	// consumes (structs.FlavorResources).
	Resources map[string]int64
	// RequiredTraits are the traits a host must have: the flavor's
	// trait:X=required extra specs and the image's trait:X=required
	// properties, sorted and without duplicates.
	RequiredTraits []string
	// ForbiddenTraits are the traits a host must not have (the flavor's
	// trait:X=forbidden extra specs), sorted.
	ForbiddenTraits []string

	// classes is Resources in check order: VCPU, MEMORY_MB, DISK_GB,
	// then the other classes sorted.
	classes []classRequest
	// tried are the hosts of earlier build attempts.
	tried      []string
	zoneReason string
	caps       []capabilityCheck
	image      []imageCheck
	// Reasons, precomputed so a rejection does not allocate.
	missingReasons   []string
	forbiddenReasons []string
	// place is what the request needs from the topology (zones,
	// aggregates, server group, hinted hosts), bound by Schedule; nil
	// without one.
	place *requestPlacement
}

// classRequest is one resource class of a request.
type classRequest struct {
	class  string
	std    int // index into HostView's caches, or -1
	amount int64
	reason string
}

// NewRequest works out what inst asks of a host. It fails when the
// flavor is missing or one of its extra specs is malformed.
func NewRequest(inst *structs.Instance) (*Request, error) {
	if inst == nil {
		return nil, structs.Errorf(structs.KindInvalid, "no instance")
	}
	res, err := inst.Resources()
	if err != nil {
		return nil, err
	}
	required, forbidden, err := structs.FlavorTraits(inst.Flavor)
	if err != nil {
		return nil, err
	}
	req := &Request{Instance: inst, Resources: res, ForbiddenTraits: forbidden}
	req.RequiredTraits = mergeImageTraits(required, inst.ImageProperties)

	req.classes = make([]classRequest, 0, len(res))
	for _, class := range stdClasses {
		if n, ok := res[class]; ok {
			req.classes = append(req.classes, classRequest{class: class, std: stdIndex(class), amount: n})
		}
	}
	var custom []string
	for class := range res {
		if stdIndex(class) < 0 {
			custom = append(custom, class)
		}
	}
	sort.Strings(custom)
	for _, class := range custom {
		req.classes = append(req.classes, classRequest{class: class, std: -1, amount: res[class]})
	}
	for i := range req.classes {
		req.classes[i].reason = "insufficient " + req.classes[i].class
	}

	for _, a := range inst.Attempts {
		if a != nil && a.HostID != "" {
			req.tried = append(req.tried, a.HostID)
		}
	}
	if inst.AZ != "" {
		req.zoneReason = "not in zone " + inst.AZ
	}
	req.caps = append(capabilityChecks(inst.Flavor.ExtraSpecs), constraintChecks(inst.Constraints)...)
	req.image = imageChecks(inst.ImageProperties)
	for _, t := range req.RequiredTraits {
		req.missingReasons = append(req.missingReasons, "missing trait "+t)
	}
	for _, t := range req.ForbiddenTraits {
		req.forbiddenReasons = append(req.forbiddenReasons, "forbidden trait "+t)
	}
	return req, nil
}

// mergeImageTraits adds the image's trait:X=required properties to the
// flavor's required traits, sorted and deduplicated. Nova honours only
// "required" on images; other values are ignored.
func mergeImageTraits(required []string, props map[string]string) []string {
	for k, v := range props {
		if name, ok := strings.CutPrefix(k, "trait:"); ok && name != "" && v == "required" {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	out := required[:0]
	for i, t := range required {
		if i == 0 || t != required[i-1] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
