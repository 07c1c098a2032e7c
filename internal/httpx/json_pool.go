package httpx

import (
	"bytes"
	"encoding/json"
	"sync"
)

// maxPooledJSON bounds the buffer a JSONBuffer keeps between answers, so
// that one large listing does not pin its memory in the pool.
const maxPooledJSON = 64 << 10

// JSONPool hands out JSON encoders that write into their own buffers.
// Pooled, an API keeps the buffer (and an indenting encoder's indentation
// buffer) from one answer to the next instead of allocating both for
// every answer; encoding into a buffer first also means nothing is
// written to the client when encoding fails, as with json.Encoder on the
// response itself.
type JSONPool struct {
	pool sync.Pool
}

// NewJSONPool returns a pool whose encoders setup configures once (for
// example SetIndent or SetEscapeHTML).
func NewJSONPool(setup func(*json.Encoder)) *JSONPool {
	p := &JSONPool{}
	p.pool.New = func() any {
		jb := &JSONBuffer{pool: p}
		jb.Enc = json.NewEncoder(&jb.Buf)
		if setup != nil {
			setup(jb.Enc)
		}
		return jb
	}
	return p
}

// Get returns an empty buffer and its encoder; Release gives it back.
func (p *JSONPool) Get() *JSONBuffer {
	return p.pool.Get().(*JSONBuffer)
}

// JSONBuffer is a pooled encoder and the buffer it writes into.
type JSONBuffer struct {
	Buf  bytes.Buffer
	Enc  *json.Encoder
	pool *JSONPool
}

// Release empties jb and returns it to its pool, unless its buffer grew
// too large to keep. jb must not be used afterwards.
func (jb *JSONBuffer) Release() {
	if jb.Buf.Cap() > maxPooledJSON {
		return
	}
	jb.Buf.Reset()
	jb.pool.pool.Put(jb)
}
