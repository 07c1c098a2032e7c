package sigv4

import "testing"

func TestCanonicalQueryAndEncoding(t *testing.T) {
	if got := canonicalQuery("prefix=a%20b&list-type=2&delimiter=%2F&uploads", false); got != "delimiter=%2F&list-type=2&prefix=a%20b&uploads=" {
		t.Fatalf("canonical query %q", got)
	}
	if got := URIEncode("/b/a key/ü~", false); got != "/b/a%20key/%C3%BC~" {
		t.Fatalf("encoded path %q", got)
	}
}
