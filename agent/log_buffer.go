package agent

import (
	"bytes"
	"sync"
)

// DefaultLogBufferLines is how many recent log lines an agent keeps for
// GET /v1/agent/logs (and `cloudctl operator debug`).
const DefaultLogBufferLines = 1000

// maxLogLine bounds one kept line, so a huge entry cannot make the
// buffer hold much more than lines × a normal line.
const maxLogLine = 16 << 10

// LogBuffer keeps an agent's most recent log lines in memory, for
// operators who cannot reach its log_file: written to beside stderr
// (command/agent.go), read by the native API. It is an io.Writer that
// hclog writes whole entries to.
type LogBuffer struct {
	mu    sync.Mutex
	lines [][]byte // a ring of up to max lines, oldest at next
	next  int
	max   int
	// partial is a line a write left unfinished.
	partial []byte
}

// NewLogBuffer keeps the last lines lines (DefaultLogBufferLines when
// lines < 1).
func NewLogBuffer(lines int) *LogBuffer {
	if lines < 1 {
		lines = DefaultLogBufferLines
	}
	return &LogBuffer{max: lines}
}

// Write keeps p's complete lines; it never fails.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			b.partial = appendCapped(b.partial, rest)
			break
		}
		line := appendCapped(b.partial, rest[:i+1])
		b.partial = nil
		b.keep(line)
		rest = rest[i+1:]
	}
	return len(p), nil
}

// appendCapped appends p to line, keeping at most maxLogLine bytes.
func appendCapped(line, p []byte) []byte {
	if room := maxLogLine - len(line); len(p) > room {
		p = p[:max(room, 0)]
	}
	return append(line, p...)
}

func (b *LogBuffer) keep(line []byte) {
	line = bytes.Clone(line)
	if len(b.lines) < b.max {
		b.lines = append(b.lines, line)
		return
	}
	b.lines[b.next] = line
	b.next = (b.next + 1) % b.max
}

// Bytes are the kept lines, oldest first.
func (b *LogBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out bytes.Buffer
	for i := range b.lines {
		out.Write(b.lines[(b.next+i)%len(b.lines)])
	}
	return out.Bytes()
}
