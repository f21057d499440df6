package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	doc := `version: 1
pack:
  type: full
  tier: cheap
  include: ["src/**"]
limits:
  max_files: 10
secrets:
  action: exclude
egress:
  destinations:
    - {name: openai, max_tokens: 100000}
    - name: claude
      max_chars: 400000
  forbid: ["internal/crypto/**"]
fail_on: [secret_unredacted]
`
	p, err := Parse(".ctxpack.yml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if p.Pack.Type != TypeFull || p.TierLimit() != 25000 || p.Limits.MaxFiles != 10 || p.Limits.MaxFileBytes != 50000 {
		t.Fatalf("policy = %+v", p)
	}
	if len(p.Egress.Destinations) != 2 || p.Egress.Destinations[0].MaxTokens != 100000 || p.Egress.Destinations[1].MaxChars != 400000 {
		t.Fatalf("destinations = %+v", p.Egress.Destinations)
	}
	if !p.FailsOn(FailSecretUnredacted) || p.FailsOn(FailOverLimit) {
		t.Fatalf("fail_on = %v", p.FailOn)
	}
}

func TestParseErrorsNameKeyAndLine(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown top key", "version: 1\npak: {}\n", `.ctxpack.yml:2: key "pak": unknown key`},
		{"unknown nested key", "version: 1\nlimits:\n  max_filez: 3\n", `.ctxpack.yml:3: key "limits.max_filez": unknown key`},
		{"unknown destination key", "egress:\n  destinations:\n    - name: a\n      max_char: 3\n", `.ctxpack.yml:4: key "egress.destinations[0].max_char": unknown key`},
		{"wrong type", "limits:\n  max_files: lots\n", `.ctxpack.yml:2: key "limits.max_files": wrong type`},
		{"wrong type list", "pack:\n  include: src/**\n", `.ctxpack.yml:2: key "pack.include": must be a list`},
		{"bad glob", "pack:\n  exclude:\n    - ok/**\n    - \"[unclosed\"\n", `.ctxpack.yml:4: key "pack.exclude[1]": bad glob "[unclosed"`},
		{"bad forbid glob", "egress:\n  forbid: [\"{a,b\"]\n", `.ctxpack.yml:2: key "egress.forbid[0]": bad glob`},
		{"bad action", "secrets:\n  action: shout\n", `.ctxpack.yml:2: key "secrets.action": "shout" is not a secret action`},
		{"bad tier", "pack: {tier: huge}\n", `key "pack.tier": "huge" is not a tier`},
		{"bad scope", "pack:\n  scope: repo\n", `.ctxpack.yml:2: key "pack.scope": "repo" is not a scope; use change or tree`},
		{"bad version", "version: 2\n", `.ctxpack.yml:1: key "version": unsupported version 2`},
		{"bad fail_on", "fail_on: [nothing]\n", `.ctxpack.yml:1: key "fail_on[0]"`},
		{"negative limit", "limits: {max_content_bytes: -1}\n", `key "limits.max_content_bytes": must be a positive`},
		{"zero history blob limit", "secrets:\n  history_max_blob_bytes: 0\n", `.ctxpack.yml:2: key "secrets.history_max_blob_bytes": must be a positive`},
		{"empty history blob limit", "secrets:\n  history_max_blob_bytes:\n", `key "secrets.history_max_blob_bytes": must be a positive`},
		{"duplicate destination", "egress:\n  destinations: [{name: a}, {name: a}]\n", `destination "a" is listed twice`},
		{"not yaml", "version: [1\n", `.ctxpack.yml: not valid YAML`},
		{"not a mapping", "- 1\n", "must be a mapping"},
		{"duplicate key", "version: 1\nversion: 1\n", `key "version": key appears twice`},
	}
	// What the file holds is repeated in an error unless it could be a
	// secret: an error may end up in a public CI log.
	token := "ghp_" + strings.Repeat("Zq7Lm2Xv9", 4)
	hidden := "(a 40-character text, not shown: it may hold a secret)"
	tests = append(tests, []struct{ name, doc, want string }{
		{"token as a key", "version: 1\n" + token + ": 1\n", `.ctxpack.yml:2: key ` + hidden + `: unknown key`},
		{"token as a nested key", "limits:\n  " + token + ": 1\n", `.ctxpack.yml:2: key (a 47-character text, not shown`},
		{"token as a value", "secrets:\n  action: " + token + "\n", `key "secrets.action": ` + hidden + ` is not a secret action`},
		{"token in a glob", "pack:\n  exclude: [\"[" + token + "\"]\n", `bad glob (a 41-character text, not shown`},
		{"token in fail_on", "fail_on: [" + token + "]\n", `key "fail_on[0]": ` + hidden},
		{"token as a wrong-type value", "limits:\n  max_files: " + token + "\n", `key "limits.max_files": wrong type: cannot unmarshal !!str a value into int`},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(".ctxpack.yml", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "Zq7Lm2Xv9") {
				t.Fatalf("err = %v repeats the token", err)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err is %T, want *Error", err)
			}
		})
	}
}

