package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOpenStackCLIHosts drives os-hosts with python-openstackclient's
// `host` commands (Compute API 2.1): the list by zone, the show's
// resource rows, enabling and disabling, and the 501 for maintenance
// mode, which no Stratus driver has.
func TestOpenStackCLIHosts(t *testing.T) {
	t.Parallel()
	bin := requireCLI(t, "openstack")
	dev := startAgent(t, "oshosts", "--dev")
	env := osEnv(t, dev.http, "admin")
	type host struct {
		Name    string `json:"Host Name"`
		Service string `json:"Service"`
		Zone    string `json:"Zone"`
	}
	var hosts []host
	eventually(t, "the dev host listed", 60*time.Second, func() error {
		out, errOut, code := runOS(t, bin, env, "host", "list", "--zone", "nova", "-f", "json")
		if code != 0 {
			return fmt.Errorf("host list: %s", errOut)
		}
		if err := json.Unmarshal([]byte(out), &hosts); err != nil {
			return err
		}
		if len(hosts) != 1 || hosts[0] != (host{"oshosts", "compute", "nova"}) {
			return fmt.Errorf("hosts %+v", hosts)
		}
		return nil
	})
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "host", "list", "--zone", "internal", "-f", "json")), &hosts); err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 || hosts[0].Service != "scheduler" || hosts[1].Service != "conductor" {
		t.Fatalf("internal hosts %+v", hosts)
	}

	var rows []struct {
		Host    string `json:"Host"`
		Project string `json:"Project"`
		CPU     int    `json:"CPU"`
		Memory  int    `json:"Memory MB"`
	}
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "host", "show", "oshosts", "-f", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Project != "(total)" || rows[0].CPU == 0 || rows[1].Project != "(used_now)" || rows[2].Project != "(used_max)" {
		t.Fatalf("host show %+v", rows)
	}

	mustOS(t, bin, env, "host", "set", "--disable", "oshosts")
	if out := mustOS(t, bin, env, "host", "list", "-f", "value"); strings.Contains(out, "oshosts compute") {
		t.Fatalf("a disabled host is listed: %s", out)
	}
	if out := mustOS(t, bin, env, "compute", "service", "list", "--service", "nova-compute", "-f", "value", "-c", "Status"); strings.TrimSpace(out) != "disabled" {
		t.Fatalf("compute service after host set --disable: %s", out)
	}
	mustOS(t, bin, env, "host", "set", "--enable", "oshosts")
	_, errOut, code := runOS(t, bin, env, "host", "set", "--enable-maintenance", "oshosts")
	if code == 0 || !strings.Contains(errOut, "501") {
		t.Fatalf("maintenance mode: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runOS(t, bin, env, "host", "show", "nope"); code == 0 {
		t.Fatalf("host show nope succeeded: %s", errOut)
	}
}

// TestNovaCLIVersionsAndUsageAudit drives novaclient's version-list
// (the compute root's two versions) and instance-usage-audit-log (the
// last completed month, or the one before --before).
func TestNovaCLIVersionsAndUsageAudit(t *testing.T) {
	t.Parallel()
	nova := requireCLI(t, "nova")
	dev := startAgent(t, "novaaudit", "--dev")
	env := osEnv(t, dev.http, "admin")
	var out string
	eventually(t, "version-list", 60*time.Second, func() error {
		o, errOut, code := runOS(t, nova, env, "version-list")
		if code != 0 {
			return fmt.Errorf("version-list: %s", errOut)
		}
		out = o
		return nil
	})
	v20, v21 := strings.Index(out, "| v2.0 | DEPRECATED |"), strings.Index(out, "| v2.1 | CURRENT ")
	if v20 < 0 || v21 < v20 {
		t.Fatalf("version-list, want v2.0 then v2.1:\n%s", out)
	}
	audit := mustOS(t, nova, env, "instance-usage-audit-log")
	if !strings.Contains(audit, "ALL hosts done. 0 errors.") || !strings.Contains(audit, `"novaaudit": {"state": "DONE"`) {
		t.Fatalf("instance-usage-audit-log:\n%s", audit)
	}
	audit = mustOS(t, nova, env, "instance-usage-audit-log", "--before", "2026-03-15 10:00:00")
	if !strings.Contains(audit, "| period_beginning  | 2026-02-01 00:00:00") || !strings.Contains(audit, "| period_ending     | 2026-03-01 00:00:00") {
		t.Fatalf("instance-usage-audit-log --before:\n%s", audit)
	}
	_, errOut, code := runOS(t, nova, env, "instance-usage-audit-log", "--before", "yesterday")
	if code == 0 || !strings.Contains(errOut, "Invalid timestamp for date yesterday (HTTP 400)") {
		t.Fatalf("a bad --before: exit %d: %s", code, errOut)
	}
}
