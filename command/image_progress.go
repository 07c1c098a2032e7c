package command

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal. A character device is not
// enough: /dev/null is one, and a bar redrawn into it is noise in a log
// that captures both; term asks the terminal driver itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// transfer reports a transfer's progress: a bar redrawn in place on a terminal,
// a plain line every quarter (and at the end) otherwise.
type transfer struct {
	w     io.Writer
	tty   bool
	label string
	// total is the size, or -1 when unknown.
	total   int64
	done    int64
	start   time.Time
	drawn   time.Time
	quarter int64
	now     func() time.Time
}

// transferBarWidth is the bar's width in characters.
const transferBarWidth = 30

func newTransfer(w io.Writer, label string, total int64) *transfer {
	p := &transfer{w: w, tty: isTerminal(w), label: label, total: total, now: time.Now}
	p.start = p.now()
	if !p.tty {
		if total >= 0 {
			fmt.Fprintf(w, "%s: %s\n", label, humanBytes(total))
		} else {
			fmt.Fprintf(w, "%s\n", label)
		}
	}
	return p
}

// reader counts what passes through r.
func (p *transfer) reader(r io.Reader) io.Reader { return &transferReader{r: r, p: p} }

type transferReader struct {
	r io.Reader
	p *transfer
}

func (pr *transferReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.p.add(int64(n))
	return n, err
}

func (p *transfer) add(n int64) {
	p.done += n
	if p.tty {
		if now := p.now(); now.Sub(p.drawn) >= 100*time.Millisecond {
			p.drawn = now
			p.draw()
		}
		return
	}
	if p.total > 0 {
		if q := p.done * 4 / p.total; q > p.quarter && q < 4 {
			p.quarter = q
			fmt.Fprintf(p.w, "%s: %d%% (%s of %s)\n", p.label, q*25, humanBytes(p.done), humanBytes(p.total))
		}
	}
}

// rate is the average speed so far.
func (p *transfer) rate() string {
	secs := p.now().Sub(p.start).Seconds()
	if secs <= 0 {
		return "-"
	}
	return humanBytes(int64(float64(p.done)/secs)) + "/s"
}

// line renders the bar: "label  45% [=====>      ] 12.0 MiB/27.0 MiB 5.1 MiB/s".
func (p *transfer) line() string {
	if p.total <= 0 {
		return fmt.Sprintf("%s %s %s", p.label, humanBytes(p.done), p.rate())
	}
	frac := min(float64(p.done)/float64(p.total), 1)
	filled := int(frac * transferBarWidth)
	bar := strings.Repeat("=", filled)
	if filled < transferBarWidth {
		bar += ">" + strings.Repeat(" ", transferBarWidth-filled-1)
	}
	return fmt.Sprintf("%s %3d%% [%s] %s/%s %s", p.label, int(frac*100), bar, humanBytes(p.done), humanBytes(p.total), p.rate())
}

func (p *transfer) draw() { fmt.Fprintf(p.w, "\r\033[K%s", p.line()) }

// finish draws the final state and ends the line.
func (p *transfer) finish(ok bool) {
	elapsed := p.now().Sub(p.start).Round(100 * time.Millisecond)
	if p.tty {
		p.draw()
		fmt.Fprintln(p.w)
		return
	}
	if ok {
		fmt.Fprintf(p.w, "%s: done, %s in %s (%s)\n", p.label, humanBytes(p.done), elapsed, p.rate())
	} else {
		fmt.Fprintf(p.w, "%s: failed after %s\n", p.label, humanBytes(p.done))
	}
}
