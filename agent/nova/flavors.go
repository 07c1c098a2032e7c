package nova

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

func (a *API) flavorRoutes() []route.Route[handler] {
	routes := []route.Route[handler]{
		{Pattern: "GET /flavors", Access: anyone, Policy: "os_compute_api:flavors:index", Handle: a.flavorList},
		{Pattern: "GET /flavors/detail", Access: anyone, Policy: "os_compute_api:flavors:detail", Handle: a.flavorDetail},
		{Pattern: "GET /flavors/{id}", Access: anyone, Policy: "os_compute_api:flavors:show", Handle: a.flavorShow},
		{Pattern: "POST /flavors", Access: admin, Policy: "os_compute_api:os-flavor-manage:create", Handle: a.flavorCreate},
		{Pattern: "PUT /flavors/{id}", MinVersion: 55, Access: admin, Policy: "os_compute_api:os-flavor-manage:update", Handle: a.flavorUpdate},
		{Pattern: "DELETE /flavors/{id}", Access: admin, Policy: "os_compute_api:os-flavor-manage:delete", Handle: a.flavorDelete},
	}
	return append(routes, a.flavorAccessRoutes()...)
}

// flavorView is a flavor in Nova's body: id, name and links in lists,
// everything in details, with the fields of the request's microversion.
func (q *request) flavorView(f *structs.Flavor, detail bool) map[string]any {
	v := map[string]any{"id": f.ID, "name": f.Name, "links": q.links("flavors", f.ID)}
	if q.atLeast(55) {
		v["description"] = nullString(f.Description)
	}
	if !detail {
		return v
	}
	v["ram"], v["vcpus"], v["disk"] = f.MemoryMB, f.VCPUs, f.RootGB
	v["OS-FLV-EXT-DATA:ephemeral"] = f.EphemeralGB
	v["OS-FLV-DISABLED:disabled"] = f.Disabled
	v["os-flavor-access:is_public"] = f.IsPublic
	v["rxtx_factor"] = pyFloat(f.RxTxFactor)
	// Before 2.75 a flavor without swap shows "" instead of 0.
	if f.SwapMB == 0 && !q.atLeast(75) {
		v["swap"] = ""
	} else {
		v["swap"] = f.SwapMB
	}
	if q.atLeast(61) && q.isReader() {
		v["extra_specs"] = extraSpecs(f)
	}
	return v
}

