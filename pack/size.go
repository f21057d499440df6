package pack

import (
	"context"
	"encoding/json"
	"math/bits"
	"reflect"
	"runtime"
	"strconv"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/workers"
)

// serializedSizeBound is at least the size of p's canonical serialization,
// and close to it: the fields written, each string at its exact escaped
// length, each integer at its length, each float at its widest. Finalize sizes
// its buffer to it: past its capacity a buffer is copied into a larger one,
// the pack held twice for a moment (10,000 files: +40 MB of peak RSS), and
// capacity left unused is heap the collector counts (10,000 files, a hint
// a half over: +12 MB of live heap at the audit's peak).
func serializedSizeBound(p *Pack) int {
	return sizeBound(reflect.ValueOf(p).Elem()) + len("\n")
}

// sizeBound is at least the length of encoding/json's serialization of v.
func sizeBound(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return quotedLen(v.String())
	case reflect.Bool:
		if v.Bool() {
			return len("true")
		}
		return len("false")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var digits [24]byte
		return len(strconv.AppendInt(digits[:0], v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var digits [24]byte
		return len(strconv.AppendUint(digits[:0], v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		return len("-1.2345678901234567e-308")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return len("null")
		}
		return sizeBound(v.Elem())
	}
	info := documentType(v.Type())
	if info.err != nil {
		// A type that serializes itself: its serialization, measured.
		data, err := json.Marshal(v.Interface())
		if err != nil {
			return 0 // Finalize reports the error
		}
		return len(data)
	}
	n := len("{}")
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range info.fields {
			if fv := v.Field(f.index); !f.tag.omitted(fv) {
				n += quotedLen(f.tag.name) + len(":,") + sizeBound(fv)
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			n += quotedLen(it.Key().String()) + len(":,") + sizeBound(it.Value())
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return len("null")
		}
		n += len(",") * v.Len()
		if v.Len() < parallelBoundFrom {
			for i := range v.Len() {
				n += sizeBound(v.Index(i))
			}
			break
		}
		// A full tree's items, ~20 MB of contents measured byte by byte
		// (~25 ms of one core) before the serialization can start: on
		// every core.
		sizes := make([]int, v.Len())
		_ = workers.Each(context.Background(), v.Len(), runtime.GOMAXPROCS(0), func(_ context.Context, i int) error {
			sizes[i] = sizeBound(v.Index(i))
			return nil
		})
		for _, size := range sizes {
			n += size
		}
	}
	return n
}

// parallelBoundFrom is the length of a slice from which sizeBound measures
// its elements on every core.
const parallelBoundFrom = 256

// extraBytes is how many bytes encoding/json adds to an ASCII byte in a
// string (HTML characters not escaped, as in every serialization of
// ctxpack's): one for a two-character escape, five for \u00XX.
var extraBytes = func() (t [utf8.RuneSelf]int8) {
	for b := range utf8.RuneSelf {
		switch {
		case b == '"', b == '\\', b == '\b', b == '\f', b == '\n', b == '\r', b == '\t':
			t[b] = 1
		case b < 0x20:
			t[b] = 5
		}
	}
	return t
}()

// quotedLen is the length of s as encoding/json writes it, quotes and
// escapes included (HTML characters not escaped): an invalid byte becomes
// \ufffd, U+2028 and U+2029 are written \u2028 and \u2029.
func quotedLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			w := word(s, i)
			m := needsLook(w)
			if m == 0 {
				i += 8
				continue
			}
			if w&highBits == 0 {
				// Eight ASCII bytes: each mark is one to escape (a
				// source file's newlines, tabs and quotes, word after
				// word), counted here without leaving the word; a
				// control character other than \n and \t takes a look
				// at the table.
				n += bits.OnesCount64(m)
				for rare := m & controlsBeyond(w); rare != 0; rare &= rare - 1 {
					n += int(extraBytes[byte(w>>(bits.TrailingZeros64(rare)-7))]) - 1
				}
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		}
		b := s[i]
		if b < utf8.RuneSelf {
			n += int(extraBytes[b])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += len(`\ufffd`) - 1
		case r == '\u2028' || r == '\u2029':
			n += len(`\u2028`) - size
		}
		i += size
	}
	return n
}
