package imagecache

import (
	"io"
	"os"
)

// sparseBlock is the unit of zero detection: an all-zero block is
// skipped with a seek instead of written, so sparse images stay sparse.
const sparseBlock = 64 << 10

// copySparse copies src to f, passing every byte to hash as well, and
// returns how many bytes it copied. Zero blocks leave holes in f; f is
// truncated to the full length at the end.
func copySparse(hash io.Writer, f *os.File, src io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	for {
		m, err := io.ReadFull(src, buf)
		if m > 0 {
			if werr := writeSparse(f, buf[:m]); werr != nil {
				return n, werr
			}
			if _, werr := hash.Write(buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, f.Truncate(n)
		}
		if err != nil {
			return n, err
		}
	}
}

// writeSparse writes p at f's offset, seeking over zero blocks.
func writeSparse(f *os.File, p []byte) error {
	for len(p) > 0 {
		k := min(len(p), sparseBlock)
		if isZero(p[:k]) {
			if _, err := f.Seek(int64(k), io.SeekCurrent); err != nil {
				return err
			}
		} else if _, err := f.Write(p[:k]); err != nil {
			return err
		}
		p = p[k:]
	}
	return nil
}

func isZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}
