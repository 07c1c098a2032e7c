// Package ui holds the web UI's end-to-end tests: they build the real
// `cloudctl` binary, run `cloudctl agent -dev` on random loopback ports
// and drive the UI at /ui in a real headless Chromium (Debian's chromium
// package, through chromedp), as a user would: log in, create, watch,
// stop and delete instances, read scheduling failures, and check what a
// project member may see. They save screenshots of the main pages under
// build/ui-screenshots.
//
// Without /usr/bin/chromium the tests skip, except under CI=true, where
// they fail (scripts/ci-deps.sh installs it). It has no non-test code
// beyond this comment and must not be imported.
package ui
