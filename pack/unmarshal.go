package pack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ctxpack/ctxpack/internal/workers"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Unmarshal decodes pack bytes into p exactly as encoding/json's Unmarshal
// does, about twice as fast on a large pack (10,000 files: 156 -> 74 ms).
// encoding/json/v2 (go-json-experiment/json, the module it is mirrored
// from) decodes first, strictly: every member a field of that exact name,
// none twice, every string valid UTF-8 and every escape a character. Bytes
// it takes give the value encoding/json gives (FuzzUnmarshal); any others
// (a member named in another case, a lone surrogate, invalid UTF-8, a
// syntax error) are decoded by encoding/json itself, with its leniency and
// its errors.
//
// A string without an escape is not copied: p's strings share data's
// memory (a large pack's paths, ids and digests are held once, in its
// bytes; its contents, whose newlines are escapes, are still copied), so
// data must not change while p is in use.
//
// A large pack's arrays of items, index entries and changes are decoded on
// every core (unmarshalSplit): the same value, as the strict decoder would
// give it, or else the whole is decoded as above.
func Unmarshal(data []byte, p *Pack) error {
	return unmarshal(data, p, splitFromBytes)
}

// splitFromBytes is the size from which Unmarshal decodes a pack's arrays
// apart: a 20 MB pack (prometheus' full tree) took ~120 ms of one core,
// the other idle, between the build and the audit's checks.
const splitFromBytes = 1 << 20

func unmarshal(data []byte, p *Pack, splitFrom int) error {
	if len(data) >= splitFrom && reflect.ValueOf(p).Elem().IsZero() {
		if unmarshalSplit(data, p) {
			return nil
		}
		*p = Pack{}
	}
	if err := jsonv2.Unmarshal(data, p, strict...); err == nil {
		return nil
	}
	*p = Pack{}
	return json.Unmarshal(data, p)
}

// strict is how the strict decoder is called.
var strict = []jsonv2.Options{jsonv2.RejectUnknownMembers(true), sharedStrings}

// sharedStrings decodes a JSON string without an escape as the bytes
// between its quotes, in place. The decoder of a byte slice reads that
// slice itself and never writes to it; it has checked the value (valid
// UTF-8, no control character) before this sees it.
var sharedStrings = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *string) error {
	if dec.PeekKind() != '"' {
		return errors.ErrUnsupported // null, or not a string: decoded as before
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	raw := v[1 : len(v)-1]
	switch {
	case len(raw) == 0:
		*s = ""
	case bytes.IndexByte(raw, '\\') < 0:
		*s = unsafe.String(unsafe.SliceData(raw), len(raw))
	default:
		u, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return err
		}
		*s = unsafe.String(unsafe.SliceData(u), len(u)) // u is this string's own
	}
	return nil
}))

// splitFields are the Pack fields, by JSON name, whose arrays
// unmarshalSplit decodes element by element: those that grow with the
// tree or the change.
var splitFields = sync.OnceValue(func() map[string]int {
	out := map[string]int{}
	for _, f := range documentType(reflect.TypeFor[Pack]()).fields {
		switch f.tag.name {
		case "file_index", "changes", "key_files", "contents":
			out[f.tag.name] = f.index
		}
	}
	return out
})

