package pack

import (
	"math/bits"
	"unicode/utf8"
)

// The items' contents are most of a full pack's bytes, serialized twice a
// run (the pack, then the audit's canonical re-serialization) and measured
// once (quotedLen). encoding/json tests each byte of a string against a
// table; appendQuoted and quotedLen skip eight bytes at a time that need no
// escape, and treat the rest as encoding/json does.

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// needsLook marks (the high bit of each byte) exactly the bytes of the
// eight in w that are not copied as they are: below 0x20, '"', '\\', and
// any byte from 0x80 on (part of a character to decode). Each test adds to
// a byte's low seven bits only what keeps it below 0x100, so no carry or
// borrow crosses from one byte to the next: a mark is never a neighbour's
// (quotedLen counts every mark of a word).
func needsLook(w uint64) uint64 {
	lo := w &^ highBits
	notQuote := (lo ^ (lowBits * '"')) + lowBits*0x7f  // high bit set unless the byte is '"'
	notSlash := (lo ^ (lowBits * '\\')) + lowBits*0x7f // unless it is '\\'
	notControl := lo + lowBits*(0x80-0x20)             // unless it is below 0x20
	return (^(notQuote & notSlash & notControl) | w) & highBits
}

// controlsBeyond marks the bytes of ASCII w below 0x20 but '\n' and '\t'.
func controlsBeyond(w uint64) uint64 {
	notControl := w + lowBits*(0x80-0x20)
	notNL := (w ^ (lowBits * '\n')) + lowBits*0x7f
	notTab := (w ^ (lowBits * '\t')) + lowBits*0x7f
	return ^notControl & notNL & notTab & highBits
}

// word is the eight bytes of s from i, little-endian.
func word(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// plainUpTo is the first index from i on, at most len(s), of a byte of s
// that is not copied as it is (needsLook), skipping whole words.
func plainUpTo(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := needsLook(word(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == '"' || b == '\\' || b >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string exactly as encoding/json writes
// it with HTML escaping off: '"', '\\' and the control characters escaped
// (\b, \f, \n, \r, \t by name, the others \u00XX), an invalid UTF-8 byte
// as \ufffd, U+2028 and U+2029 as \u2028 and \u2029.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := plainUpTo(s, 0); i < len(s); i = plainUpTo(s, i) {
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
