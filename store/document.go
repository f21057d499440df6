package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Limits of an agent document.
const (
	MaxDocumentBytes = 1 << 20
	MaxSections      = 64
	maxDepth         = 64
)

// sectionKeyRE is what a section key may be: it names the section in
// revision_conflict and finalize_validation details.
var sectionKeyRE = regexps.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Document is an agent's document: its sections by key, each as canonical
// JSON (keys sorted, no insignificant space), so equal documents are equal
// bytes and a section's digest says whether it changed.
type Document map[string]json.RawMessage

// Keys are the section keys, sorted.
func (d Document) Keys() []string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParseDocument reads a document: one JSON object of at most
// MaxDocumentBytes, whose keys are section keys; no key repeats in any
// object, nesting is at most 64 deep. Each section is made canonical.
func ParseDocument(data []byte) (Document, error) {
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return nil, invalid(map[string]any{"requested_field": "document", "required_fields": []string{"document"}},
			"write: document is required: a JSON object of sections (for example scope, findings, qa)")
	}
	if len(data) > MaxDocumentBytes {
		return nil, invalid(map[string]any{"requested_field": "document", "max_bytes": MaxDocumentBytes, "bytes": len(data)},
			"write: the document is %d bytes, over the limit of %d", len(data), MaxDocumentBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkValue(dec, 0, ""); err != nil {
		return nil, invalid(map[string]any{"requested_field": "document", "reason": err.Error()}, "write: document: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid(map[string]any{"requested_field": "document", "reason": "trailing data"}, "write: document: trailing data after the JSON object")
	}
	var tree any
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, invalid(map[string]any{"requested_field": "document", "reason": err.Error()}, "write: document: %v", err)
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, invalid(map[string]any{"requested_field": "document", "expected_type": "object"},
			"write: document must be a JSON object of sections, not %s", jsonType(tree))
	}
	if len(obj) > MaxSections {
		return nil, invalid(map[string]any{"requested_field": "document", "max_sections": MaxSections, "sections": len(obj)},
			"write: the document has %d sections, over the limit of %d", len(obj), MaxSections)
	}
	doc := Document{}
	var bad []string
	for k, v := range obj {
		if !sectionKeyRE().MatchString(k) {
			bad = append(bad, k)
			continue
		}
		raw, err := canonical(v)
		if err != nil {
			return nil, invalid(map[string]any{"requested_field": "document", "section": k}, "write: document section %s: %v", k, err)
		}
		doc[k] = raw
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, invalid(map[string]any{"requested_field": "document", "invalid_section_keys": clipKeys(bad), "allowed_pattern": sectionKeyRE().String()},
			"write: invalid section key(s) %s: use lower-case letters, digits and _ (starting with a letter, at most 64)", strings.Join(quoteAll(clipKeys(bad)), ", "))
	}
	return doc, nil
}

// checkValue reads one JSON value from dec, failing on a repeated key or
// nesting deeper than maxDepth (encoding/json keeps the last of a repeated
// key silently, so two readers could see two documents).
func checkValue(dec *json.Decoder, depth int, at string) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than %d at %s", maxDepth, orRoot(at))
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("not valid JSON: %w", err)
			}
			k, _ := kt.(string)
			if seen[k] {
				return fmt.Errorf("key %q repeats at %s", clip(k, 64), orRoot(at))
			}
			seen[k] = true
			if err := checkValue(dec, depth+1, at+"/"+pointerEscape(k)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, depth+1, at+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	}
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return nil
}

func orRoot(at string) string {
	if at == "" {
		return "the top level"
	}
	return clip(at, 120)
}

// canonical is v as JSON with sorted keys, without HTML escaping.
func canonical(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// decodeSection turns a canonical section back into a tree.
func decodeSection(raw json.RawMessage) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return v
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	}
	return "an object"
}

// pointerEscape escapes a key for a JSON pointer (RFC 6901).
func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// textOf is one string of a document (a key or a value) and where it is.
type textOf struct {
	pointer string
	text    string
}

