package pack

import (
	"encoding/json"
	"testing"
)

// checkFinalizeCounted fails unless finalizeCounted's count of the bytes it
// returns is the count of those bytes.
func checkFinalizeCounted(t *testing.T, p *Pack) {
	t.Helper()
	data, tokens, err := finalizeCounted(p, nil)
	if err != nil {
		return // a pack that cannot be serialized is Finalize's to report
	}
	want, err := CountTokensOf(data)
	if err != nil {
		t.Fatal(err)
	}
	if tokens != want {
		t.Fatalf("finalizeCounted says %d tokens, the bytes have %d:\n%s", tokens, want, data)
	}
}

// TestFinalizeCounted: the count finalizeCounted returns is that of its
// bytes, whatever stands around the pack id and the budget (the golden
// packs, and budgets whose counts gain digits).
func TestFinalizeCounted(t *testing.T) {
	for name, v := range documentPacks(t) {
		p, ok := v.(*Pack)
		if !ok || p == nil {
			continue
		}
		t.Run(name, func(t *testing.T) { checkFinalizeCounted(t, p) })
	}
	for _, text := range []string{"", "a", "word", "9", "\"q\"", "x\n", "é", "日本"} {
		for n := range 40 {
			content := ""
			for range n * n {
				content += text
			}
			checkFinalizeCounted(t, &Pack{SchemaVersion: SchemaVersion, Type: "full",
				Contents: []Item{{ID: "a:1:1", Path: "a", Content: content, Redactions: []Redaction{}}}})
		}
	}
}

// FuzzFinalizeCounted: for any pack a document decodes to, finalizeCounted
// counts the bytes it returns as CountTokensOf does.
func FuzzFinalizeCounted(f *testing.F) {
	addPackSeeds(f)
	f.Add([]byte(`{"schema_version":1,"pack_id":"x","type":"full","budget":{"max_chars":1,"used_chars":2,"estimated_tokens":3}}`))
	f.Add([]byte(`{"type":"zz","budget":{"truncated":true},"metadata":{"created_at":"a"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Pack
		if json.Unmarshal(data, &p) != nil {
			return
		}
		checkFinalizeCounted(t, &p)
	})
}