// pyFloat renders a float as Python does (1.0, not 1).
func pyFloat(f float64) json.Number {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return json.Number(strconv.FormatFloat(f, 'f', 1, 64))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

func extraSpecs(f *structs.Flavor) map[string]string {
	if f.ExtraSpecs == nil {
		return map[string]string{}
	}
	return f.ExtraSpecs
}

// visible reports whether the caller may see the flavor: members see
// public, enabled flavors and the private ones their project is given
// (os-flavor-access); admins see every one.
func (q *request) visible(f *structs.Flavor) bool {
	return q.isAdmin() || f.CanUse(q.token.ProjectID)
}

// getFlavor reads a flavor by its id (not its name, as Nova), hiding
// what the caller may not see.
func (q *request) getFlavor(id string) (*structs.Flavor, error) {
	var out structs.SingleFlavorResponse
	err := q.call("Flavor.Get", &structs.FlavorSpecificRequest{ID: id}, &out)
	if err == nil && (out.Flavor.ID != id || !q.visible(out.Flavor)) {
		err = structs.Errorf(structs.KindNotFound, "flavor %q not found", id)
	}
	if err != nil {
		return nil, notFoundAs(err, "Flavor %s could not be found.", id)
	}
	return out.Flavor, nil
}

func (a *API) flavorList(q *request) (*reply, error)   { return a.listFlavors(q, false) }
func (a *API) flavorDetail(q *request) (*reply, error) { return a.listFlavors(q, true) }

// flavorSortKeys maps Nova's flavor sort keys to comparisons.
var flavorSortKeys = map[string]func(a, b *structs.Flavor) int{
	"flavorid":     func(a, b *structs.Flavor) int { return strings.Compare(a.ID, b.ID) },
	"id":           func(a, b *structs.Flavor) int { return cmpInt(a.CreateIndex, b.CreateIndex) },
	"created_at":   func(a, b *structs.Flavor) int { return cmpInt(a.CreateIndex, b.CreateIndex) },
	"updated_at":   func(a, b *structs.Flavor) int { return cmpInt(a.ModifyIndex, b.ModifyIndex) },
	"name":         func(a, b *structs.Flavor) int { return strings.Compare(a.Name, b.Name) },
	"description":  func(a, b *structs.Flavor) int { return strings.Compare(a.Description, b.Description) },
	"memory_mb":    func(a, b *structs.Flavor) int { return cmpInt(a.MemoryMB, b.MemoryMB) },
	"vcpus":        func(a, b *structs.Flavor) int { return cmpInt(a.VCPUs, b.VCPUs) },
	"root_gb":      func(a, b *structs.Flavor) int { return cmpInt(a.RootGB, b.RootGB) },
	"ephemeral_gb": func(a, b *structs.Flavor) int { return cmpInt(a.EphemeralGB, b.EphemeralGB) },
	"swap":         func(a, b *structs.Flavor) int { return cmpInt(a.SwapMB, b.SwapMB) },
	"rxtx_factor":  func(a, b *structs.Flavor) int { return cmpFloat(a.RxTxFactor, b.RxTxFactor) },
	"is_public":    func(a, b *structs.Flavor) int { return cmpBool(a.IsPublic, b.IsPublic) },
	"disabled":     func(a, b *structs.Flavor) int { return cmpBool(a.Disabled, b.Disabled) },
	"vcpu_weight":  func(a, b *structs.Flavor) int { return 0 },
}

// listFlavors answers GET /flavors and /flavors/detail with Nova's
// filters (is_public for admins, minRam, minDisk), sort and pagination.
func (a *API) listFlavors(q *request, detail bool) (*reply, error) {
	if err := q.checkQuery("sort_key", "sort_dir", "limit", "marker", "is_public", "minRam", "minDisk"); err != nil {
		return nil, err
	}
	v := q.query()
	filters := []func(*structs.Flavor) bool{q.visible}
	if q.isAdmin() {
		public, err := parseIsPublic(v)
		if err != nil {
			return nil, err
		}
		if public != nil {
			filters = append(filters, func(f *structs.Flavor) bool { return f.IsPublic == *public })
		}
	}
	for _, p := range []struct {
		name string
		val  func(*structs.Flavor) int
	}{{"minRam", func(f *structs.Flavor) int { return f.MemoryMB }}, {"minDisk", func(f *structs.Flavor) int { return f.RootGB }}} {
		if !v.Has(p.name) {
			continue
		}
		n, err := strconv.Atoi(v.Get(p.name))
		if err != nil {
			return nil, badRequest("Invalid %s filter [%s]", p.name, v.Get(p.name))
		}
		filters = append(filters, func(f *structs.Flavor) bool { return p.val(f) >= n })
	}
	pg, err := q.parsePage()
	if err != nil {
		return nil, err
	}
	var out structs.FlavorListResponse
	if err := q.call("Flavor.List", &structs.FlavorListRequest{}, &out); err != nil {
		return nil, err
	}
	var flavors []*structs.Flavor
	for _, f := range out.Flavors {
		if all(filters, f) {
			flavors = append(flavors, f)
		}
	}
	if err := sortBy(q, flavors, "flavorid", "asc", flavorSortKeys); err != nil {
		return nil, err
	}
	flavors, err = paginate(flavors, pg, func(f *structs.Flavor) string { return f.ID })
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(flavors))
	for _, f := range flavors {
		views = append(views, q.flavorView(f, detail))
	}
	body := map[string]any{"flavors": views}
	collection := []string{"flavors"}
	if detail {
		collection = append(collection, "detail")
	}
	if len(flavors) > 0 {
		if l := q.nextLinks(pg, len(flavors), flavors[len(flavors)-1].ID, collection...); l != nil {
			body["flavors_links"] = l
		}
	}
	return okReply(body)
}

// parseIsPublic reads an admin's ?is_public=: absent is public only,
// "none" is every flavor, else a boolean.
func parseIsPublic(v map[string][]string) (*bool, error) {
	vals, ok := v["is_public"]
	t := true
	if !ok {
		return &t, nil
	}
	s := vals[0]
	if strings.EqualFold(s, "none") {
		return nil, nil
	}
	b, err := parseBool(s)
	if err != nil {
		return nil, badRequest("Invalid is_public filter [%s]", s)
	}
	return &b, nil
}

func (a *API) flavorShow(q *request) (*reply, error) {
	f, err := q.getFlavor(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"flavor": q.flavorView(f, true)})
}

// flavorIDPattern is Nova's flavor id: no leading or trailing space.
var flavorIDPattern = regexp.MustCompile(`^[a-zA-Z0-9. _-]+$`)

