package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/ctxpack/ctxpack/store"
)

// Tool arguments come from any MCP client: a call of any shape is either
// accepted with a known action and only that action's arguments, or refused
// with a v3 invalid_data error; never a panic.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{"action":"read","id":"pk_abcd2345","mode":"full"}`, `{"action":"write","document":{}}`, `{"action":1}`, `[]`, `null`, `{"action":"get","cursor":"x","match":"y"}`} {
		f.Add("output", s)
		f.Add("input", s)
	}
	f.Fuzz(func(t *testing.T, tool, data string) {
		if tool != "input" && tool != "output" {
			return
		}
		a, err := parseArgs(tool, json.RawMessage(data))
		if err != nil {
			if e, ok := err.(*store.Error); !ok || e.Code != store.CodeInvalidData || e.Details == nil {
				t.Fatalf("not an invalid_data error: %v", err)
			}
			return
		}
		fields, ok := actionFields[tool][a.action]
		if !ok {
			t.Fatalf("accepted action %q", a.action)
		}
		allowed := map[string]bool{"action": true}
		for _, f := range fields {
			allowed[f] = true
		}
		for k := range a.raw {
			if !allowed[k] {
				t.Fatalf("accepted argument %q for %s %s", k, tool, a.action)
			}
		}
	})
}
