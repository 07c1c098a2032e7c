package nova

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The microversions served: 2.1 up to maxMicroversion. A microversion is
// kept as its minor number, since the major is always 2.
const (
	minMicroversion = 1
	maxMicroversion = 100
)

// Microversion headers, new style first.
const (
	headerAPIVersion     = "OpenStack-API-Version"
	headerNovaAPIVersion = "X-OpenStack-Nova-API-Version"
)

var versionPattern = regexp.MustCompile(`^([1-9][0-9]*)\.([1-9][0-9]*|0)$`)

// negotiate picks the request's microversion from its headers: the
// OpenStack-API-Version "compute X.Y" entry wins over the legacy
// X-OpenStack-Nova-API-Version; none means 2.1 and "latest" the maximum.
// A malformed version is a 400 and one out of range a 406, as in Nova.
func negotiate(h http.Header) (int, error) {
	requested := ""
	for _, line := range h.Values(headerAPIVersion) {
		for _, entry := range strings.Split(line, ",") {
			fields := strings.Fields(entry)
			if len(fields) == 2 && strings.EqualFold(fields[0], "compute") {
				requested = fields[1]
			}
		}
	}
	if requested == "" {
		requested = strings.TrimSpace(h.Get(headerNovaAPIVersion))
	}
	if requested == "" {
		return minMicroversion, nil
	}
	if strings.EqualFold(requested, "latest") {
		return maxMicroversion, nil
	}
	m := versionPattern.FindStringSubmatch(requested)
	if m == nil {
		return 0, badRequest("API Version String %s is of invalid format. Must be of format MajorNum.MinorNum.", requested)
	}
	major, _ := strconv.Atoi(m[1])
	minor, err := strconv.Atoi(m[2])
	if err != nil || major != 2 || minor < minMicroversion || minor > maxMicroversion {
		return 0, faultf(http.StatusNotAcceptable, "Version %s is not supported by the API. Minimum is %s and maximum is %s.",
			requested, versionString(minMicroversion), versionString(maxMicroversion))
	}
	return minor, nil
}

// versionString renders a microversion: 47 is "2.47".
func versionString(minor int) string { return fmt.Sprintf("2.%d", minor) }

// setVersionHeaders writes the negotiated microversion on a response.
func setVersionHeaders(h http.Header, minor int) {
	v := versionString(minor)
	h.Set(headerAPIVersion, "compute "+v)
	h.Set(headerNovaAPIVersion, v)
	h.Set("Vary", headerAPIVersion+", "+headerNovaAPIVersion)
}
