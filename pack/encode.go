package pack

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encode writes the canonical serialization of v (see Marshal) to w: for a
// digest or a count, without keeping the bytes.
//
// encoding/json builds a whole document in one buffer, grown by doubling,
// before writing it: for a pack or record of 200 MB that is a 256 MB buffer
// on every call (a heap profile of a 100,000-file pack put a quarter of its
// peak there). So a struct is written field by field, and a slice field
// element by element, each element serialized by encoding/json exactly as it
// would be inside the whole: the bytes are the same (TestEncodeMatchesJSON),
// only never held at once. A struct whose fields encoding/json treats
// specially at the top level (embedded fields, a ",string" option, its own
// MarshalJSON) is serialized whole.
func Encode(w io.Writer, v any) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() && !implementsMarshaler(rv.Type()) {
		rv = rv.Elem()
	}
	var err error
	if rv.Kind() == reflect.Struct && streamable(rv.Type()) {
		err = newStreamer(w).structValue(rv)
	} else {
		err = newStreamer(w).whole(v)
	}
	if err == nil {
		_, err = io.WriteString(w, "\n")
	}
	if err != nil {
		return fmt.Errorf("serialize: %w", err)
	}
	return nil
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

func implementsMarshaler(t reflect.Type) bool {
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
}

// streamable reports whether Encode may write t field by field.
func streamable(t reflect.Type) bool {
	if implementsMarshaler(t) {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return false
		}
		if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); strings.Contains(","+opts+",", ",string,") {
			return false
		}
	}
	return true
}

type streamer struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
	// onItem, when set, is told of each Item (a slice's element, written
	// whole) just before its serialization b is written (Finalize's token
	// counter).
	onItem func(it *Item, b []byte)
	// item holds the serialization of the last Item with a content
	// (see itemBytes).
	item []byte
}

func newStreamer(w io.Writer) *streamer {
	s := &streamer{w: w}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

// whole writes v as encoding/json does, without the final newline (an
// Item told to onItem first).
func (s *streamer) whole(v any) error {
	it, isItem := v.(*Item)
	var b []byte
	if isItem && it.Content != "" {
		var err error
		if b, err = s.itemBytes(it); err != nil {
			return err
		}
	} else {
		s.buf.Reset()
		if err := s.enc.Encode(v); err != nil {
			return err
		}
		b = bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	}
	if isItem && s.onItem != nil {
		s.onItem(it, b)
	}
	_, err := s.w.Write(b)
	return err
}

// itemBytes is encoding/json's serialization of it: the item's other
// fields by encoding/json, with the content empty, and the content by
// appendQuoted in its place. The first contentKey is the content's key, as
// noteItem also takes it: a '"' inside a string is escaped, only a key's
// closing quote is followed by ':', and no field before it has that name.
func (s *streamer) itemBytes(it *Item) ([]byte, error) {
	rest := *it
	rest.Content = ""
	s.buf.Reset()
	if err := s.enc.Encode(&rest); err != nil {
		return nil, err
	}
	enc := bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	key := bytes.Index(enc, contentKey)
	at := key + len(contentKey) - 1 // the content's opening quote
	if key < 0 || !bytes.HasPrefix(enc[at:], []byte(`""`)) {
		return nil, fmt.Errorf("serialize item %s: encoding/json wrote no empty content", it.ID)
	}
	s.item = append(s.item[:0], enc[:at]...)
	s.item = appendQuoted(s.item, it.Content)
	s.item = append(s.item, enc[at+len(`""`):]...)
	return s.item, nil
}

func (s *streamer) write(str string) error {
	_, err := io.WriteString(s.w, str)
	return err
}

func (s *streamer) structValue(rv reflect.Value) error {
	sep := "{"
	for i := range rv.NumField() {
		if err := s.field(rv, i, &sep); err != nil {
			return err
		}
	}
	return s.close(sep)
}

// field writes field i of the struct rv, unless encoding/json would leave
// it out, after *sep, which it then sets to ",".
func (s *streamer) field(rv reflect.Value, i int, sep *string) error {
	name, fv, ok := fieldOf(rv, i)
	if !ok {
		return nil
	}
	key, err := json.Marshal(name)
	if err != nil {
		return err
	}
	if err := s.write(*sep + string(key) + ":"); err != nil {
		return err
	}
	*sep = ","
	if fv.Kind() == reflect.Slice && !fv.IsNil() && fv.Type().Elem().Kind() != reflect.Uint8 {
		return s.slice(fv)
	}
	return s.whole(addressed(fv))
}

// fieldOf is the name and value of field i of the struct rv as encoding/json
// writes it; ok is false when it leaves the field out.
func fieldOf(rv reflect.Value, i int) (name string, fv reflect.Value, ok bool) {
	tag, ok := tagOf(rv.Type().Field(i))
	if !ok {
		return "", fv, false
	}
	fv = rv.Field(i)
	if tag.omitted(fv) {
		return "", fv, false
	}
	return tag.name, fv, true
}

// fieldTag is what a struct field's json tag says.
type fieldTag struct {
	name                string
	omitEmpty, omitZero bool
}

// tagOf reads f's json tag; ok is false for a field encoding/json never
// writes.
func tagOf(f reflect.StructField) (fieldTag, bool) {
	if !f.IsExported() {
		return fieldTag{}, false
	}
	name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" && opts == "" {
		return fieldTag{}, false
	}
	if name == "" {
		name = f.Name
	}
	o := "," + opts + ","
	return fieldTag{name: name, omitEmpty: strings.Contains(o, ",omitempty,"), omitZero: strings.Contains(o, ",omitzero,")}, true
}

