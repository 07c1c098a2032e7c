package virt

import "fmt"

// Power states, with Nova's numbering so they pass through unchanged.
const (
	PowerNoState  = 0
	PowerRunning  = 1
	PowerPaused   = 3
	PowerShutdown = 4
	PowerCrashed  = 6
	PowerSuspend  = 7
)

// powerStateNames are Nova's names of the power states.
var powerStateNames = map[int]string{
	PowerNoState:  "NOSTATE",
	PowerRunning:  "RUNNING",
	PowerPaused:   "PAUSED",
	PowerShutdown: "SHUTDOWN",
	PowerCrashed:  "CRASHED",
	PowerSuspend:  "SUSPENDED",
}

// PowerStateName names a power state the way Nova's API does
// ("RUNNING", "SHUTDOWN", …); an unknown one is "state(N)".
func PowerStateName(state int) string {
	if n, ok := powerStateNames[state]; ok {
		return n
	}
	return fmt.Sprintf("state(%d)", state)
}
