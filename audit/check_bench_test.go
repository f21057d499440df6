package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/policy"
)

// BenchmarkAuditPack audits a Full pack of 1,000 items of about 4 KB (no
// repository at hand): decode, canonical form and pack id, schema, content
// digests, the secret scan (cached after the first round), paths and
// sizes. The full-tree pack of a large repository ends with this audit of
// its own bytes.
func BenchmarkAuditPack(b *testing.B) {
	p := cleanPack()
	p.FileIndex, p.Contents = nil, nil
	for i := range 1000 {
		var c strings.Builder
		fmt.Fprintf(&c, "package svc%d\n\nimport \"fmt\"\n\n", i)
		for c.Len() < 4000 {
			fmt.Fprintf(&c, "// Handle%d serves \"%s\" <requests> & writes\tlogs.\nfunc Handle%d(x int) string { return fmt.Sprintf(\"%%d-é\", x) }\n\n", c.Len(), "route", c.Len())
		}
		content := c.String()
		sum := sha256.Sum256([]byte(content))
		size := int64(len(content))
		path := fmt.Sprintf("internal/svc%d/handler.go", i)
		n := strings.Count(content, "\n")
		p.FileIndex = append(p.FileIndex, pack.IndexEntry{Path: path, Type: pack.TypeText, Category: pack.CatSource, SizeBytes: &size, Included: true})
		p.Contents = append(p.Contents, pack.Item{ID: fmt.Sprintf("%s:1:%d", path, n), Path: path, Role: pack.RoleRelated, Encoding: "utf-8",
			Content: content, SHA256: hex.EncodeToString(sum[:]), Blob: hex.EncodeToString(sum[:20]), OriginalSizeBytes: &size,
			Redactions: []pack.Redaction{}, StartLine: 1, EndLine: n})
		p.Budget.ContentBytes += size
	}
	p.Budget.MaxContentBytes = p.Budget.ContentBytes
	data, err := pack.Finalize(p)
	if err != nil {
		b.Fatal(err)
	}
	// As in a pack run, the audit's scans find what the build's scans left
	// in the cache (the first round fills it).
	s, err := NewScanner(ScannerOptions{CacheDir: b.TempDir(), CacheKey: testCacheKey})
	if err != nil {
		b.Fatal(err)
	}
	pol := policy.Default()
	pol.Limits.MaxContentBytes, pol.Limits.MaxFiles = 1<<40, 1<<30
	in := Input{Policy: pol, Scanner: s, Sensitive: SensitiveFile}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v, err := Pack(context.Background(), data, in)
		if err != nil {
			b.Fatal(err)
		}
		if len(v.Failed) > 0 {
			b.Fatalf("the audit fails the pack: %+v", v.Failed[0])
		}
	}
}