// omitted reports whether encoding/json leaves out the field's value fv.
func (t fieldTag) omitted(fv reflect.Value) bool {
	return t.omitEmpty && isEmptyValue(fv) || t.omitZero && isZero(fv)
}

// close ends a struct whose last separator was sep.
func (s *streamer) close(sep string) error {
	if sep == "{" {
		return s.write("{}")
	}
	return s.write("}")
}

func (s *streamer) slice(rv reflect.Value) error {
	sep := "["
	for i := range rv.Len() {
		if err := s.write(sep); err != nil {
			return err
		}
		sep = ","
		if err := s.whole(addressed(rv.Index(i))); err != nil {
			return err
		}
	}
	if sep == "[" {
		return s.write("[]")
	}
	return s.write("]")
}

// addressed is v for encoding/json as it sees v inside the whole: by
// pointer when v is addressable, so that methods on the pointer apply.
func addressed(v reflect.Value) any {
	if v.CanAddr() {
		return v.Addr().Interface()
	}
	return v.Interface()
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZero is encoding/json's test for omitzero: the value's IsZero method
// when it has one, else the zero value.
func isZero(v reflect.Value) bool {
	type zeroer interface{ IsZero() bool }
	if z, ok := v.Interface().(zeroer); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	if v.CanAddr() {
		if z, ok := v.Addr().Interface().(zeroer); ok {
			return z.IsZero()
		}
	}
	return v.IsZero()
}

// Document is what json.Unmarshal into an any gives for Marshal(v): maps,
// slices, strings, float64 numbers, booleans and nil, with v's strings
// shared rather than copied. The audit validates a pack's JSON Schema on it
// once it has found the pack bytes to be exactly Marshal of the pack it
// decoded from them: the document those bytes hold, without decoding them
// a second time. It covers what Pack is made of (structs Encode streams,
// string-keyed maps, slices, pointers, strings, integers, float64, bool);
// for anything else (a Marshaler, an embedded field, a ",string" option,
// bytes, a string that is not UTF-8) it returns an error, and the caller
// decodes the bytes instead.
func Document(v any) (any, error) {
	return documentOf(reflect.ValueOf(v))
}

// DocumentParts is Document(p) in parts, for checking a large pack's
// document without all of it at once (schema.ValidatePackParts): top is
// the document of p with every non-empty slice field left out, lens has
// each such field's length under its JSON name, and element(name, i) is
// the document of its i-th element, made when asked for, from any
// goroutine.
func DocumentParts(p *Pack) (top map[string]any, lens map[string]int, element func(name string, i int) (any, error), err error) {
	rv := reflect.ValueOf(p).Elem()
	shell := reflect.New(rv.Type()).Elem()
	shell.Set(rv)
	info := documentType(rv.Type())
	if info.err != nil {
		return nil, nil, nil, info.err
	}
	lens = map[string]int{}
	arrays := map[string]reflect.Value{}
	for _, f := range info.fields {
		// A slice Document refuses ([]byte) stays in top, which then
		// fails as Document does.
		fv := rv.Field(f.index)
		if fv.Kind() == reflect.Slice && fv.Len() > 0 && documentType(fv.Type()).err == nil {
			lens[f.tag.name] = fv.Len()
			arrays[f.tag.name] = fv
			shell.Field(f.index).SetZero()
		}
	}
	doc, err := documentOf(shell)
	if err != nil {
		return nil, nil, nil, err
	}
	top = doc.(map[string]any)
	for name := range lens {
		delete(top, name)
	}
	element = func(name string, i int) (any, error) {
		return documentOf(arrays[name].Index(i))
	}
	return top, lens, element, nil
}

var textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()

// docType is what Document needs of a type, found once per process (types
// do not change; encoding/json caches the same way): whether Document
// covers its values (not their elements), and a struct's fields.
type docType struct {
	err    error
	fields []docField
}

var docTypes sync.Map // reflect.Type → *docType

type docField struct {
	index int
	tag   fieldTag
}

// fieldsOf lists the fields of struct type t encoding/json may write. Two
// of one name are refused: which one encoding/json writes then depends on
// their tags.
func fieldsOf(t reflect.Type) ([]docField, error) {
	var fs []docField
	names := map[string]bool{}
	for i := range t.NumField() {
		tag, ok := tagOf(t.Field(i))
		if !ok {
			continue
		}
		if names[tag.name] {
			return nil, fmt.Errorf("document: %s has two fields named %q", t, tag.name)
		}
		names[tag.name] = true
		fs = append(fs, docField{i, tag})
	}
	return fs, nil
}

// documentType says whether Document covers values of t, and lists a
// struct's fields.
func documentType(t reflect.Type) *docType {
	if d, ok := docTypes.Load(t); ok {
		return d.(*docType)
	}
	d := &docType{}
	switch {
	case implementsMarshaler(t) || t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType):
		d.err = fmt.Errorf("document: %s serializes itself", t)
	case t.Kind() == reflect.Struct && !streamable(t):
		d.err = fmt.Errorf("document: %s has fields encoding/json treats specially", t)
	case t.Kind() == reflect.Struct:
		d.fields, d.err = fieldsOf(t)
	case t.Kind() == reflect.Map && t.Key().Kind() != reflect.String:
		d.err = fmt.Errorf("document: %s has keys that are not strings", t)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		d.err = fmt.Errorf("document: %s is written as base64", t)
	}
	actual, _ := docTypes.LoadOrStore(t, d)
	return actual.(*docType)
}

