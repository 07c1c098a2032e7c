package nova

import (
	"fmt"
	"strings"
	"testing"
)

// TestTailLogAsNova: the tail is Python's '\n'.join(log.split('\n')[-n:]).
func TestTailLogAsNova(t *testing.T) {
	for _, c := range []struct {
		log    string
		length int
		want   string
	}{
		{"a\nb\nc\n", 2, "c\n"},
		{"a\nb\nc\n", 3, "b\nc\n"},
		{"a\nb\nc\n", 10, "a\nb\nc\n"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\nc\n", 1, ""},
		{"a\nb\nc\n", -1, "b\nc\n"},
		{"", 5, ""},
	} {
		if got := tailLog(c.log, c.length); got != c.want {
			t.Errorf("tailLog(%q, %d) = %q, want %q", c.log, c.length, got, c.want)
		}
	}
}

// TestConsoleOutputLength: length gives exactly that many pieces of the
// log when split at newlines (tempest's check), for a running server and
// a SHUTOFF one, whose log ends with its power down.
func TestConsoleOutputLength(t *testing.T) {
	h := newConsoleHarness(t)
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	check := func(state string, last string) {
		t.Helper()
		full := act(h, id, memberTok, "", `{"os-getConsoleOutput": {}}`).expect(t, 200).body["output"].(string)
		if n := len(strings.Split(full, "\n")); n < 8 {
			t.Fatalf("%s: full log of %d pieces: %q", state, n, full)
		}
		for _, n := range []int{2, 5, 8} {
			out := act(h, id, memberTok, "", fmt.Sprintf(`{"os-getConsoleOutput": {"length": %d}}`, n)).expect(t, 200).body["output"].(string)
			if got := len(strings.Split(out, "\n")); got != n || !strings.HasSuffix(full, out) || !strings.Contains(out, last) {
				t.Errorf("%s: length %d gave %d pieces: %q", state, n, got, out)
			}
		}
		if out := act(h, id, memberTok, "", `{"os-getConsoleOutput": {"length": 0}}`).expect(t, 200).body["output"]; out != "" {
			t.Errorf("%s: length 0 gave %q", state, out)
		}
	}
	check("ACTIVE", "login:")
	act(h, id, memberTok, "", `{"os-stop": null}`).expect(t, 202)
	waitServer(h, id, "SHUTOFF")
	check("SHUTOFF", "Power down")
}
