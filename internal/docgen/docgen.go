// Package docgen keeps generated blocks of the website's Markdown pages
// equal to what the code says (policy tables, for one). Tests render the
// block and call Sync; with updating on it rewrites the page instead.
//
// It only reads and writes the one page it is given; it must not be
// imported outside tests.
package docgen

import (
	"fmt"
	"os"
	"strings"
)

// EnvUpdate names the variable that makes Sync rewrite pages.
const EnvUpdate = "STRATUS_UPDATE_DOCS"

// markers are the comments around a block named name.
func markers(name string) (begin, end string) {
	return "<!-- " + name + ":begin", "<!-- " + name + ":end -->"
}

// Sync compares the block named name in the page at path with want.
// When $STRATUS_UPDATE_DOCS is 1 it rewrites the block instead (the page
// must already hold both markers). The error says how to regenerate.
func Sync(path, name, want string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(raw)
	beginMark, endMark := markers(name)
	begin := strings.Index(doc, beginMark)
	end := strings.Index(doc, endMark)
	if begin < 0 || end < begin {
		return fmt.Errorf("%s has no %q block between %q and %q", path, name, beginMark, endMark)
	}
	// The begin marker's line may carry a note; the block starts after it.
	bodyStart := begin + strings.Index(doc[begin:], "\n") + 1
	if os.Getenv(EnvUpdate) == "1" {
		doc = doc[:bodyStart] + want + doc[end:]
		return os.WriteFile(path, []byte(doc), 0o644)
	}
	if got := doc[bodyStart:end]; got != want {
		return fmt.Errorf("%s's %q block is out of date; rerun the test with %s=1 to regenerate it\n got:\n%s\nwant:\n%s",
			path, name, EnvUpdate, got, want)
	}
	return nil
}
