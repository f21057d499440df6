package pack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ctxpack/ctxpack/internal/workers"
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
// A pack of splitDecodeMin bytes or more has its large arrays decoded in
// parts on every core (unmarshalSplit): the audit's decode of a full
// tree's pack ran alone on one core (10,000 files: ~70 ms).
func Unmarshal(data []byte, p *Pack) error {
	if len(data) >= splitDecodeMin {
		if unmarshalSplit(data, p, splitChunk) {
			return nil
		}
		*p = Pack{}
	}
	if err := jsonv2.Unmarshal(data, p, jsonv2.RejectUnknownMembers(true)); err == nil {
		return nil
	}
	*p = Pack{}
	return json.Unmarshal(data, p)
}

var strict = jsonv2.RejectUnknownMembers(true)

const (
	// splitDecodeMin is the smallest pack decoded in parts.
	splitDecodeMin = 1 << 20
	// splitChunk is about how many bytes of an array one part holds.
	splitChunk = 1 << 20
)

// splitArray is a top-level array of the pack that unmarshalSplit decodes
// in parts: its member's name, the bytes that stand between two of its
// elements as Marshal writes them (the end of one object, a comma and the
// start of the next, whose first member Marshal always writes), and how
// to decode and assemble its parts.
type splitArray interface {
	name() string
	between() string
	// decode decodes one part, a JSON array read from r; n is the number
	// of elements it held.
	decode(dec *jsontext.Decoder) (part any, n int, err error)
	// set stores the parts, in order, as the array's value in p.
	set(p *Pack, parts []any, n int)
}

type arrayOf[T any] struct {
	member, first string
	field         func(*Pack) *[]T
}

func (a arrayOf[T]) name() string    { return a.member }
func (a arrayOf[T]) between() string { return `},{"` + a.first + `":` }

func (a arrayOf[T]) decode(dec *jsontext.Decoder) (any, int, error) {
	var part []T
	err := jsonv2.UnmarshalDecode(dec, &part, strict)
	return part, len(part), err
}

func (a arrayOf[T]) set(p *Pack, parts []any, n int) {
	if n == 0 {
		return // the empty array the rest decoded to
	}
	all := make([]T, 0, n)
	for _, part := range parts {
		all = append(all, part.([]T)...)
	}
	*a.field(p) = all
}

// splitArrays are the arrays a large pack's bytes are in: the file index,
// the changes and the contents.
var splitArrays = []splitArray{
	arrayOf[IndexEntry]{"file_index", "path", func(p *Pack) *[]IndexEntry { return &p.FileIndex }},
	arrayOf[Change]{"changes", "path", func(p *Pack) *[]Change { return &p.Changes }},
	arrayOf[Item]{"key_files", "id", func(p *Pack) *[]Item { return &p.KeyFiles }},
	arrayOf[Item]{"contents", "id", func(p *Pack) *[]Item { return &p.Contents }},
}

// splitPart is one part of an array: the bytes of some of its elements,
// data[start:end], the commas between them included; last for the part
// that runs to the array's end, which its decode finds (as it finds it
// in a middle part the array ends in).
type splitPart struct {
	array      int // index in found
	start, end int
	last       bool
}

// foundArray is a split array where its bytes seem to be: the interior of
// `"name":[…]` from start (after the '[') to end (at the ']', -1 until
// its parts' decode finds it), and the elements of its parts.
type foundArray struct {
	a          splitArray
	start, end int
	parts      []any
	n          int
}

