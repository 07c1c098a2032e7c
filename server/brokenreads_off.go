//go:build !stratus_brokenreads

package server

// brokenFollowerReads is false in every real build: the constant folds
// the test-only branch in forward away. See brokenreads_on.go.
const brokenFollowerReads = false
