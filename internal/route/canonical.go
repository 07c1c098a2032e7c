package route

import "net/url"

// SplitCanonical is Split with each segment escaped the one canonical
// way (url.PathEscape of its unescaped value), for APIs that match
// segments as net/http's ServeMux does: a literal segment matches
// however the client escaped it (/v%33 is /v3), while an escaped "/"
// stays inside its segment and a parameter's value is unchanged. A
// segment that does not unescape stays as it came (it then matches no
// literal and no parameter).
func SplitCanonical(escapedPath string) []string {
	segs := Split(escapedPath)
	for i, s := range segs {
		if v, err := url.PathUnescape(s); err == nil {
			segs[i] = url.PathEscape(v)
		}
	}
	return segs
}