// unmarshalSplit decodes data into p as jsonv2.Unmarshal with strict does,
// the elements of the large arrays in parts on every core, and reports
// whether it could; when it could not (bytes Marshal would not write,
// and any that do not decode), p holds anything and the caller decodes
// data whole. A part holds about chunk bytes.
//
// Where an array and its parts are is guessed from the bytes, then
// proved: every part decodes to the end of its bytes as the elements of
// an array ("[" part "]"; a part that ends inside a string or an object
// cannot), so each array's interior is a list of elements; and the
// document with those interiors taken out (the rest) decodes, with each
// interior's place in it exactly the value, "[]", of the top-level member
// of that array's name. The bytes are then that document with those
// elements in those arrays, which is what decoding them whole gives.
func unmarshalSplit(data []byte, p *Pack, chunk int) bool {
	var found []*foundArray
	for _, a := range splitArrays {
		i := bytes.Index(data, []byte(`"`+a.name()+`":[`))
		if i < 0 {
			continue
		}
		found = append(found, &foundArray{a: a, start: i + len(a.name()) + 4, end: -1})
	}
	if len(found) == 0 {
		return false
	}
	slices.SortFunc(found, func(x, y *foundArray) int { return x.start - y.start })
	// Each array's parts: cut at the first separator of its elements
	// after every chunk bytes, before the next array starts.
	var parts []splitPart
	for k, f := range found {
		limit := len(data)
		if k+1 < len(found) {
			limit = found[k+1].start
		}
		sep := []byte(f.a.between())
		from := f.start
		for {
			at := from + chunk
			if at >= limit {
				break
			}
			j := bytes.Index(data[at:limit], sep)
			if j < 0 {
				break
			}
			comma := at + j + 1
			parts = append(parts, splitPart{array: k, start: from, end: comma})
			from = comma + 1
		}
		parts = append(parts, splitPart{array: k, start: from, end: limit, last: true})
	}
	// Every part is decoded, each on its own: the first of an array's parts
	// that closes it ends the array (a cut after its end, in what follows
	// it, made parts that are not the array's).
	type decoded struct {
		part   any
		n      int
		closed int // where the array's ']' is, -1 when past the part
		err    error
	}
	out := make([]decoded, len(parts))
	_ = workers.Each(context.Background(), len(parts), runtime.GOMAXPROCS(0), func(_ context.Context, i int) error {
		pt := parts[i]
		in := []io.Reader{strings.NewReader("["), bytes.NewReader(data[pt.start:pt.end])}
		if !pt.last {
			in = append(in, strings.NewReader("]"))
		}
		dec := jsontext.NewDecoder(io.MultiReader(in...))
		d := &out[i]
		if d.part, d.n, d.err = found[pt.array].a.decode(dec); d.err != nil {
			return nil
		}
		// The bytes of data the part's array took, its ']' included: all
		// of a middle part's but when the array ends inside it.
		if used := int(dec.InputOffset()) - 1; pt.last || used <= pt.end-pt.start {
			d.closed = pt.start + used - 1
		} else {
			d.closed = -1
		}
		return nil
	})
	for i, pt := range parts {
		f := found[pt.array]
		if f.end >= 0 {
			continue // a part after the array's end
		}
		if out[i].err != nil {
			return false
		}
		f.parts = append(f.parts, out[i].part)
		f.n += out[i].n
		f.end = out[i].closed
	}
	// The rest: data without the arrays' interiors.
	var rest []byte
	at := make([]int, len(found)) // where each interior was, in rest
	prev := 0
	for k, f := range found {
		if f.end < f.start || f.start < prev { // never closed, or overlapping
			return false
		}
		rest = append(rest, data[prev:f.start]...)
		at[k] = len(rest)
		prev = f.end
	}
	rest = append(rest, data[prev:]...)
	if !interiorsAreMembers(rest, found, at) {
		return false
	}
	if err := jsonv2.Unmarshal(rest, p, strict); err != nil {
		return false
	}
	for _, f := range found {
		f.a.set(p, f.parts, f.n)
	}
	return true
}

// interiorsAreMembers reports whether rest is an object each of whose
// found arrays' places (at) is the inside of the value `[]` of its
// top-level member of that name, directly after its colon.
func interiorsAreMembers(rest []byte, found []*foundArray, at []int) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(rest))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	matched := 0
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		name, after := tok.String(), int(dec.InputOffset())
		if err := dec.SkipValue(); err != nil {
			return false
		}
		for k, f := range found {
			if f.a.name() == name && at[k] == after+2 {
				if string(rest[after:dec.InputOffset()]) != ":[]" {
					return false
				}
				matched++
			}
		}
	}
	return matched == len(found)
}
