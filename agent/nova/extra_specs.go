package nova

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

func (a *API) extraSpecRoutes() []route.Route[handler] {
	const rule = "os_compute_api:os-flavor-extra-specs:"
	return []route.Route[handler]{
		{Pattern: "GET /flavors/{id}/os-extra_specs", Access: reader, Policy: rule + "index", Handle: a.extraSpecList},
		{Pattern: "POST /flavors/{id}/os-extra_specs", Access: admin, Policy: rule + "create", Handle: a.extraSpecCreate},
		{Pattern: "GET /flavors/{id}/os-extra_specs/{key}", Access: reader, Policy: rule + "show", Handle: a.extraSpecShow},
		{Pattern: "PUT /flavors/{id}/os-extra_specs/{key}", Access: admin, Policy: rule + "update", Handle: a.extraSpecUpdate},
		{Pattern: "DELETE /flavors/{id}/os-extra_specs/{key}", Access: admin, Policy: rule + "delete", Handle: a.extraSpecDelete},
	}
}

var extraSpecKeyPattern = regexp.MustCompile(`^[a-zA-Z0-9-_:. ]{1,255}$`)

// extraSpecsSchema is Nova's extra specs map: keys of safe characters,
// values strings (numbers and booleans are stringified) of 1-255.
var extraSpecsSchema = &schema{types: tObject, open: true, keys: extraSpecKeyPattern,
	extra: &schema{types: tString | tNumber | tBoolean, minLen: 1, maxLen: 255}}

var extraSpecCreateSchema = &schema{types: tObject, required: []string{"extra_specs"},
	props: map[string]*schema{"extra_specs": extraSpecsSchema}}

func (a *API) extraSpecList(q *request) (*reply, error) {
	f, err := q.getFlavor(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"extra_specs": extraSpecs(f)})
}

func (a *API) extraSpecShow(q *request) (*reply, error) {
	f, err := q.getFlavor(q.param("id"))
	if err != nil {
		return nil, err
	}
	key := q.param("key")
	v, ok := f.ExtraSpecs[key]
	if !ok {
		return nil, notFound("Flavor %s has no extra specs with key %s.", f.ID, key)
	}
	return okReply(map[string]string{key: v})
}

// extraSpecCreate answers POST os-extra_specs: the given specs are
// merged into the flavor's and echoed back.
func (a *API) extraSpecCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, extraSpecCreateSchema)
	if err != nil {
		return nil, err
	}
	specs := specStrings(object(body, "extra_specs"))
	if err := q.checkExtraSpecs(specs); err != nil {
		return nil, err
	}
	_, err = q.modifyFlavor(q.param("id"), func(f *structs.Flavor) {
		for k, v := range specs {
			f.ExtraSpecs[k] = v
		}
	})
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"extra_specs": specs})
}

// extraSpecUpdate answers PUT os-extra_specs/{key}: a body of exactly
// that one key.
func (a *API) extraSpecUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, extraSpecsSchema)
	if err != nil {
		return nil, err
	}
	key := q.param("key")
	switch {
	case len(body) == 0:
		return nil, validationError(nil, body, "{} does not have enough properties")
	case len(body) > 1:
		return nil, badRequest("Request body contains too many items")
	}
	if _, ok := body[key]; !ok {
		return nil, badRequest("Request body and URI mismatch")
	}
	specs := specStrings(body)
	if err := q.checkExtraSpecs(specs); err != nil {
		return nil, err
	}
	if _, err := q.modifyFlavor(q.param("id"), func(f *structs.Flavor) { f.ExtraSpecs[key] = specs[key] }); err != nil {
		return nil, err
	}
	return okReply(specs)
}

func (a *API) extraSpecDelete(q *request) (*reply, error) {
	id, key := q.param("id"), q.param("key")
	f, err := q.getFlavor(id)
	if err != nil {
		return nil, err
	}
	if _, ok := f.ExtraSpecs[key]; !ok {
		return nil, notFound("Flavor %s has no extra specs with key %s.", f.ID, key)
	}
	if _, err := q.modifyFlavor(id, func(f *structs.Flavor) { delete(f.ExtraSpecs, key) }); err != nil {
		return nil, err
	}
	return okReply(nil)
}

// specStrings stringifies validated extra spec values as Python's str().
func specStrings(o map[string]any) map[string]string {
	out := make(map[string]string, len(o))
	for k, v := range o {
		switch x := v.(type) {
		case string:
			out[k] = x
		case bool:
			out[k] = pyRepr(x)
		case json.Number:
			out[k] = x.String()
		}
	}
	return out
}

// checkExtraSpecs validates, from 2.86, the extra specs Stratus knows:
// resources:CLASS=N and trait:NAME=required|forbidden, which the
// scheduler reads.
func (q *request) checkExtraSpecs(specs map[string]string) error {
	if !q.atLeast(86) {
		return nil
	}
	probe := &structs.Flavor{ID: q.param("id"), ExtraSpecs: map[string]string{}}
	for k, v := range specs {
		if strings.HasPrefix(k, "resources:") || strings.HasPrefix(k, "trait:") {
			probe.ExtraSpecs[k] = v
		}
	}
	if _, err := structs.FlavorResources(probe); err != nil {
		return badRequest("Validation failed; %s", structs.Message(err))
	}
	if _, _, err := structs.FlavorTraits(probe); err != nil {
		return badRequest("Validation failed; %s", structs.Message(err))
	}
	return nil
}