func flavorCreateSchema(mv int) *schema {
	name := nameSchema
	props := map[string]*schema{
		"name":                       name,
		"id":                         {types: tString | tNumber | tNull, minLen: 1, maxLen: 255, pattern: flavorIDPattern, format: checkFlavorID},
		"ram":                        positiveIntSchema,
		"vcpus":                      positiveIntSchema,
		"disk":                       nonNegativeInt,
		"OS-FLV-EXT-DATA:ephemeral":  nonNegativeInt,
		"swap":                       {types: tInteger | tString, pattern: digitsPattern, min: ptr(0), max: ptr(math.MaxInt32)},
		"rxtx_factor":                {types: tNumber | tString, pattern: regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`), min: ptr(0), exclusiveMin: true, max: ptr(3.40282e+38)},
		"os-flavor-access:is_public": booleanSchema,
	}
	if mv >= 55 {
		props["description"] = &schema{types: tString | tNull, maxLen: 65535, format: checkPrintableOrEmpty}
	}
	return &schema{types: tObject, required: []string{"flavor"}, props: map[string]*schema{
		"flavor": {types: tObject, props: props, required: []string{"name", "ram", "vcpus", "disk"}},
	}}
}

func checkFlavorID(s string) string {
	if strings.TrimSpace(s) != s {
		return pyRepr(s) + " does not match '^(?! )[a-zA-Z0-9. _-]+(?<! )$'"
	}
	return ""
}

// flavorCreate answers POST /flavors (admin): Nova's flavor-manage body,
// an id chosen (a UUID) when none is given.
func (a *API) flavorCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, flavorCreateSchema(q.mv))
	if err != nil {
		return nil, err
	}
	in := object(body, "flavor")
	f := &structs.Flavor{
		Name: in["name"].(string), MemoryMB: int(intOf(in["ram"])), VCPUs: int(intOf(in["vcpus"])),
		RootGB: int(intOf(in["disk"])), EphemeralGB: int(intOf(in["OS-FLV-EXT-DATA:ephemeral"])),
		SwapMB: int(intOf(in["swap"])), RxTxFactor: 1.0, IsPublic: true, ExtraSpecs: map[string]string{},
	}
	switch id := in["id"].(type) {
	case string:
		f.ID = id
	case json.Number:
		f.ID = id.String()
	default:
		f.ID = uuid.NewString()
	}
	if v, ok := in["rxtx_factor"]; ok {
		f.RxTxFactor = floatOf(v)
	}
	if v, ok := in["os-flavor-access:is_public"]; ok {
		f.IsPublic = boolOf(v)
	}
	if d, ok := stringOf(in, "description"); ok {
		f.Description = d
	}
	var out structs.FlavorUpsertResponse
	if err := q.call("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{f}, CreateOnly: true}, &out); err != nil {
		return nil, err
	}
	if len(out.Flavors) == 1 {
		f = out.Flavors[0]
	}
	return okReply(map[string]any{"flavor": q.flavorView(f, true)})
}

var flavorUpdateSchema = &schema{types: tObject, required: []string{"flavor"}, props: map[string]*schema{
	"flavor": {types: tObject, required: []string{"description"}, props: map[string]*schema{
		"description": {types: tString | tNull, maxLen: 65535, format: checkPrintableOrEmpty},
	}},
}}

// flavorUpdate answers PUT /flavors/{id} (2.55, admin): only the
// description may change.
func (a *API) flavorUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, flavorUpdateSchema)
	if err != nil {
		return nil, err
	}
	desc, _ := stringOf(object(body, "flavor"), "description")
	f, err := q.modifyFlavor(q.param("id"), func(f *structs.Flavor) { f.Description = desc })
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"flavor": q.flavorView(f, true)})
}

// modifyFlavor reads a flavor, changes a copy and writes it back.
// Flavor.Upsert replaces the whole flavor, so a concurrent change of the
// same flavor may be lost (last writer wins), as with Nova's own
// read-modify-write of extra specs.
func (q *request) modifyFlavor(id string, change func(*structs.Flavor)) (*structs.Flavor, error) {
	// A compare-and-set on the flavor's index, retried from a fresh read
	// while another writer got there first: two changes of different
	// extra specs of one flavor both stay.
	for attempt := 0; ; attempt++ {
		f, err := q.getFlavor(id)
		if err != nil {
			return nil, err
		}
		f = f.Copy()
		if f.ExtraSpecs == nil {
			f.ExtraSpecs = map[string]string{}
		}
		change(f)
		var out structs.FlavorUpsertResponse
		err = q.call("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{f}, CheckIndex: f.ModifyIndex}, &out)
		if structs.IsFlavorChanged(err) && attempt < maxFlavorCASAttempts {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(out.Flavors) == 1 {
			return out.Flavors[0], nil
		}
		return f, nil
	}
}

// maxFlavorCASAttempts bounds modifyFlavor's retries; past it the
// conflict (409) goes to the caller, who may try again.
const maxFlavorCASAttempts = 20

// flavorDelete answers DELETE /flavors/{id} (admin) with 202.
func (a *API) flavorDelete(q *request) (*reply, error) {
	id := q.param("id")
	err := q.call("Flavor.Delete", &structs.FlavorDeleteRequest{IDs: []string{id}}, &structs.GenericResponse{})
	if err != nil {
		return nil, notFoundAs(err, "Flavor %s could not be found.", id)
	}
	return acceptedReply(nil)
}
