package audit

import (
	"bytes"

	"github.com/ctxpack/ctxpack/pack"
)

// canonicalDigest reports whether pack.Marshal(p) would give exactly data,
// comparing as it serializes rather than keeping a second copy of a pack
// that can be tens of MB, and returns pack.ContentDigest(p), taken from the
// same serialization.
func canonicalDigest(p *pack.Pack, data []byte) (same bool, digest [32]byte, err error) {
	w := &compareWriter{want: data, same: true}
	if digest, err = pack.EncodeDigest(w, p); err != nil {
		return false, digest, err
	}
	return w.same && w.off == len(data), digest, nil
}

// compareWriter compares what is written with want.
type compareWriter struct {
	want []byte
	off  int
	same bool
}

func (w *compareWriter) Write(b []byte) (int, error) {
	end := w.off + len(b)
	if w.same && (end > len(w.want) || !bytes.Equal(w.want[w.off:end], b)) {
		w.same = false
	}
	w.off = end
	return len(b), nil
}
