package agent

import (
	"fmt"
	"strings"
	"testing"
)

// TestLogBuffer: the buffer keeps the last lines in order, joins a line
// written in pieces, and caps a huge line.
func TestLogBuffer(t *testing.T) {
	b := NewLogBuffer(3)
	for i := range 5 {
		fmt.Fprintf(b, "line %d\n", i)
	}
	_, _ = b.Write([]byte("half "))
	if got := string(b.Bytes()); got != "line 2\nline 3\nline 4\n" {
		t.Errorf("kept %q", got)
	}
	_, _ = b.Write([]byte("and half\nnext\n"))
	if got := string(b.Bytes()); got != "line 4\nhalf and half\nnext\n" {
		t.Errorf("kept %q", got)
	}
	_, _ = b.Write([]byte(strings.Repeat("x", 3*maxLogLine) + "\n"))
	if got := b.Bytes(); len(got) > 2*maxLogLine {
		t.Errorf("a huge line kept %d bytes", len(got))
	}
}
