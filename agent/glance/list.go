package glance

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Listing limits, Glance's limit_param_default and api_limit_max.
const (
	defaultLimit = 25
	maxLimit     = 1000
)

var sortKeys = []string{"name", "status", "container_format", "disk_format", "size", "id", "created_at", "updated_at"}

// listParams are the query parameters that are not property filters.
var listParams = []string{"limit", "marker", "sort", "sort_key", "sort_dir", "member_status", "tag", "visibility",
	"os_hidden", "protected", "size_min", "size_max", "name", "status", "owner", "disk_format", "container_format",
	"id", "checksum", "os_hash_value", "created_at", "updated_at"}

// imageFilter keeps an image or not.
type imageFilter func(img *structs.Image) bool

// imageList answers GET /v2/images with Glance's filters, sorting and
// pagination.
func (a *API) imageList(q *request) error {
	v := q.r.URL.Query()
	p, err := listingOf(v)
	if err != nil {
		return err
	}
	var resp structs.ImageListResponse
	if err := q.call("Image.List", &structs.ImageListRequest{MemberProjectID: q.token.ProjectID}, &resp); err != nil {
		return err
	}
	memberOf := map[string]*structs.ImageMember{}
	for _, m := range resp.Members {
		memberOf[m.ImageID] = m
	}
	listed := q.listedBy(p.visibility, p.memberStatus, memberOf)
	var images []*structs.Image
	for _, img := range resp.Images {
		if listed(img) && p.passes(img) {
			images = append(images, img)
		}
	}
	p.sort(images)
	if marker := v.Get("marker"); marker != "" {
		i := slices.IndexFunc(images, func(img *structs.Image) bool { return img.ID == marker })
		if i < 0 {
			return errorf(http.StatusBadRequest, "marker %s could not be found.", marker)
		}
		images = images[i+1:]
	}
	more := len(images) > p.limit
	if more {
		images = images[:p.limit]
	}
	views := make([]map[string]any, 0, len(images))
	for _, img := range images {
		views = append(views, imageView(img))
	}
	body := map[string]any{"images": views, "schema": "/v2/schemas/images", "first": "/v2/images"}
	params := url.Values{}
	for k, vals := range v {
		if k != "marker" {
			params[k] = vals
		}
	}
	if enc := params.Encode(); enc != "" {
		body["first"] = "/v2/images?" + enc
	}
	if more && len(images) > 0 {
		params.Set("marker", images[len(images)-1].ID)
		body["next"] = "/v2/images?" + params.Encode()
	}
	return q.json(http.StatusOK, body)
}

// listing is an image listing's query parameters, checked.
type listing struct {
	limit                    int
	memberStatus, visibility string
	keys, dirs               []string
	filters                  []imageFilter
}

// listingOf checks a listing's parameters with Glance's messages.
func listingOf(v url.Values) (*listing, error) {
	p := &listing{limit: defaultLimit, memberStatus: v.Get("member_status"), visibility: v.Get("visibility")}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "limit param must be an integer")
		}
		if n < 0 {
			return nil, errorf(http.StatusBadRequest, "limit param must be positive")
		}
		p.limit = min(n, maxLimit)
	}
	if p.memberStatus == "" {
		p.memberStatus = structs.MemberAccepted
	}
	if !slices.Contains([]string{structs.MemberPending, structs.MemberAccepted, structs.MemberRejected, "all"}, p.memberStatus) {
		return nil, errorf(http.StatusBadRequest, "Invalid status: %s", p.memberStatus)
	}
	if p.visibility != "" && !slices.Contains(append(slices.Clone(structs.ImageVisibilities), "all"), p.visibility) {
		return nil, errorf(http.StatusBadRequest, "Invalid visibility value: %s", p.visibility)
	}
	if v.Has("changes-since") {
		return nil, errorf(http.StatusBadRequest, `The "changes-since" filter is no longer available on v2.`)
	}
	var err error
	if p.keys, p.dirs, err = sorting(v); err != nil {
		return nil, err
	}
	if p.filters, err = listFilters(v); err != nil {
		return nil, err
	}
	return p, nil
}

// passes reports whether an image passes every filter.
func (p *listing) passes(img *structs.Image) bool {
	for _, f := range p.filters {
		if !f(img) {
			return false
		}
	}
	return true
}

