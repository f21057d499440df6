package pack_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// benchPaths are 10,000 repository paths: sources in nested directories,
// with some that the default patterns, the sensitive-file signatures, the
// .ctxpackignore files and the policy's globs exclude.
func benchPaths() []string {
	dirs := []string{"src/app", "internal/store/sql", "web/src/components", "pkg/api/v1", "docs", "scripts", "test/fixtures", "node_modules/left-pad", "build/out", ".github/workflows", "config"}
	names := []string{"main.go", "handler_%d.go", "view_%d.tsx", "util_%d.py", "README.md", "data_%d.json", "id_rsa", ".env", "secrets_%d.yaml", "app_%d.min.js", "logo_%d.png", "cache_%d.tmp", "Cargo.lock"}
	var out []string
	for i := 0; len(out) < 10000; i++ {
		d := dirs[i%len(dirs)]
		n := names[(i/len(dirs))%len(names)]
		if strings.Contains(n, "%d") {
			n = fmt.Sprintf(n, i)
		}
		out = append(out, fmt.Sprintf("%s/m%d/%s", d, i%37, n))
	}
	return out
}

// BenchmarkExclude is exclusion matching: seed 000's default patterns, the
// sensitive-file signatures, two .ctxpackignore files and policy globs, for
// 10,000 paths (one op = all of them).
func BenchmarkExclude(b *testing.B) {
	pol := policy.Default()
	pol.Pack.Exclude = []string{"**/*.snap", "test/fixtures/**"}
	pol.Egress.Forbid = []string{"config/prod/**", "**/*.pem"}
	x := pack.NewExcluder(pol, audit.SensitiveFile, map[string][]byte{
		".ctxpackignore":     []byte("# generated\n*.tmp\ndocs/drafts/\n!docs/drafts/keep.md\n"),
		"web/.ctxpackignore": []byte("dist/\n*.map\n"),
	})
	paths := benchPaths()
	b.ReportAllocs()
	excluded := 0
	for b.Loop() {
		excluded = 0
		for _, p := range paths {
			if r, _ := x.Reason(p); r != "" {
				excluded++
			}
		}
	}
	if excluded == 0 || excluded == len(paths) {
		b.Fatalf("%d of %d paths excluded", excluded, len(paths))
	}
}

// benchPack is a Full pack of n content items of about 4 KB each.
func benchPack(n int) *pack.Pack {
	p := &pack.Pack{SchemaVersion: pack.SchemaVersion, Type: policy.TypeFull, KeyFiles: []pack.KeyFile{}}
	for i := 0; i < n; i++ {
		var c strings.Builder
		fmt.Fprintf(&c, "package svc%d\n\nimport \"fmt\"\n\n", i)
		for c.Len() < 4000 {
			fmt.Fprintf(&c, "// Handle%d serves \"%s\" <requests> & writes\tlogs.\nfunc Handle%d(x int) string { return fmt.Sprintf(\"%%d-é\", x) }\n\n", c.Len(), "route", c.Len())
		}
		sum := sha256.Sum256([]byte(c.String()))
		path := fmt.Sprintf("internal/svc%d/handler.go", i)
		p.Contents = append(p.Contents, pack.Item{
			ID: fmt.Sprintf("%s:1:%d", path, strings.Count(c.String(), "\n")), Path: path, Role: "related",
			Encoding: "utf-8", Content: c.String(), SHA256: hex.EncodeToString(sum[:]), Blob: hex.EncodeToString(sum[:20]),
			OriginalSizeBytes: new(int64(c.Len())), Redactions: []pack.Redaction{},
		})
		p.FileIndex = append(p.FileIndex, pack.IndexEntry{Path: path, Type: pack.TypeText, Category: "source", SizeBytes: new(int64(c.Len()))})
	}
	return p
}

// BenchmarkMarshal is JSON writing: the canonical serialization of a Full
// pack of 1,000 items (~4 MB of content).
func BenchmarkMarshal(b *testing.B) {
	benchSerialize(b, func(p *pack.Pack) ([]byte, error) { return pack.Marshal(p) })
}

// BenchmarkFinalize is the last step of every build: serialize, count the
// tokens of the serialization, derive the pack id and settle used_chars.
func BenchmarkFinalize(b *testing.B) { benchSerialize(b, pack.Finalize) }

func benchSerialize(b *testing.B, serialize func(*pack.Pack) ([]byte, error)) {
	p := benchPack(1000)
	data, err := pack.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := serialize(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCountTokens is the o200k token estimate of a serialized pack
// (~4 MB of compact JSON), counted in pieces on all cores.
func BenchmarkCountTokens(b *testing.B) {
	data, err := pack.Marshal(benchPack(1000))
	if err != nil {
		b.Fatal(err)
	}
	benchCount(b, string(data))
}

// benchCount times CountTokens of s, the vocabulary loaded first.
func benchCount(b *testing.B, s string) {
	if _, err := pack.CountTokens(s); err != nil { // load the vocabulary
		b.Fatal(err)
	}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pack.CountTokens(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCountTokensFile counts the tokens of a file, e.g. a full-tree
// pack of a real repository: CTXPACK_TOKENS_FILE=pack.json go test -run
// '^$' -bench CountTokensFile ./pack/
func BenchmarkCountTokensFile(b *testing.B) {
	name := os.Getenv("CTXPACK_TOKENS_FILE")
	if name == "" {
		b.Skip("CTXPACK_TOKENS_FILE is not set")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	benchCount(b, string(data))
}

// BenchmarkUnmarshal is the audit's decode of a Full pack of 1,000 items:
// pack.Unmarshal against encoding/json's Unmarshal of the same bytes.
func BenchmarkUnmarshal(b *testing.B) {
	data, err := pack.Marshal(benchPack(1000))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name      string
		unmarshal func([]byte, *pack.Pack) error
	}{
		{"pack", pack.Unmarshal},
		{"encoding-json", func(data []byte, p *pack.Pack) error { return json.Unmarshal(data, p) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var p pack.Pack
				if err := bc.unmarshal(data, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
