package nova

import (
	"slices"
	"sort"
	"strconv"
	"time"
)

// sortStable sorts s by less, keeping the order of equal elements.
func sortStable[T any](s []T, less func(a, b T) bool) {
	slices.SortStableFunc(s, func(a, b T) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}

// sortBy sorts items by the request's sort_key and sort_dir (one key,
// with Nova's defaults), stably.
func sortBy[T any](q *request, items []T, defKey, defDir string, keys map[string]func(a, b T) int) error {
	v := q.query()
	key, dir := v.Get("sort_key"), v.Get("sort_dir")
	if key == "" {
		key = defKey
	}
	if dir == "" {
		dir = defDir
	}
	cmp, ok := keys[key]
	if !ok {
		return badRequest("Invalid input for query parameters sort_key. Value: %s. '%s' is not one of %s", key, key, pyRepr(anySlice(sortedKeys(keys))))
	}
	if dir != "asc" && dir != "desc" {
		return badRequest("Invalid input for query parameters sort_dir. Value: %s. '%s' is not one of ['asc', 'desc']", dir, dir)
	}
	if key == defKey && dir == defDir && v.Get("sort_key") == "" {
		return nil
	}
	sort.SliceStable(items, func(i, j int) bool {
		c := cmp(items[i], items[j])
		if dir == "desc" {
			return c > 0
		}
		return c < 0
	})
	return nil
}

// checkQuery refuses query parameters outside allowed from 2.75, where
// Nova's query schemas stopped allowing additional properties.
func (q *request) checkQuery(allowed ...string) error {
	if !q.atLeast(75) {
		return nil
	}
	for _, k := range sortedKeys(q.query()) {
		if !containsString(allowed, k) {
			return badRequest("Invalid input for query parameters %s. Value: %s. Additional properties are not allowed ('%s' was unexpected)", k, q.query().Get(k), k)
		}
	}
	return nil
}

func all[T any](preds []func(T) bool, v T) bool {
	for _, p := range preds {
		if !p(v) {
			return false
		}
	}
	return true
}

func cmpInt[T int | int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// maxLimit is Nova's [api]max_limit: the largest page.
const maxLimit = 1000

// offsetLimit reads Nova's common.limited parameters, ?offset= and
// ?limit= (at most max_limit), as non-negative integers.
func (q *request) offsetLimit() (offset, limit int, err error) {
	v := q.query()
	offset, limit = 0, maxLimit
	for _, p := range []struct {
		name string
		dst  *int
	}{{"offset", &offset}, {"limit", &limit}} {
		if !v.Has(p.name) {
			continue
		}
		n, err := strconv.Atoi(v.Get(p.name))
		if err != nil || n < 0 {
			return 0, 0, badRequest("Invalid input for query parameters %s. Value: %s. '%s' does not match '^[0-9]*$'", p.name, v.Get(p.name), v.Get(p.name))
		}
		*p.dst = n
	}
	return offset, min(limit, maxLimit), nil
}

// limited is Nova's common.limited: items sliced by ?offset= and
// ?limit=.
func limited[T any](q *request, items []T) ([]T, error) {
	offset, limit, err := q.offsetLimit()
	if err != nil {
		return nil, err
	}
	items = items[min(offset, len(items)):]
	return items[:min(limit, len(items))], nil
}

// page is a list request's limit and marker.
type page struct {
	limit  int
	marker string
}

// parsePage reads ?limit= and ?marker= as Nova does.
func (q *request) parsePage() (page, error) {
	p := page{limit: maxLimit}
	v := q.query()
	if v.Has("limit") {
		n, err := strconv.Atoi(v.Get("limit"))
		if err != nil {
			return p, badRequest("Invalid input received: limit must be an integer")
		}
		if n < 0 {
			return p, badRequest("Invalid input received: limit must be >= 0")
		}
		p.limit = min(n, maxLimit)
	}
	p.marker = v.Get("marker")
	return p, nil
}

// paginate returns the page of items after the marker; an unknown
// marker is Nova's 400.
func paginate[T any](items []T, p page, id func(T) string) ([]T, error) {
	if p.marker != "" {
		found := false
		for i, it := range items {
			if id(it) == p.marker {
				items, found = items[i+1:], true
				break
			}
		}
		if !found {
			return nil, badRequest("marker [%s] not found", p.marker)
		}
	}
	if len(items) > p.limit {
		items = items[:p.limit]
	}
	return items, nil
}

// nextLinks is Nova's "<collection>_links": a next link when the page is
// full, carrying the request's query with the last item as marker.
func (q *request) nextLinks(p page, n int, lastID string, collection ...string) []link {
	if n == 0 || n != p.limit {
		return nil
	}
	v := q.query()
	v.Set("marker", lastID)
	return []link{{Href: q.selfHref(collection...) + "?" + v.Encode(), Rel: "next"}}
}

// isoTime formats unix nanoseconds as Nova's ISO 8601 timestamps
// ("2026-11-29T21:00:00Z").
func isoTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05Z")
}

// pyTime formats unix nanoseconds as Python's isoformat of a naive UTC
// datetime ("2026-11-29T21:00:00.000000"), which several Nova fields use;
// zero is null.
func pyTime(ns int64) any {
	if ns == 0 {
		return nil
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000")
}

// parseTime reads an ISO 8601 timestamp of a query parameter.
func parseTime(name, s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badRequest("Invalid input for query parameters %s. Value: %s. '%s' is not a 'date-time'", name, s, s)
}

// nullString is a string, or null when empty.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
