package pack

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// memoryCounts is a TokenCounts in memory that counts its hits.
type memoryCounts struct {
	m    map[string]int
	hits int
}

func (c *memoryCounts) TokenCount(key string) (int, bool) {
	n, ok := c.m[key]
	if ok {
		c.hits++
	}
	return n, ok
}

func (c *memoryCounts) StoreTokenCount(key string, n int) { c.m[key] = n }

// countsPack is a pack of items whose contents end every way a content
// can (a newline, a letter, a digit, a quote, a backslash, a multi-byte
// character, nothing), short and long, some the same, some of them and of
// their names spelling the keys noteItem frames a content by.
func countsPack(r *rand.Rand) *Pack {
	// "." and " " end a region that is not a part of the whole's count:
	// o200k's pieces run across the quote after them.
	endings := []string{"\n", "x", "7", `"`, `\`, ".", " ", "é", "日本", "\r\n", ""}
	p := &Pack{SchemaVersion: SchemaVersion, Type: "full"}
	for i := range 60 {
		var b strings.Builder
		for n := r.IntN(3 * minRememberedRegion); b.Len() < n; {
			b.WriteString(trickyRunes[r.IntN(len(trickyRunes))])
			if r.IntN(8) == 0 {
				b.WriteString("\n\tfunc x() { return \"sha256\", `content` }\n")
			}
		}
		b.WriteString(endings[i%len(endings)])
		content := b.String()
		if i%7 == 3 && len(p.Contents) > 0 {
			content = p.Contents[0].Content // a content sent twice
		}
		if i%5 == 1 { // a content spelling the framing (escaped in the pack)
			content = `"content":"` + content + `","sha256":"`
		}
		name := fmt.Sprintf("f%d.go", i)
		if i%4 == 2 { // a hostile name spelling it before the content
			name = fmt.Sprintf(`f%d","content":"x","sha256":"y.go`, i)
		}
		sum := SumString(content)
		it := Item{ID: name + ":1:2", Path: name, Role: "primary",
			Encoding: "utf-8", Content: content, SHA256: hex.EncodeToString(sum[:]), Redactions: []Redaction{}}
		if i%2 == 0 {
			p.KeyFiles = append(p.KeyFiles, it)
		} else {
			p.Contents = append(p.Contents, it)
		}
	}
	return p
}

// TestFinalizeRemembersContentCounts: a pack finalized with counts to
// remember, and again with the counts remembered, is byte for byte the
// pack finalized without (its token estimate the same); the first run
// remembers the counts of the long contents that end in a lowercase letter
// or a newline, and the second counts none of them again. A remembered
// count that cannot be (0, or more tokens than bytes) is counted afresh.
func TestFinalizeRemembersContentCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := range 8 {
		p := countsPack(r)
		want, err := Finalize(p)
		if err != nil {
			t.Fatal(err)
		}
		counts := &memoryCounts{m: map[string]int{}}
		cold, err := finalize(p, counts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cold, want) {
			t.Fatalf("round %d: finalized with counts to remember, the pack differs", round)
		}
		if len(counts.m) == 0 || counts.hits != 0 {
			t.Fatalf("round %d: %d counts remembered, %d hits on a first run", round, len(counts.m), counts.hits)
		}
		stored := len(counts.m)
		warm, err := finalize(p, counts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(warm, want) {
			t.Fatalf("round %d: finalized with counts remembered, the pack differs", round)
		}
		if counts.hits < stored {
			t.Fatalf("round %d: %d of %d remembered counts used", round, counts.hits, stored)
		}
		for k := range counts.m {
			counts.m[k] = 0
			if r.IntN(2) == 0 {
				counts.m[k] = 1 << 30
			}
		}
		bad, err := finalize(p, counts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bad, want) {
			t.Fatalf("round %d: impossible remembered counts were used", round)
		}
	}
}

// TestItemContentFraming: noteItem frames a content by its key and the
// sha256 field, never omitted, that follows it in an Item's serialization;
// a field put between them would fall inside the region whose count is
// kept under the content's digest alone.
func TestItemContentFraming(t *testing.T) {
	it := Item{ID: "a:1:1", Path: "a", Role: "primary", Encoding: "utf-8", Content: "x\n", SHA256: strings.Repeat("0", 64)}
	data, err := Marshal(&it)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"content":"x\n","sha256":"`)) {
		t.Fatalf("an item serializes as %s: its sha256 does not follow its content", data)
	}
	it.SHA256 = ""
	if data, err = Marshal(&it); err != nil || !bytes.Contains(data, []byte(`"sha256":""`)) {
		t.Fatalf("an item without a digest serializes as %s (%v): its sha256 is omitted", data, err)
	}
}
