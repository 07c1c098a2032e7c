package command

import (
	"strings"
	"testing"
)

func TestOpenrcPrintsExports(t *testing.T) {
	var out, errb strings.Builder
	code := Run([]string{"openrc", "--user", "demo", "-address", "http://10.0.0.5:8774/"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"export OS_AUTH_URL='http://10.0.0.5:8774/identity/v3'",
		"export OS_USERNAME='demo'",
		"export OS_PASSWORD='demo'",
		"export OS_PROJECT_NAME='demo'",
		"export OS_USER_DOMAIN_NAME='Default'",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if shellQuote("it's") != `'it'"'"'s'` {
		t.Fatal("quoting")
	}
}
