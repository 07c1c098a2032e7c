package gossip

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

func TestMetaRoundTrip(t *testing.T) {
	in := Meta{
		ID:       "6f1c1f9e-3b0e-4b8e-9d3a-2f6f3c1b7a10",
		Role:     RoleServer,
		Region:   "eu-west",
		AZ:       "eu-west-1a",
		RPCAddr:  "[2001:db8::17]:4647",
		HTTPAddr: "[2001:db8::17]:4646",
		Expect:   5,
		Version:  "1.2.3-dev+abcdef0",
		FSMLevel: 2,
	}
	buf, err := encodeMeta(in, 42)
	if err != nil {
		t.Fatal(err)
	}
	// A realistic record should leave plenty of headroom under the limit.
	if len(buf) > memberlist.MetaMaxSize/2 {
		t.Errorf("encoded meta is %d bytes; expected compact encoding", len(buf))
	}
	out, session, err := decodeMeta(buf)
	if err != nil {
		t.Fatal(err)
	}
	if out != in || session != 42 {
		t.Fatalf("round trip: got %+v session %d, want %+v session 42", out, session, in)
	}

	if m, s, err := decodeMeta(nil); err != nil || m != (Meta{}) || s != 0 {
		t.Errorf("decodeMeta(nil) = %+v, %d, %v; want zero, nil", m, s, err)
	}
	if _, _, err := decodeMeta([]byte{0xc1}); err == nil {
		t.Errorf("decodeMeta(garbage) succeeded")
	}
}

func TestLogAdapterMapsLevels(t *testing.T) {
	var buf bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &buf})
	w := &logAdapter{logger: l}
	for _, line := range []string{
		"[DEBUG] memberlist: Stream connection from=127.0.0.1:1234\n",
		"[INFO] memberlist: Marking x as failed\n",
		"[WARN] memberlist: Refuting a suspect message\n",
		"[ERR] memberlist: Failed to send ping\n",
	} {
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	out := buf.String()
	if strings.Contains(out, "Stream connection") {
		t.Errorf("memberlist DEBUG should be Trace and filtered at Debug:\n%s", out)
	}
	for _, want := range []string{"[INFO]  Marking x as failed", "[WARN]  Refuting", "[ERROR] Failed to send ping"} {
		if !strings.Contains(out, want) {
			t.Errorf("log output missing %q:\n%s", want, out)
		}
	}
}
