package audit

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/policy"
)

// FuzzGitleaksConfig loads gitleaks configs a repository controls (with an
// [extend] file it also controls): a config or an error, never a panic
// (gitleaks' Translate panics on a bad regex; loadGitleaksData recovers).
func FuzzGitleaksConfig(f *testing.F) {
	f.Add([]byte("[[rules]]\nid = \"x\"\nregex = '''abc[0-9]+'''\n"), []byte(""))
	f.Add([]byte("[extend]\nuseDefault = true\n[allowlist]\npaths = ['''.*''']\n"), []byte(""))
	f.Add([]byte("[extend]\npath = \"base.toml\"\n"), []byte("[[rules]]\nid = \"y\"\nregex = '''(unclosed'''\n"))
	f.Add([]byte("[extend]\npath = \"/etc/passwd\"\n"), []byte(""))
	f.Add([]byte("[extend]\npath = \"base.toml\"\n"), []byte("[extend]\npath = \"again.toml\"\n"))
	f.Add([]byte("[[rules]]\nid = \"z\"\npath = '''['''\n[[rules.allowlists]]\ncondition = \"XOR\"\n"), []byte(""))
	f.Add([]byte("title = 3\n[[allowlists]]\ntargetRules = [\"nope\"]\n"), []byte(""))
	f.Fuzz(func(t *testing.T, cfg, extended []byte) {
		if len(cfg) > 64<<10 || len(extended) > 64<<10 {
			return
		}
		_, _ = loadGitleaksData(".gitleaks.toml", cfg, func(string) ([]byte, error) { return extended, nil })
		_ = ExtendPath(cfg) // what a change to the extended file is reported by
	})
}

// FuzzGitleaksIgnore parses .gitleaksignore content a repository controls.
func FuzzGitleaksIgnore(f *testing.F) {
	f.Add([]byte("# reviewed\nsrc\\main.go:github-pat:2\nabc:lib/x.py:rule:10\n\n"))
	f.Add([]byte(strings.Repeat("x", 70000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := parseIgnore(".gitleaksignore", data)
		if err != nil {
			return
		}
		_ = set.ignored("c0ffee", "a/b.go", "rule", 3)
	})
}

// FuzzAuditPack audits pack bytes a file, an artifact or a pull request
// controls: always a verdict (or the missing-input error), never a panic.
func FuzzAuditPack(f *testing.F) {
	s, err := NewScanner(ScannerOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"schema_version":1,"pack_id":"pk_aaaaaaaa","type":"full","source":{"repository":"r","kind":"git","trigger":"commit","scope":"change"},` +
		`"manifest":{"project_name":"","project_type":"","purpose_guess":"","structure_summary":"","dependencies":[],"entry_points":[]},` +
		`"file_index":[{"path":"a/","files":-3,"included":true}],"changes":[{"path":"a","status":"added","added":1,"deleted":0,"diff":"+x"}],` +
		`"contents":[{"id":"a:1:1","path":"a","role":"primary","encoding":"utf-8","content":"token","sha256":"00","blob":"","truncated":false,"original_size_bytes":-1,"redactions":[{"line":-5,"rule_id":""}]}],` +
		`"budget":{"max_chars":0,"used_chars":-1,"max_content_bytes":0,"content_bytes":0,"truncated":false,"dropped_items":0,"estimated_tokens":0,"token_encoding":""},"metadata":{}}`))
	f.Add([]byte(`[1,2,3]`))
	f.Add([]byte(`{"contents":[{"content":"\ud800"}],"budget":{"used_chars":9223372036854775807}}`))
	pol := policy.Default()
	pol.Egress.Destinations = []policy.Destination{{Name: "d", MaxChars: 10, MaxTokens: 10}}
	pol.Pack.Tier = policy.TierCheap
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256<<10 {
			return
		}
		v, err := Pack(context.Background(), data, Input{Policy: pol, Scanner: s, Sensitive: SensitiveFile})
		if err != nil || v == nil {
			t.Fatalf("no verdict: %v", err)
		}
	})
}

// FuzzSensitiveFile matches credential-file signatures against a path a
// repository controls.
func FuzzSensitiveFile(f *testing.F) {
	f.Add(".ssh/id_rsa")
	f.Add("home/u/.config/gcloud/credentials.db")
	f.Add("\xff/.netrc")
	f.Fuzz(func(t *testing.T, p string) {
		a, okA := SensitiveFile(p)
		b, okB := SensitiveFile(p)
		if a != b || okA != okB {
			t.Fatal("not stable")
		}
	})
}