// sort orders images by the sort keys, then by id in the last key's
// direction.
func (p *listing) sort(images []*structs.Image) {
	slices.SortStableFunc(images, func(x, y *structs.Image) int {
		for i, k := range p.keys {
			c := compareBy(k, x, y)
			if p.dirs[i] == "desc" {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		c := strings.Compare(x.ID, y.ID)
		if p.dirs[len(p.dirs)-1] == "desc" {
			c = -c
		}
		return c
	})
}

// listedBy decides which images a listing shows, before filters, by
// Glance's rules: admins see every image; others see public images,
// their project's own, community images only when asking for them, and
// shared images of which they are a member with memberStatus.
func (q *request) listedBy(visibility, memberStatus string, memberOf map[string]*structs.ImageMember) imageFilter {
	project, admin := q.token.ProjectID, q.isAdmin()
	shared := func(img *structs.Image) bool {
		if img.Owner == project && project != "" {
			return true
		}
		m := memberOf[img.ID]
		return m != nil && (memberStatus == "all" || m.Status == memberStatus)
	}
	return func(img *structs.Image) bool {
		own := img.Owner != "" && img.Owner == project
		switch visibility {
		case "":
			if admin {
				return true
			}
			switch img.Visibility {
			case structs.ImagePublic:
				return true
			case structs.ImageShared:
				return shared(img)
			default:
				return own
			}
		case "all":
			if admin {
				return true
			}
			switch img.Visibility {
			case structs.ImagePublic, structs.ImageCommunity:
				return true
			case structs.ImageShared:
				return shared(img)
			default:
				return own
			}
		case structs.ImageShared:
			return img.Visibility == structs.ImageShared && (admin || shared(img))
		case structs.ImagePrivate:
			return img.Visibility == structs.ImagePrivate && (admin || own)
		default: // public, community
			return img.Visibility == visibility
		}
	}
}

// sorting reads sort_key/sort_dir or sort=key:dir,…; the default is
// created_at descending.
func sorting(v url.Values) ([]string, []string, error) {
	var keys, dirs []string
	checkKey := func(k string) error {
		if !slices.Contains(sortKeys, k) {
			return errorf(http.StatusBadRequest, "Invalid sort key: %s. It must be one of the following: %s.", k, strings.Join(sortKeys, ", "))
		}
		return nil
	}
	checkDir := func(d string) error {
		if d != "asc" && d != "desc" {
			return errorf(http.StatusBadRequest, "Invalid sort direction: %s", d)
		}
		return nil
	}
	if v.Has("sort") {
		if v.Has("sort_key") || v.Has("sort_dir") {
			return nil, nil, errorf(http.StatusBadRequest, "Old and new sorting syntax cannot be combined")
		}
		for _, part := range strings.Split(strings.TrimSpace(v.Get("sort")), ",") {
			k, d, _ := strings.Cut(part, ":")
			k, d = strings.TrimSpace(k), strings.TrimSpace(d)
			if d == "" {
				d = "desc"
			}
			if err := checkKey(k); err != nil {
				return nil, nil, err
			}
			if err := checkDir(d); err != nil {
				return nil, nil, err
			}
			keys, dirs = append(keys, k), append(dirs, d)
		}
	} else {
		for _, k := range v["sort_key"] {
			if err := checkKey(strings.TrimSpace(k)); err != nil {
				return nil, nil, err
			}
			keys = append(keys, strings.TrimSpace(k))
		}
		for _, d := range v["sort_dir"] {
			if err := checkDir(strings.TrimSpace(d)); err != nil {
				return nil, nil, err
			}
			dirs = append(dirs, strings.TrimSpace(d))
		}
		if len(dirs) > 1 && len(dirs) != len(keys) {
			return nil, nil, errorf(http.StatusBadRequest, "Number of sort dirs does not match the number of sort keys")
		}
	}
	if len(keys) == 0 {
		keys = []string{"created_at"}
	}
	if len(dirs) == 0 {
		dirs = []string{"desc"}
	}
	for len(dirs) < len(keys) {
		dirs = append(dirs, dirs[0])
	}
	return keys, dirs, nil
}

func compareBy(key string, x, y *structs.Image) int {
	switch key {
	case "name":
		return cmp.Compare(x.Name, y.Name)
	case "status":
		return cmp.Compare(x.Status, y.Status)
	case "container_format":
		return cmp.Compare(x.ContainerFormat, y.ContainerFormat)
	case "disk_format":
		return cmp.Compare(x.DiskFormat, y.DiskFormat)
	case "size":
		return cmp.Compare(x.Size, y.Size)
	case "id":
		return cmp.Compare(x.ID, y.ID)
	case "updated_at":
		return cmp.Compare(x.UpdatedAt, y.UpdatedAt)
	default:
		return cmp.Or(cmp.Compare(x.CreatedAt, y.CreatedAt), cmp.Compare(x.CreateIndex, y.CreateIndex))
	}
}

// listFilters turns the query into filters: attributes (with the "in:"
// operator), sizes, tags, os_hidden (false by default), protected,
// times (with gt, gte, lt, lte, eq, neq) and any other parameter as a
// property.
func listFilters(v url.Values) ([]imageFilter, error) {
	var out []imageFilter
	hidden := strings.ToLower(v.Get("os_hidden"))
	if hidden == "" {
		hidden = "false"
	}
	if hidden != "true" && hidden != "false" {
		return nil, errorf(http.StatusBadRequest, "Invalid value '%s' for 'os_hidden' filter. Valid values are 'true' or 'false'.", v.Get("os_hidden"))
	}
	wantHidden := hidden == "true"
	out = append(out, func(img *structs.Image) bool { return img.Hidden == wantHidden })
	if p := v.Get("protected"); p != "" {
		if p != "true" && p != "false" {
			return nil, errorf(http.StatusBadRequest, "Invalid value '%s' for 'protected' filter. Valid values are 'true' or 'false'.", p)
		}
		want := p == "true"
		out = append(out, func(img *structs.Image) bool { return img.Protected == want })
	}
	attrs := map[string]func(*structs.Image) string{
		"name": func(i *structs.Image) string { return i.Name }, "status": func(i *structs.Image) string { return i.Status },
		"owner": func(i *structs.Image) string { return i.Owner }, "id": func(i *structs.Image) string { return i.ID },
		"disk_format":      func(i *structs.Image) string { return i.DiskFormat },
		"container_format": func(i *structs.Image) string { return i.ContainerFormat },
		"checksum":         func(i *structs.Image) string { return i.Checksum },
		"os_hash_value":    func(i *structs.Image) string { return i.HashValue },
	}
	for _, k := range sortedKeys(attrs) {
		if !v.Has(k) {
			continue
		}
		get, raw := attrs[k], v.Get(k)
		values := []string{raw}
		if list, ok := strings.CutPrefix(raw, "in:"); ok {
			values = splitIn(list)
		}
		out = append(out, func(img *structs.Image) bool { return slices.Contains(values, get(img)) })
	}
	for _, k := range []string{"size_min", "size_max"} {
		if !v.Has(k) {
			continue
		}
		n, err := strconv.ParseInt(v.Get(k), 10, 64)
		if err != nil || n < 0 {
			return nil, errorf(http.StatusBadRequest, "Invalid value for %s: %s", k, v.Get(k))
		}
		if k == "size_min" {
			out = append(out, func(img *structs.Image) bool { return img.HasData() && img.Size >= n })
		} else {
			out = append(out, func(img *structs.Image) bool { return img.HasData() && img.Size <= n })
		}
	}
	for _, tag := range v["tag"] {
		tag = strings.TrimSpace(tag)
		out = append(out, func(img *structs.Image) bool { return img.HasTag(tag) })
	}
	for _, k := range []string{"created_at", "updated_at"} {
		if !v.Has(k) {
			continue
		}
		f, err := timeFilter(k, v.Get(k))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	for k, vals := range v {
		if slices.Contains(listParams, k) {
			continue
		}
		want := vals[0]
		out = append(out, func(img *structs.Image) bool { p, ok := img.Properties[k]; return ok && p == want })
	}
	return out, nil
}

func splitIn(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		out = append(out, strings.Trim(strings.TrimSpace(s), `"`))
	}
	return out
}

// timeFilter parses "op:ISO-time" (op gt, gte, lt, lte, eq, neq; eq
// when absent).
func timeFilter(key, raw string) (imageFilter, error) {
	op, value, found := strings.Cut(raw, ":")
	if !found || !slices.Contains([]string{"gt", "gte", "lt", "lte", "eq", "neq"}, op) {
		op, value = "eq", raw
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		if t, err = time.Parse("2006-01-02T15:04:05", value); err != nil {
			return nil, errorf(http.StatusBadRequest, "Unable to filter by unknown time value: %s", value)
		}
	}
	at := t.UnixNano()
	return func(img *structs.Image) bool {
		v := img.CreatedAt
		if key == "updated_at" {
			v = img.UpdatedAt
		}
		v = v / int64(time.Second) * int64(time.Second) // compared at Glance's precision
		switch op {
		case "gt":
			return v > at
		case "gte":
			return v >= at
		case "lt":
			return v < at
		case "lte":
			return v <= at
		case "neq":
			return v != at
		}
		return v == at
	}, nil
}
