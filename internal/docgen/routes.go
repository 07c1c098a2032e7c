package docgen

import (
	"fmt"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// RouteTable renders an API's route table as the Markdown table the
// policy page shows: each route's method and path under mount, who may
// call it (what the API means by "authenticated" is said by note when
// set), and its policy rule where it names one. A route without a
// level is an error: the table would otherwise document "unset".
func RouteTable[H any](mount string, routes []route.Route[H], note map[policy.Access]string) (string, error) {
	var b strings.Builder
	b.WriteString("| route | who may call it | policy rule |\n| --- | --- | --- |\n")
	for _, rt := range routes {
		if rt.Access == policy.Unset {
			return "", fmt.Errorf("route %s has no access level", rt.Pattern)
		}
		method, path, _ := strings.Cut(rt.Pattern, " ")
		path = strings.TrimSuffix(mount+path, "/")
		if path == "" {
			path = "/"
		}
		if rt.Query != "" {
			path += "?" + rt.Query
		}
		who := rt.Access.String()
		if n := note[rt.Access]; n != "" {
			who = n
		}
		rule := ""
		if rt.Policy != "" {
			rule = "`" + rt.Policy + "`"
		}
		fmt.Fprintf(&b, "| `%s %s` | %s | %s |\n", method, path, who, rule)
	}
	return b.String(), nil
}
