package o200k

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/ctxpack/ctxpack/internal/generated"
)

var update = flag.Bool("update", false, "rewrite vocab.bin from the tokenizer package's vocabulary")

// vocabulary is o200k_base's tokens by rank, read from the tokenizer
// package through its public API (Decode of each id).
func vocabulary(t testing.TB) []string {
	t.Helper()
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	var toks []string
	for id := uint(0); ; id++ {
		s, err := c.Decode([]uint{id})
		if err != nil {
			break // past the last rank; the special tokens are not in the vocabulary
		}
		toks = append(toks, s)
	}
	// Ranks are dense: no id after the last one decodes, up to the
	// special tokens (199999 and up).
	for id := uint(len(toks)) + 1; id < 199999; id++ {
		if _, err := c.Decode([]uint{id}); err == nil {
			t.Fatalf("rank %d decodes after a gap at %d", id, len(toks))
		}
	}
	return toks
}

// encodeTable lays out vocab.bin, all integers little-endian uint32:
//
//	"o2kv" | token count N | slot bits B
//	offsets[0..N]    token r is blob[offsets[r]:offsets[r+1]]
//	slots[0..2^B)    tag<<rankBits | rank+1, or 0; a token is in the first
//	                 free slot from hash&(2^B-1) on, in rank order
//	blob             the tokens' bytes in rank order
func encodeTable(toks []string, slotBits uint) ([]byte, error) {
	if len(toks) >= rankMask {
		return nil, fmt.Errorf("%d tokens do not fit %d bits", len(toks), rankBits)
	}
	var b bytes.Buffer
	b.WriteString(magic)
	put := func(v uint32) { b.Write(binary.LittleEndian.AppendUint32(nil, v)) }
	put(uint32(len(toks)))
	put(uint32(slotBits))
	off := uint32(0)
	for _, tok := range toks {
		put(off)
		off += uint32(len(tok))
	}
	put(off)
	slots := make([]uint32, 1<<slotBits)
	mask := uint64(len(slots) - 1)
	for r, tok := range toks {
		if tok == "" {
			return nil, fmt.Errorf("rank %d has no token", r)
		}
		h := hash(tok)
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = uint32(h>>(64-(32-rankBits)))<<rankBits | uint32(r+1)
	}
	for _, v := range slots {
		put(v)
	}
	for _, tok := range toks {
		b.WriteString(tok)
	}
	return b.Bytes(), nil
}

// TestTableMatchesTokenizer: vocab.bin is exactly the table of the
// tokenizer package's vocabulary (go test -run TestTableMatchesTokenizer
// -update rewrites it after an upgrade of that package), and every token
// is found at its rank.
func TestTableMatchesTokenizer(t *testing.T) {
	toks := vocabulary(t)
	want, err := encodeTable(toks, 19)
	if err != nil {
		t.Fatal(err)
	}
	generated.Check(t, "vocab.bin", want, *update, "go test ./pack/internal/o200k -run TestTableMatchesTokenizer -update")
	if table != string(want) {
		t.Fatalf("vocab.bin (%d bytes) is not the table of the tokenizer's %d tokens (%d bytes): run go test ./pack/internal/o200k -run TestTableMatchesTokenizer -update", len(table), len(toks), len(want))
	}
	if tokens != len(toks) {
		t.Fatalf("table holds %d tokens, the tokenizer %d", tokens, len(toks))
	}
	for r, tok := range toks {
		if got, ok := Rank(tok); !ok || got != uint32(r) {
			t.Fatalf("Rank(%q) = %d, %v; want %d", tok, got, ok, r)
		}
	}
	for b := range 256 {
		if _, ok := Rank(string([]byte{byte(b)})); !ok {
			t.Fatalf("byte %#x is not a token: Count assumes every byte is one", b)
		}
	}
}