// unmarshalSplit decodes data into the zero pack p as the strict decoder
// would, its large arrays' elements on every core; false when it cannot
// (p is then to be reset and decoded whole). topArrays finds the arrays
// and their elements by a quick look that checks little; the strict
// decoder then checks all of it: each element alone, and the rest (the
// skeleton: data with each array's elements cut out, its brackets kept)
// as one document. The skeleton's bytes up to a cut are data's, so a
// decoder that takes it reads each cut's '[' as data does, the value of
// that member of the top object; every element a JSON value and every
// separator a comma between blanks, data is the skeleton with those
// arrays filled, and its value the skeleton's with those elements.
func unmarshalSplit(data []byte, p *Pack) bool {
	arrays, ok := topArrays(data, splitFields())
	if !ok || len(arrays) == 0 {
		return false
	}
	skeleton := make([]byte, 0, 4096)
	at := 0
	for _, a := range arrays {
		skeleton = append(skeleton, data[at:a.open+1]...)
		at = a.close
	}
	skeleton = append(skeleton, data[at:]...)
	if err := jsonv2.Unmarshal(skeleton, p, strict...); err != nil {
		return false
	}
	type chunk struct {
		slice      reflect.Value
		elems      [][2]int
		first, end int // the chunk's elements' indexes
	}
	var chunks []chunk
	slices := make([]reflect.Value, len(arrays))
	for k, a := range arrays {
		f := reflect.ValueOf(p).Elem().Field(a.field)
		if f.Kind() != reflect.Slice || f.IsNil() || f.Len() != 0 {
			return false // not the array the skeleton's "[]" decoded to
		}
		slices[k] = reflect.MakeSlice(f.Type(), len(a.elems), len(a.elems))
		for i := 0; i < len(a.elems); i += splitChunk {
			chunks = append(chunks, chunk{slices[k], a.elems, i, min(i+splitChunk, len(a.elems))})
		}
	}
	err := workers.Each(context.Background(), len(chunks), runtime.GOMAXPROCS(0), func(_ context.Context, k int) error {
		c := chunks[k]
		for i := c.first; i < c.end; i++ {
			e := c.elems[i]
			if err := jsonv2.Unmarshal(data[e[0]:e[1]], c.slice.Index(i).Addr().Interface(), strict...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false
	}
	for k, a := range arrays {
		reflect.ValueOf(p).Elem().Field(a.field).Set(slices[k])
	}
	return true
}

// splitChunk is how many elements one task of unmarshalSplit decodes.
const splitChunk = 32

// splitArray is a non-empty array topArrays found: the Pack field it is
// the value of, its brackets' offsets and its elements' byte ranges.
type splitArray struct {
	field       int
	open, close int
	elems       [][2]int
}

// topArrays finds, in a JSON object, the non-empty arrays that are the
// values of its members named in fields. It follows strings (their
// escaped quotes) and nesting, and checks nothing else: what it finds is
// for unmarshalSplit's strict decoder to check. false when data does not
// look like such an object. jsontext's Decoder finds the same with
// ReadValue and InputOffset, but checks each byte on the way, one core's
// work before the others can start: BenchmarkUnmarshal 19–23.5 ms with
// it, 14–16 with this look, 23.5–28 decoded whole.
func topArrays(data []byte, fields map[string]int) ([]splitArray, bool) {
	i := skipBlank(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	var out []splitArray
	i = skipBlank(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil, true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		end, ok := skipString(data, i)
		if !ok {
			return nil, false
		}
		field, named := fields[string(data[i+1:end-1])]
		i = skipBlank(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipBlank(data, i+1)
		if i >= len(data) {
			return nil, false
		}
		if named && data[i] == '[' {
			a := splitArray{field: field, open: i}
			i = skipBlank(data, i+1)
			for i < len(data) && data[i] != ']' {
				end, ok := skipValue(data, i)
				if !ok {
					return nil, false
				}
				a.elems = append(a.elems, [2]int{i, end})
				i = skipBlank(data, end)
				if i < len(data) && data[i] == ',' {
					i = skipBlank(data, i+1)
					if i < len(data) && data[i] == ']' {
						return nil, false // a comma before the bracket
					}
				} else if i >= len(data) || data[i] != ']' {
					return nil, false
				}
			}
			if i >= len(data) {
				return nil, false
			}
			a.close = i
			i++
			if len(a.elems) > 0 {
				out = append(out, a)
			}
		} else {
			if i, ok = skipValue(data, i); !ok {
				return nil, false
			}
		}
		i = skipBlank(data, i)
		if i >= len(data) {
			return nil, false
		}
		if data[i] == '}' {
			return out, true
		}
		if data[i] != ',' {
			return nil, false
		}
		i = skipBlank(data, i+1)
	}
}

// skipBlank is the offset of the first byte from i on that is not JSON
// whitespace.
func skipBlank(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}

// skipString is the offset just past the string that starts at i (a
// quote): the first quote after it that an odd run of backslashes does
// not escape.
func skipString(data []byte, i int) (int, bool) {
	from := i + 1
	for {
		q := bytes.IndexByte(data[from:], '"')
		if q < 0 {
			return 0, false
		}
		q += from
		slashes := 0
		for q-1-slashes >= from && data[q-1-slashes] == '\\' {
			slashes++
		}
		if slashes%2 == 0 {
			return q + 1, true
		}
		from = q + 1
	}
}

// skipValue is the offset just past the value that starts at i: a
// string, an object or array (to its matching bracket), or a run of other
// bytes up to a delimiter.
func skipValue(data []byte, i int) (int, bool) {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	start := i
	for i < len(data) && !strings.ContainsRune(",]} \n\r\t", rune(data[i])) {
		i++
	}
	return i, i > start
}
