package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/secrettest"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/ctxpack/ctxpack/policy"
)

// cleanPack is a small Full pack that passes every check without a
// repository: a base the cases below tamper with.
func cleanPack() *pack.Pack {
	content := "package a\n\nfunc A() string { return \"<a & b>\" }\n"
	sum := sha256.Sum256([]byte(content))
	size := int64(len(content))
	return &pack.Pack{
		SchemaVersion: pack.SchemaVersion, Type: "full",
		Source:    pack.Source{Repository: "r", Kind: "git", Trigger: "worktree", Scope: "tree"},
		Manifest:  pack.Manifest{Dependencies: []pack.Dependency{}, EntryPoints: []string{}},
		FileIndex: []pack.IndexEntry{{Path: "a.go", Type: pack.TypeText, Category: pack.CatSource, SizeBytes: &size, Included: true}},
		Changes:   []pack.Change{},
		Contents: []pack.Item{{ID: "a.go:1:3", Path: "a.go", Role: pack.RolePrimary, Encoding: "utf-8", Content: content,
			SHA256: hex.EncodeToString(sum[:]), Blob: strings.Repeat("ab", 20), OriginalSizeBytes: &size,
			Redactions: []pack.Redaction{}, StartLine: 1, EndLine: 3}},
		Budget: pack.Budget{MaxContentBytes: 1000, ContentBytes: size, TokenEncoding: "o200k_base"},
		Metadata: pack.Metadata{PackType: "full", SelectionReason: "test", CreatedAt: "2026-01-02T03:04:05Z",
			ExclusionsByReason: map[pack.Reason]int{}, Encodings: []pack.EncodingNote{}},
	}
}

// TestAuditIntegrityAndSchema: every integrity and schema check still fails
// on its own tampering, whether the bytes stay canonical (the schema then
// is checked on the decoded pack's document) or not (on the bytes decoded
// again), and the schema verdict is the one of the bytes either way.
func TestAuditIntegrityAndSchema(t *testing.T) {
	s, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	finalize := func(edit func(p *pack.Pack)) []byte {
		p := cleanPack()
		edit(p)
		data, err := pack.Finalize(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	clean := finalize(func(*pack.Pack) {})
	usedChars := regexp.MustCompile(`"used_chars":([0-9]+)`)
	tests := []struct {
		name      string
		data      []byte
		canonical bool
		want      []string
	}{
		{"clean", clean, true, nil},
		{"schema: a kind the schema does not know", finalize(func(p *pack.Pack) { p.Source.Kind = "svn" }), true, []string{CodeSchemaInvalid}},
		{"schema: redactions null", finalize(func(p *pack.Pack) { p.Contents[0].Redactions = nil }), true, []string{CodeSchemaInvalid}},
		{"schema: created_at not a time", finalize(func(p *pack.Pack) { p.Metadata.CreatedAt = "yesterday" }), true, []string{CodeSchemaInvalid}},
		{"schema: negative size", finalize(func(p *pack.Pack) { *p.FileIndex[0].SizeBytes = -1 }), true, []string{CodeSchemaInvalid}},
		{"schema: score over 1", finalize(func(p *pack.Pack) { p.Contents[0].Score = 1.5 }), true, []string{CodeSchemaInvalid}},
		{"schema: withheld original with a blob", finalize(func(p *pack.Pack) { p.Contents[0].OriginalWithheld = pack.WithheldSecret }), true, []string{CodeOriginalPublished, CodeSchemaInvalid}},
		{"unknown key", bytes.Replace(clean, []byte(`{`), []byte(`{"extra":1,`), 1), false, []string{CodeDigestMismatch, CodeSchemaInvalid}},
		{"key in another case", bytes.Replace(clean, []byte(`"pack_id"`), []byte(`"Pack_ID"`), 1), false, []string{CodeDigestMismatch, CodeSchemaInvalid}},
		{"duplicate key", bytes.Replace(clean, []byte(`{`), []byte(`{"type":"summary",`), 1), false, []string{CodeDigestMismatch}},
		{"re-serialized", func() []byte {
			var b bytes.Buffer
			if err := json.Indent(&b, clean, "", " "); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}(), false, []string{CodeDigestMismatch}},
		{"wrong pack id", func() []byte {
			var p pack.Pack
			if err := json.Unmarshal(clean, &p); err != nil {
				t.Fatal(err)
			}
			other := "pk_aaaaaaaa"
			if p.PackID == other {
				other = "pk_bbbbbbbb"
			}
			return bytes.Replace(clean, []byte(p.PackID), []byte(other), 1)
		}(), true, []string{CodePackIDMismatch}},
		{"wrong used_chars", usedChars.ReplaceAllFunc(clean, func(m []byte) []byte {
			n, _ := strconv.Atoi(string(usedChars.FindSubmatch(m)[1]))
			return []byte(`"used_chars":` + strconv.Itoa(n+1))
		}), true, []string{CodeDigestMismatch}},
		{"edited content, sha256 kept", finalize(func(p *pack.Pack) { p.Contents[0].Content += "// more\n" }), true, []string{CodeContentMismatch}},
		{"not JSON", clean[:len(clean)/2], false, []string{CodeSchemaInvalid}},
		{"null", []byte("null"), false, []string{CodeDigestMismatch, CodePackIDMismatch, CodeSchemaInvalid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p pack.Pack
			if json.Unmarshal(tt.data, &p) == nil {
				same, _, err := canonicalDigest(&p, tt.data)
				if err != nil || same != tt.canonical {
					t.Fatalf("canonical = %v, %v; the case means %v", same, err, tt.canonical)
				}
			}
			v, err := Pack(context.Background(), tt.data, Input{Policy: policy.Default(), Scanner: s, Sensitive: SensitiveFile})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range v.Failed {
				if !slices.Contains(got, c.Code) {
					got = append(got, c.Code)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("failed codes %v, want %v: %+v", got, tt.want, v.Failed)
			}
			if bytesInvalid := schema.ValidatePack(tt.data) != nil; bytesInvalid != slices.Contains(got, CodeSchemaInvalid) {
				t.Fatalf("the schema check of the bytes says invalid=%v, the audit's %v", bytesInvalid, got)
			}
		})
	}
}

// TestAuditVerdictOrderIsFixed: the checks run in two groups side by side;
// a pack failing checks of both (a content edited after its digest, a
// secret in it, an original withheld with its blob kept) gets the same
// verdict every time, each failure once.
func TestAuditVerdictOrderIsFixed(t *testing.T) {
	s, err := NewScanner(ScannerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := secrettest.Make(7)
	p := cleanPack()
	p.Contents[0].OriginalWithheld = pack.WithheldSecret
	data, err := pack.Finalize(p)
	if err != nil {
		t.Fatal(err)
	}
	// A secret where the content was: its sha256 no longer matches.
	data = bytes.Replace(data, []byte(`return \"<a & b>\"`), []byte(`return \"`+f.GitHub+`\"`), 1)
	var first []byte
	for i := range 20 {
		v, err := Pack(context.Background(), data, Input{Policy: policy.Default(), Scanner: s, Sensitive: SensitiveFile})
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = got
			codes := map[string]int{}
			for _, c := range v.Failed {
				codes[c.Code]++
			}
			for _, want := range []string{CodeContentMismatch, CodeOriginalPublished, CodeSchemaInvalid} {
				if codes[want] == 0 {
					t.Errorf("no %s failure in %s", want, got)
				}
			}
			if len(codes) < 4 {
				t.Errorf("failures %v: want the secret's too", codes)
			}
			continue
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("run %d's verdict differs:\n%s\n%s", i, got, first)
		}
	}
}
