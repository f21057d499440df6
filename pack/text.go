package pack

import (
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// TruncationMarker is seed 000's marker between the kept head and tail.
const TruncationMarker = "\n... [truncated] ...\n"

// DecodeText turns a file's bytes into the text a pack's items are cut
// from, in the encoding an item names (utf-8, latin-1, utf-16le/be): what
// an audit re-derives items from.
func DecodeText(data []byte, encoding string) (string, error) {
	switch encoding {
	case EncUTF8, EncLatin1, EncUTF16LE, EncUTF16BE:
		return decode(data, encoding)
	}
	return "", fmt.Errorf("unknown encoding %q", encoding)
}

// TextOf is the text a pack cuts a file's items from when it reads data
// as text (the content sniff, then decoded in the encoding the sniff
// found: UTF-16 with a BOM, Latin-1), and false when it reads data as
// binary: what a scan of a file's lines must read to scan what a pack
// would send of it (the per-commit history scan). Valid UTF-8 is data
// itself, not a copy.
func TextOf(data string) (string, bool) {
	b := unsafe.Slice(unsafe.StringData(data), len(data)) // read only
	binary, enc, valid := sniffValid(b)
	switch {
	case binary:
		return "", false
	case valid:
		return data, true
	}
	text, err := decode(b, enc)
	return text, err == nil
}

// decode turns file bytes into UTF-8 text in the given encoding. Undecodable
// sequences become U+FFFD (seed 000: replace).
func decode(data []byte, enc string) (string, error) {
	switch enc {
	case EncUTF16LE, EncUTF16BE:
		end := unicode.LittleEndian
		if enc == EncUTF16BE {
			end = unicode.BigEndian
		}
		out, err := unicode.UTF16(end, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", enc, err)
		}
		return string(out), nil
	case EncLatin1:
		out, err := charmap.ISO8859_1.NewDecoder().Bytes(data)
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", enc, err)
		}
		return string(out), nil
	default:
		// utf8.Valid checks ASCII eight bytes at a time; ToValidUTF8
		// decodes rune by rune even when it has nothing to replace.
		if utf8.Valid(data) {
			return string(data), nil
		}
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	}
}

// span is a kept byte range of the original text.
type span struct{ start, end int }

// truncate keeps the first head and last tail lines around the marker when
// text is over maxBytes; if head and tail are still over the limit (very long
// lines), they are cut at rune boundaries. It returns the text and the kept
// spans of the original, so secrets found in the original can be mapped.
func truncate(text string, maxBytes int64, head, tail int) (string, []span, bool) {
	if int64(len(text)) <= maxBytes {
		return text, []span{{0, len(text)}}, false
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// Any counts, even ones no policy allows: clamped before they are added.
	head, tail = min(max(head, 0), len(lines)), min(max(tail, 0), len(lines))
	if head >= len(lines)-tail {
		head, tail = len(lines), 0
	}
	headEnd := 0
	for _, l := range lines[:head] {
		headEnd += len(l)
	}
	tailStart := len(text)
	for i := len(lines) - 1; i >= len(lines)-tail && i >= head; i-- {
		tailStart -= len(lines[i])
	}
	budget := int(min(max(max(maxBytes, 0)-int64(len(TruncationMarker)), 0), int64(len(text))))
	if headEnd+(len(text)-tailStart) > budget {
		// Long lines: keep two thirds of the budget at the head, one third at the tail.
		h := budget * 2 / 3
		if h > headEnd {
			h = headEnd
		}
		t := budget - h
		if t > len(text)-tailStart {
			t = len(text) - tailStart
		}
		headEnd = runeFloor(text, h)
		tailStart = runeCeil(text, len(text)-t)
	}
	out := text[:headEnd] + TruncationMarker + text[tailStart:]
	return out, []span{{0, headEnd}, {tailStart, len(text)}}, true
}

func runeFloor(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func runeCeil(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// mapSpan maps a byte span of the original text onto the truncated text, which
// is the kept spans joined by the marker. Parts cut away are dropped.
func mapSpan(kept []span, start, end int) []span {
	var out []span
	offset := 0
	for i, k := range kept {
		if i > 0 {
			offset += len(TruncationMarker)
		}
		s, e := max(start, k.start), min(end, k.end)
		if s < e {
			out = append(out, span{offset + s - k.start, offset + e - k.start})
		}
		offset += k.end - k.start
	}
	return out
}

// validUTF8 is s with each byte that is not part of a UTF-8 sequence
// replaced by U+FFFD, byte by byte, as encoding/json writes such a byte
// (\ufffd) and the audit reads it: a text of the pack decodes to what it
// was serialized from. (strings.ToValidUTF8 replaces a run of such bytes
// with one U+FFFD.)
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
