package glance

import (
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// The PATCH media types and the JSON Schema draft whose patch format
// each uses: draft 10 ({"op": "add", "path": …}) and the older draft 4
// ({"add": "/path", …}).
var patchMediaTypes = map[string]int{
	"application/openstack-images-v2.0-json-patch": 4,
	"application/openstack-images-v2.1-json-patch": 10,
}

var patchOps = []string{"add", "remove", "replace"}

// change is one parsed patch operation.
type change struct {
	op    string
	path  []string
	value any
	draft int
}

// imageUpdate answers PATCH /v2/images/{id} with Glance's JSON patch:
// 200 with the image.
func (a *API) imageUpdate(q *request) error {
	draft, ok := patchMediaTypes[q.contentType()]
	if !ok {
		q.w.Header().Set("Accept-Patch", "application/openstack-images-v2.0-json-patch, application/openstack-images-v2.1-json-patch")
		return errorf(http.StatusUnsupportedMediaType, "The request media type %s is not supported by this server.", q.contentType())
	}
	var body any
	if err := q.decodeJSON(&body); err != nil {
		return err
	}
	raw, ok := body.([]any)
	if !ok {
		return errorf(http.StatusBadRequest, "Request body must be a JSON array of operation objects.")
	}
	changes := make([]change, 0, len(raw))
	for _, r := range raw {
		obj, ok := r.(map[string]any)
		if !ok {
			return errorf(http.StatusBadRequest, "Operations must be JSON objects.")
		}
		c, err := parseChange(obj, draft)
		if err != nil {
			return err
		}
		changes = append(changes, c)
	}
	id := q.param("id")
	if len(changes) == 0 {
		img, _, err := q.visibleImage(id)
		if err != nil {
			return err
		}
		return q.json(http.StatusOK, imageView(img))
	}
	img, err := q.update(id, "modify_image", func(img *structs.Image) error {
		for _, c := range changes {
			if err := applyChange(img, c); err != nil {
				return err
			}
		}
		if len(img.Properties) > structs.MaxImageProperties {
			return errorf(http.StatusRequestEntityTooLarge, "Maximum number of properties exceeded. Attempted: %d, Maximum: %d", len(img.Properties), structs.MaxImageProperties)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, imageView(img))
}

// parseChange reads one operation object of the given draft.
func parseChange(obj map[string]any, draft int) (change, error) {
	c := change{draft: draft}
	var path string
	if draft == 10 {
		op, ok := obj["op"].(string)
		if !ok {
			return c, errorf(http.StatusBadRequest, "Unable to find `op` in JSON Schema change. It must be one of the following: %s.", strings.Join(patchOps, ", "))
		}
		if !slices.Contains(patchOps, op) {
			return c, errorf(http.StatusBadRequest, "Invalid operation: `%s`. It must be one of the following: %s.", op, strings.Join(patchOps, ", "))
		}
		c.op = op
		p, ok := obj["path"].(string)
		if !ok {
			return c, errorf(http.StatusBadRequest, "Unable to find 'path' in JSON Schema change")
		}
		path = p
	} else {
		for _, op := range patchOps {
			if _, ok := obj[op]; ok {
				if c.op != "" {
					return c, errorf(http.StatusBadRequest, `Operation objects must contain only one member named "add", "remove", or "replace".`)
				}
				c.op = op
			}
		}
		if c.op == "" {
			return c, errorf(http.StatusBadRequest, `Operation objects must contain exactly one member named "add", "remove", or "replace".`)
		}
		p, ok := obj[c.op].(string)
		if !ok {
			return c, errorf(http.StatusBadRequest, "Pointer `%v` does not start with \"/\".", obj[c.op])
		}
		path = p
	}
	parts, err := decodePointer(path)
	if err != nil {
		return c, err
	}
	c.path = parts
	depth := 1
	if parts[0] == "locations" && c.op != "replace" {
		depth = 2
	}
	if len(parts) != depth {
		return c, errorf(http.StatusBadRequest, "Invalid JSON pointer for this resource: '/%s'", strings.Join(parts, "/"))
	}
	if c.op != "remove" {
		v, ok := obj["value"]
		if !ok {
			return c, errorf(http.StatusBadRequest, `Operation "%s" requires a member named "value".`, c.op)
		}
		c.value = v
	}
	if parts[0] != "locations" {
		if err := checkSettable(parts[0]); err != nil {
			return c, err
		}
	}
	return c, nil
}

var (
	adjacentSlashes = regexp.MustCompile(`/\s*?/`)
	badTilde        = regexp.MustCompile(`~[^01]`)
)

// decodePointer parses the restricted JSON pointers Glance accepts.
func decodePointer(p string) ([]string, error) {
	switch {
	case !strings.HasPrefix(p, "/"):
		return nil, errorf(http.StatusBadRequest, "Pointer `%s` does not start with \"/\".", p)
	case adjacentSlashes.MatchString(p[1:]):
		return nil, errorf(http.StatusBadRequest, "Pointer `%s` contains adjacent \"/\".", p)
	case len(p) > 1 && strings.HasSuffix(p, "/"):
		return nil, errorf(http.StatusBadRequest, "Pointer `%s` end with \"/\".", p)
	case strings.TrimSpace(p[1:]) == "":
		return nil, errorf(http.StatusBadRequest, "Pointer `%s` does not contains valid token.", p)
	case badTilde.MatchString(p) || strings.HasSuffix(p, "~"):
		return nil, errorf(http.StatusBadRequest, "Pointer `%s` contains \"~\" not part of a recognized escape sequence.", p)
	}
	var out []string
	for _, part := range strings.Split(p[1:], "/") {
		out = append(out, strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")))
	}
	return out, nil
}

// applyChange applies one operation as Glance does: attributes are set
// or refused, properties added, replaced (if present) or removed.
func applyChange(img *structs.Image, c change) error {
	root := c.path[0]
	if root == "locations" {
		verb := map[string]string{"add": "add", "remove": "remove", "replace": "update"}[c.op]
		return errorf(http.StatusForbidden, "It's not allowed to %s locations if locations are invisible.", verb)
	}
	base := slices.Contains(baseAttrs, root)
	_, isProp := img.Properties[root]
	switch c.op {
	case "remove":
		if base {
			return errorf(http.StatusForbidden, "Property %s may not be removed.", root)
		}
		if !isProp {
			return errorf(http.StatusConflict, "Property %s does not exist.", root)
		}
		delete(img.Properties, root)
		return nil
	case "replace":
		if !base && !isProp {
			return errorf(http.StatusConflict, "Property %s does not exist.", root)
		}
	case "add":
		if c.draft == 4 && (base || isProp) {
			return errorf(http.StatusConflict, "Property %s already present.", root)
		}
	}
	return setAttr(img, root, c.value)
}
