package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ctxpack/ctxpack/pack"
)

// The integrity check re-serializes the pack twice (to compare it with the
// bytes and to derive the pack id). For a large pack each pack.Marshal is a
// few hundred MB, alive next to the pack bytes and the decoded pack (a
// profile of a 100,000-file full pack put ~40% of the peak heap there), so
// these stream the same serialization into a comparison and a hash instead
// of keeping it.

// encodeCanonical writes v as pack.Marshal serializes it (encoding/json,
// HTML not escaped, a final newline).
func encodeCanonical(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("serialize: %w", err)
	}
	return nil
}

// sameAsMarshal reports whether pack.Marshal(p) would give exactly data.
func sameAsMarshal(p *pack.Pack, data []byte) (bool, error) {
	w := &compareWriter{want: data, same: true}
	if err := encodeCanonical(w, p); err != nil {
		return false, err
	}
	return w.same && w.off == len(data), nil
}

// contentDigest is pack.ContentDigest(p), hashed as it is serialized.
func contentDigest(p *pack.Pack) ([32]byte, error) {
	c := *p
	c.PackID = ""
	c.Budget.UsedChars = 0
	h := sha256.New()
	if err := encodeCanonical(h, &c); err != nil {
		return [32]byte{}, err
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
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