func TestFindDefaultsAndDigest(t *testing.T) {
	dir := t.TempDir()
	p, file, err := Find(dir)
	if err != nil || file != "" {
		t.Fatalf("Find = %v %q", err, file)
	}
	if p.Digest() != Default().Digest() || !strings.HasPrefix(p.Digest(), "sha256:") {
		t.Fatal("default digest unstable")
	}
	// The same policy written differently has the same digest.
	os.WriteFile(filepath.Join(dir, FileName), []byte("# comment\nversion: 1\npack: {type: auto}\n"), 0o644)
	q, file, err := Find(dir)
	if err != nil || file == "" {
		t.Fatalf("Find = %v %q", err, file)
	}
	if q.Digest() != p.Digest() {
		t.Fatal("equivalent policy has another digest")
	}
	q.Limits.MaxFiles++
	if q.Digest() == p.Digest() {
		t.Fatal("digest ignores a change")
	}
	if _, err := Parse("empty.yml", nil); err != nil {
		t.Fatalf("empty file: %v", err)
	}
}

func TestTemplateIsTheDefault(t *testing.T) {
	p, err := Parse("template", []byte(Template))
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest() != Default().Digest() {
		t.Fatalf("template policy differs from Default():\n%s\nvs\n%s", p.Normalized(), Default().Normalized())
	}
}

func TestParseBoundsAndEmptyFailOn(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"limits: {preserve_head_lines: 9223372036854775807}\n", `key "limits.preserve_head_lines": 9223372036854775807 is out of range`},
		{"limits: {preserve_tail_lines: 1000001}\n", `key "limits.preserve_tail_lines": 1000001 is out of range`},
		{"limits: {preserve_tail_lines: -1}\n", `key "limits.preserve_tail_lines": -1 is out of range`},
		{"fail_on: []\n", `key "fail_on": is empty`},
		{"fail_on:\n", `key "fail_on": is empty`},
		{"fail_on: [none, over_limit]\n", `key "fail_on[0]": none cannot be combined`},
	} {
		_, err := Parse(".ctxpack.yml", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %s", c.doc, err, c.want)
		}
	}
	p, err := Parse(".ctxpack.yml", []byte("fail_on: [none]\nlimits: {preserve_head_lines: 1000000, preserve_tail_lines: 1000000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cond := range Default().FailOn {
		if p.FailsOn(cond) {
			t.Errorf("fail_on [none] fails on %s", cond)
		}
	}
	if p, _ := Parse(".ctxpack.yml", []byte("version: 1\n")); len(p.FailOn) != 4 {
		t.Errorf("an absent fail_on is the default: %v", p.FailOn)
	}
}

// TestHistoryBlobLimit: secrets.history_max_blob_bytes is the per-commit
// scan's blob limit, 100 MiB when absent; the default written out is the
// default policy (the same digest).
func TestHistoryBlobLimit(t *testing.T) {
	for doc, want := range map[string]int64{
		"version: 1\n": DefaultHistoryMaxBlobBytes,
		"secrets:\n  history_max_blob_bytes: 104857600\n": 100 << 20,
		"secrets:\n  history_max_blob_bytes: 2000000\n":   2000000,
	} {
		p, err := Parse(".ctxpack.yml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.HistoryBlobLimit(); got != want {
			t.Errorf("%q: limit %d, want %d", doc, got, want)
		}
		if isDefault := p.Digest() == Default().Digest(); isDefault != (want == DefaultHistoryMaxBlobBytes) {
			t.Errorf("%q: digest is the default's: %v", doc, isDefault)
		}
	}
}
