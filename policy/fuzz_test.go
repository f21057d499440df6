package policy

import (
	"bytes"
	"testing"
)

// FuzzParse loads policy documents a repository controls: any input is a
// policy or an *Error, never a panic; a policy loaded renders to YAML that
// loads back to the same digest.
func FuzzParse(f *testing.F) {
	f.Add([]byte(Template))
	f.Add([]byte("version: 1\npack: {type: full, include: [\"src/**\"]}\nlimits: {max_files: 3}\n"))
	f.Add([]byte("egress:\n  destinations:\n    - {name: a, max_tokens: 1}\n  forbid: [\"{a,b\"]\n"))
	f.Add([]byte("limits: {preserve_head_lines: 9223372036854775807, preserve_tail_lines: 1}\n"))
	f.Add([]byte("fail_on: []\n"))
	f.Add([]byte("fail_on: [none]\n"))
	f.Add([]byte("&a [*a]\n"))
	f.Add([]byte("pack: !!binary aGVsbG8=\n"))
	f.Add([]byte("version: 1\nversion: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(".ctxpack.yml", data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not a *policy.Error: %v", err, err)
			}
			return
		}
		again, err := Parse("rendered", p.YAML())
		if err != nil {
			t.Fatalf("the rendered policy does not load: %v\n%s", err, p.YAML())
		}
		if !bytes.Equal(again.Normalized(), p.Normalized()) {
			t.Fatalf("round trip changed the policy:\n%s\n%s", p.Normalized(), again.Normalized())
		}
	})
}
