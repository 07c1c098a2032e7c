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

func TestOpenrcCloudsYAML(t *testing.T) {
	var out, errb strings.Builder
	code := Run([]string{"openrc", "--user", "demo", "-password", `p"w:#`, "-format", "clouds-yaml", "-cloud", "lab", "-address", "http://10.0.0.5:8774"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := `clouds:
  "lab":
    auth:
      auth_url: "http://10.0.0.5:8774/identity/v3"
      username: "demo"
      password: "p\"w:#"
      project_name: "demo"
      user_domain_name: "Default"
      project_domain_name: "Default"
    region_name: "RegionOne"
    interface: "public"
    identity_api_version: 3
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	errb.Reset()
	if code := Run([]string{"openrc", "-format", "ini"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-format must be shell, clouds-yaml or ec2") {
		t.Errorf("bad format: exit %d, %s", code, errb.String())
	}
}
