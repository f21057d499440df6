// Package o200k counts the byte-pair-encoding tokens of one o200k_base
// pre-tokenizer piece against a vocabulary table embedded in the binary.
//
// github.com/tiktoken-go/tokenizer, the tokenizer the token estimate is
// defined by, builds its 199,998-entry vocabulary as a Go map on first use:
// 15–20 ms of CPU and ~10 MB of heap in every process, most of a small
// change's token counting. The table here holds the same vocabulary
// (vocab.bin, generated from that package and checked against it by
// TestTableMatchesTokenizer) in a form that is read in place: the tokens'
// bytes in rank order, and an open-addressing hash index over them. Only the
// pages a count touches are ever read.
package o200k

import (
	_ "embed"
	"math/bits"
)

// table is vocab.bin: see the layout at encodeTable.
//
//go:embed vocab.bin
var table string

// header of vocab.bin: magic, token count, log2 of the slot count.
const (
	magic      = "o2kv"
	headerSize = 12
)

// A slot holds a token's rank in its low rankBits bits and the high bits
// of the hash of its bytes above them (a tag that spares most comparisons
// of bytes), or 0 when empty: ranks are stored plus one.
const (
	rankBits = 18
	rankMask = 1<<rankBits - 1
)

var (
	tokens   = int(u32(4))
	slotBits = uint(u32(8))
	// offsets[r] .. offsets[r+1] is the token of rank r in blob.
	offsetsAt = headerSize
	slotsAt   = offsetsAt + 4*(tokens+1)
	blobAt    = slotsAt + 4<<slotBits
)

func u32(at int) uint32 {
	return uint32(table[at]) | uint32(table[at+1])<<8 | uint32(table[at+2])<<16 | uint32(table[at+3])<<24
}

// hash is the table's hash of a token's bytes: a multiply-and-fold over
// eight bytes at a time, fixed (the index is built with it once, in
// vocab.bin), good enough for 200k short keys in twice as many slots.
func hash(s string) uint64 {
	const k = 0x9e3779b97f4a7c15
	h := uint64(len(s)) * k
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = bits.RotateLeft64((h^w)*k, 29)
		s = s[8:]
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		w |= uint64(s[i]) << (8 * i)
	}
	h = (h ^ w) * k
	return h ^ h>>31
}

// Rank is the rank (token id) of tok in o200k_base's vocabulary.
func Rank(tok string) (uint32, bool) {
	h := hash(tok)
	mask := uint64(1)<<slotBits - 1
	tag := uint32(h>>(64-(32-rankBits))) << rankBits
	for i := h & mask; ; i = (i + 1) & mask {
		v := u32(slotsAt + 4*int(i))
		if v == 0 {
			return 0, false
		}
		if v&^rankMask != tag {
			continue
		}
		r := v&rankMask - 1
		from, to := u32(offsetsAt+4*int(r)), u32(offsetsAt+4*int(r)+4)
		if table[blobAt+int(from):blobAt+int(to)] == tok {
			return r, true
		}
	}
}
