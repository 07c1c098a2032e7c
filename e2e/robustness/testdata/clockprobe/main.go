// Command clockprobe prints what time.Now says against the kernel's
// wall clock, for the test of the clock-step overlay: the wall offset in
// whole seconds, and the monotonic time since the first reading.
package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

func main() {
	start := time.Now()
	for {
		var tv syscall.Timeval
		if err := syscall.Gettimeofday(&tv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		now := time.Now()
		kernel := time.Unix(tv.Sec, int64(tv.Usec)*1000)
		fmt.Printf("%d %d\n", now.Round(0).Sub(kernel).Round(time.Second)/time.Second, time.Since(start).Milliseconds())
		var line string
		if _, err := fmt.Scanln(&line); err != nil {
			return
		}
	}
}
