package api

import (
	"net/http"
	"net/url"
	"strconv"
)

// Console types of Instances.Console.
const (
	ConsoleNoVNC  = "novnc"
	ConsoleXVPVNC = "xvpvnc"
	ConsoleSerial = "serial"
)

// Console is a remote console of an instance: URL carries a one-time
// token that expires at ExpiresAt (unix nanoseconds).
type Console struct {
	Type      string
	Protocol  string
	URL       string
	ExpiresAt int64
}

type consoleOutput struct {
	Output string
}

// ConsoleOutput returns the end of an instance's console log (its serial
// console); tail > 0 keeps only the last tail lines.
func (i *Instances) ConsoleOutput(id string, tail int) (string, error) {
	var out consoleOutput
	params := url.Values{}
	if tail > 0 {
		params.Set("tail", strconv.Itoa(tail))
	}
	_, err := i.c.doJSON(&request{method: http.MethodGet, path: "/v1/instances/" + url.PathEscape(id) + "/console-output",
		params: params}, nil, &out)
	return out.Output, err
}

// Console asks for a remote console of an instance: novnc (a page with
// noVNC), xvpvnc (a plain TCP VNC proxy) or serial (a websocket).
func (i *Instances) Console(id, consoleType string) (*Console, error) {
	var out Console
	_, err := i.c.doJSON(&request{method: http.MethodPost, path: "/v1/instances/" + url.PathEscape(id) + "/consoles"},
		struct{ Type string }{consoleType}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}
