package pack

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCountTokensCutsAreExact checks that counting in pieces gives exactly
// the count of the whole text, on pack-like JSON and on random text built
// from the characters o200k's pre-tokenizer treats specially.
func TestCountTokensCutsAreExact(t *testing.T) {
	whole := func(s string) int {
		t.Helper()
		n, err := countTokens(s, len(s)+1)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "z", "Q", "\"", "'", "'s", "'LL", " ", "  ", "\n", "\r\n", "\t", "7", "123", "{", "}", ":", ",", "/", "\\\"", "é", "É", "ü", "\u0301", "日本", "_", "-", ".", "$", "\xff"}
	var texts []string
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for n := r.IntN(400); n > 0; n-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	items := []map[string]any{}
	for i := 0; i < 40; i++ {
		items = append(items, map[string]any{"path": "src/a.go", "content": "package a\n\nfunc F() string { return \"x\" }\n", "start_line": 1, "role": "primary", "sha256": "ab12"})
	}
	data, _ := json.Marshal(map[string]any{"schema_version": 1, "contents": items})
	texts = append(texts, string(data))
	for _, s := range texts {
		want := whole(s)
		for _, chunk := range []int{1, 5, 17, 64} {
			got, err := countTokens(s, chunk)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("countTokens(%q, %d) = %d, the whole text has %d", s, chunk, got, want)
			}
		}
	}
}

func TestTokenCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		from int
		want int
	}{
		{`{"path":"a"}`, 0, 6},
		{`{"path":"a"}`, 7, 10},
		{`"A" 1" \"x`, 0, -1},
		{`ab"`, 0, 2},
		{`"`, 0, -1},
	} {
		if got := tokenCut(c.s, c.from); got != c.want {
			t.Errorf("tokenCut(%q, %d) = %d, want %d", c.s, c.from, got, c.want)
		}
	}
}
