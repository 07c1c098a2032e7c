package httpx

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONPoolEncodesWithItsSetupAndStartsEmpty(t *testing.T) {
	p := NewJSONPool(func(e *json.Encoder) { e.SetEscapeHTML(false) })
	jb := p.Get()
	if err := jb.Enc.Encode(map[string]string{"a": "<b>"}); err != nil {
		t.Fatal(err)
	}
	if got := jb.Buf.String(); got != "{\"a\":\"<b>\"}\n" {
		t.Fatalf("encoded %q", got)
	}
	jb.Release()
	if again := p.Get(); again.Buf.Len() != 0 {
		t.Fatalf("a pooled buffer came back holding %q", again.Buf.String())
	}
}

func TestJSONPoolDropsLargeBuffers(t *testing.T) {
	p := NewJSONPool(nil)
	jb := p.Get()
	if err := jb.Enc.Encode(strings.Repeat("x", 2*maxPooledJSON)); err != nil {
		t.Fatal(err)
	}
	jb.Release()
	// sync.Pool may drop anything, so only the converse is certain: a
	// buffer over the bound is never handed out again.
	for i := 0; i < 10; i++ {
		if got := p.Get(); got.Buf.Cap() > maxPooledJSON {
			t.Fatalf("a %d-byte buffer was kept in the pool", got.Buf.Cap())
		}
	}
}