// strings lists every key and string value of the document with its JSON
// pointer, in a fixed order: what the secret scan reads. A member with a
// scalar value is listed once more as its JSON text ("key": value), so
// that rules which need the key beside the value (password = …, an AWS
// secret key) see both, as they would in a packed JSON file.
func (d Document) strings() []textOf {
	var out []textOf
	var walk func(at, key string, v any)
	walk = func(at, key string, v any) {
		switch t := v.(type) {
		case []any:
			for i, e := range t {
				walk(at+"/"+strconv.Itoa(i), "", e)
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				out = append(out, textOf{at + "/" + pointerEscape(k), k})
				walk(at+"/"+pointerEscape(k), k, t[k])
			}
		default:
			if s, ok := t.(string); ok {
				out = append(out, textOf{at, s})
			}
			if key != "" && t != nil {
				out = append(out, textOf{at, jsonText(key) + ": " + jsonText(t)})
			}
		}
	}
	for _, k := range d.Keys() {
		out = append(out, textOf{"/" + k, k})
		walk("/"+k, k, decodeSection(d[k]))
	}
	return out
}

// jsonText is v as JSON without HTML escaping, as a JSON file spells it.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// refAt is a ref written in a document: the section, the JSON pointer of
// the value and the text (a string, or "" with a non-string value).
type refAt struct {
	section string
	pointer string
	text    string
	ok      bool // the value is a string
}

// refs lists the refs of a document: every string of a "refs" array and
// every "ref" string, at any depth, in a fixed order.
func (d Document) refs() []refAt {
	var out []refAt
	for _, sec := range d.Keys() {
		var walk func(at string, v any)
		walk = func(at string, v any) {
			switch t := v.(type) {
			case []any:
				for i, e := range t {
					walk(at+"/"+strconv.Itoa(i), e)
				}
			case map[string]any:
				keys := make([]string, 0, len(t))
				for k := range t {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					p := at + "/" + pointerEscape(k)
					switch k {
					case "refs":
						if list, ok := t[k].([]any); ok {
							for i, e := range list {
								s, isStr := e.(string)
								out = append(out, refAt{sec, p + "/" + strconv.Itoa(i), s, isStr})
							}
							continue
						}
						s, isStr := t[k].(string)
						out = append(out, refAt{sec, p, s, isStr})
						continue
					case "ref":
						s, isStr := t[k].(string)
						out = append(out, refAt{sec, p, s, isStr})
						continue
					}
					walk(p, t[k])
				}
			}
		}
		walk("/"+sec, decodeSection(d[sec]))
	}
	return out
}

// hasSubstance reports a section that says something: a non-blank string
// as the whole section, or at any depth a non-blank description or summary,
// or a non-empty refs or diagrams list.
func hasSubstance(v any) bool {
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t) != ""
	case []any:
		for _, e := range t {
			if hasSubstance(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range t {
			switch k {
			case "description", "summary":
				if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
					return true
				}
			case "refs", "diagrams":
				if l, ok := e.([]any); ok && len(l) > 0 {
					return true
				}
			}
			if _, nested := e.(string); !nested && hasSubstance(e) {
				return true
			}
		}
	}
	return false
}

// sectionDigests are the sha256 of each canonical section.
func (d Document) sectionDigests() map[string]string {
	out := make(map[string]string, len(d))
	for k, v := range d {
		out[k] = sha256Hex(v)
	}
	return out
}

// MarshalJSON writes the document as canonical JSON (sections by key).
func (d Document) MarshalJSON() ([]byte, error) {
	if d == nil {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range d.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(d[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func clipKeys(keys []string) []string {
	const most = 20
	out := make([]string, 0, min(len(keys), most))
	for _, k := range keys[:min(len(keys), most)] {
		out = append(out, clip(k, 64))
	}
	return out
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strconv.Quote(s)
	}
	return out
}