// documentOf is the document of v; see Document.
func documentOf(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	t := v.Type()
	info := documentType(t)
	if info.err != nil {
		return nil, info.err
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return documentOf(v.Elem())
	case reflect.Struct:
		// A map sized to the fields written, not to all: a large pack
		// has thousands of these at once, most fields omitted.
		fs := info.fields
		n := 0
		for _, f := range fs {
			if !f.tag.omitted(v.Field(f.index)) {
				n++
			}
		}
		m := make(map[string]any, n)
		for _, f := range fs {
			fv := v.Field(f.index)
			if f.tag.omitted(fv) {
				continue
			}
			doc, err := documentOf(fv)
			if err != nil {
				return nil, err
			}
			m[f.tag.name] = doc
		}
		return m, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		m := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("document: a key of %s is not UTF-8", t)
			}
			doc, err := documentOf(it.Value())
			if err != nil {
				return nil, err
			}
			m[k] = doc
		}
		return m, nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		fallthrough
	case reflect.Array:
		a := make([]any, v.Len())
		for i := range a {
			doc, err := documentOf(v.Index(i))
			if err != nil {
				return nil, err
			}
			a[i] = doc
		}
		return a, nil
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("document: a %s is not UTF-8", t)
		}
		return s, nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// Both round to the nearest float64: the decoder parsing the
		// digits, the conversion the integer.
		return float64(v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(v.Uint()), nil
	case reflect.Float64:
		// encoding/json writes the shortest digits that parse back to
		// the same float64; it refuses NaN and infinities.
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("document: %v is not a JSON number", f)
		}
		return f, nil
	}
	return nil, fmt.Errorf("document: %s is not covered", t)
}
