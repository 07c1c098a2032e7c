package structs

import (
	"regexp"
	"strings"
)

var hostnameInvalid = regexp.MustCompile(`[^a-z0-9.-]`)

// GuestHostname is the host name the guest gets: the one set (Nova's
// 2.90 hostname), else its name made a valid DNS label as Nova's
// sanitize_hostname does, else "Server-<id>".
func (i *Instance) GuestHostname() string {
	if i.Hostname != "" {
		return i.Hostname
	}
	h := strings.ToLower(i.Name)
	h = strings.NewReplacer(" ", "-", "_", "-").Replace(h)
	h = hostnameInvalid.ReplaceAllString(h, "")
	if len(h) > 63 {
		h = h[:63]
	}
	h = strings.Trim(h, ".-")
	if h == "" {
		return "Server-" + i.ID
	}
	return h
}
