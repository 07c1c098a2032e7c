//go:build stratus_brokenreads

package server

// brokenFollowerReads, only under the stratus_brokenreads build tag,
// makes every server answer default (consistent) reads from its own
// state, as if the request had asked for ?stale. It exists so the
// fault-injection suite (e2e/robustness) can prove that its checker
// catches stale reads; no release or test build sets the tag.
const brokenFollowerReads = true
