package console

import (
	"bufio"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestXVPTokenFromTheConnectLine(t *testing.T) {
	for line, want := range map[string]string{
		"CONNECT /console?token=abc HTTP/1.1\r\n\r\n":              "abc",
		"CONNECT /console?token=a%2Bb HTTP/1.0\r\nHost: x\r\n\r\n": "a+b",
		"CONNECT tok123 HTTP/1.1\r\n\r\n":                          "tok123",
	} {
		got, err := xvpToken(bufio.NewReader(strings.NewReader(line)))
		if err != nil || got != want {
			t.Errorf("%q: token %q, %v; want %q", line, got, err, want)
		}
	}
	for _, bad := range []string{"GET /console?token=abc HTTP/1.1\r\n\r\n", "RFB 003.008\n", ""} {
		if _, err := xvpToken(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestConsoleURLs(t *testing.T) {
	s := New(Config{PublicURL: "https://c.example/", XVPVNCAddr: "10.0.0.5:6081"})
	for typ, want := range map[string]string{
		structs.ConsoleTypeNoVNC:  "https://c.example/ui/console.html?path=console%2Fwebsockify%3Ftoken%3Dt%252B1",
		structs.ConsoleTypeSerial: "wss://c.example/console/serial?token=t%2B1",
		structs.ConsoleTypeXVPVNC: "http://10.0.0.5:6081/console?token=t%2B1",
	} {
		if got := s.consoleURL(typ, "t+1"); got != want {
			t.Errorf("%s: %s, want %s", typ, got, want)
		}
	}
}

func TestErrorsKeepTheirTypeOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
	}{
		{notSupported("no serial"), 501},
		{notReady("not running"), 409},
		{structs.Errorf(structs.KindNotFound, "gone"), 404},
		{structs.Errorf(structs.KindPermission, "bad token"), 403},
	} {
		rec := httptest.NewRecorder()
		writeErr(rec, tc.err)
		if rec.Code != tc.status {
			t.Errorf("%v: status %d, want %d", tc.err, rec.Code, tc.status)
		}
	}
}
