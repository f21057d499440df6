package pack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

func TestSniff(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		binary bool
		enc    string
	}{
		{"utf8", []byte("héllo\n"), false, EncUTF8},
		{"empty", nil, false, EncUTF8},
		{"nul", []byte("abc\x00def"), true, ""},
		{"controls", []byte("\x01\x02\x03\x04abc"), true, ""},
		{"utf16le bom", []byte{0xFF, 0xFE, 'h', 0, 'i', 0}, false, EncUTF16LE},
		{"utf16be bom", []byte{0xFE, 0xFF, 0, 'h', 0, 'i'}, false, EncUTF16BE},
		{"latin1", []byte("caf\xe9 cr\xe8me\n"), false, EncLatin1},
		{"nul after 8KiB is text", append([]byte(strings.Repeat("a", 9000)), 0), false, EncUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, enc := sniff(tt.data)
			if b != tt.binary || enc != tt.enc {
				t.Fatalf("sniff = %v %q, want %v %q", b, enc, tt.binary, tt.enc)
			}
		})
	}
}

// TestTextOf: the history scan reads a file's text as a pack does —
// UTF-16 decoded, Latin-1 decoded, UTF-8 as it is (the same string, not
// a copy) — and nothing of a binary one.
func TestTextOf(t *testing.T) {
	for _, tt := range []struct {
		name, data, text string
		ok               bool
	}{
		{"utf8", "héllo\n", "héllo\n", true},
		{"empty", "", "", true},
		{"utf16le bom", "\xff\xfeh\x00i\x00\n\x00", "hi\n", true},
		{"utf16be bom", "\xfe\xff\x00h\x00\xe9", "hé", true},
		{"latin1", "caf\xe9\n", "café\n", true},
		{"nul", "abc\x00def", "", false},
		{"controls", "\x01\x02\x03\x04abc", "", false},
	} {
		text, ok := TextOf(tt.data)
		if text != tt.text || ok != tt.ok {
			t.Errorf("%s: TextOf = %q, %v; want %q, %v", tt.name, text, ok, tt.text, tt.ok)
		}
	}
	data := strings.Repeat("a line of text\n", 1000)
	if text, _ := TextOf(data); unsafe.StringData(text) != unsafe.StringData(data) {
		t.Error("TextOf copied valid UTF-8")
	}
}

func TestDecode(t *testing.T) {
	got, err := decode([]byte{0xFF, 0xFE, 'h', 0, 0xe9, 0}, EncUTF16LE)
	if err != nil || got != "hé" {
		t.Fatalf("utf16 = %q %v", got, err)
	}
	got, _ = decode([]byte("caf\xe9"), EncLatin1)
	if got != "café" {
		t.Fatalf("latin1 = %q", got)
	}
	for in, want := range map[string]string{
		"":                   "",
		"plain ascii\n":      "plain ascii\n",
		"café ✓ 🙂":           "café ✓ 🙂",
		"caf\xe9 \xff\xfe x": "caf\uFFFD \uFFFD x",
		"cut \xe2\x9c":       "cut \uFFFD",
		"\xed\xa0\x80":       "\uFFFD", // a surrogate is not UTF-8
	} {
		if got, err := decode([]byte(in), EncUTF8); err != nil || got != want {
			t.Errorf("utf-8 %q = %q, %v; want %q", in, got, err, want)
		}
	}
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestTruncateKeepsHeadAndTail(t *testing.T) {
	text := numbered(1000)
	out, _, truncated := truncate(text, 2000, 100, 50)
	if !truncated {
		t.Fatal("not truncated")
	}
	// 100+50 short lines exceed 2000 bytes, so the byte cut applies too.
	if len(out) > 2000 {
		t.Fatalf("len = %d", len(out))
	}
	out, kept, truncated := truncate(text, 5000, 100, 50)
	if !truncated || !strings.HasPrefix(out, "line 1\n") || !strings.Contains(out, "line 100\n"+TruncationMarker) ||
		strings.Contains(out, "line 101\n") || !strings.HasSuffix(out, "line 1000\n") || strings.Contains(out, "line 950\n") ||
		!strings.Contains(out, TruncationMarker+"line 951\n") {
		t.Fatalf("out = %q", out)
	}
	if len(kept) != 2 || text[kept[1].start:kept[1].end] != numbered(1000)[len(numbered(950)):] {
		t.Fatalf("kept = %+v", kept)
	}
	small := "a\nb\n"
	if out, _, tr := truncate(small, 100, 1, 1); tr || out != small {
		t.Fatal("small text changed")
	}
}

func TestTruncateLongLinesAtRuneBoundary(t *testing.T) {
	text := strings.Repeat("é", 10000) // one 20,000-byte line
	out, _, truncated := truncate(text, 1000, 100, 50)
	if !truncated || len(out) > 1000 || !strings.Contains(out, TruncationMarker) {
		t.Fatalf("len %d truncated %v", len(out), truncated)
	}
	if strings.ContainsRune(out, '\uFFFD') {
		t.Fatal("cut inside a rune")
	}
}

func TestMapSpan(t *testing.T) {
	kept := []span{{0, 10}, {90, 100}}
	tests := []struct {
		start, end int
		want       []span
	}{
		{2, 5, []span{{2, 5}}},
		{50, 60, nil},
		{8, 95, []span{{8, 10}, {10 + len(TruncationMarker), 15 + len(TruncationMarker)}}},
		{95, 100, []span{{15 + len(TruncationMarker), 20 + len(TruncationMarker)}}},
	}
	for _, tt := range tests {
		got := mapSpan(kept, tt.start, tt.end)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("mapSpan(%d,%d) = %v, want %v", tt.start, tt.end, got, tt.want)
		}
	}
}

func TestApplyRedactionsMergesOverlaps(t *testing.T) {
	text := "a\nkey=SECRETVALUE\nb\n"
	s := strings.Index(text, "SECRET")
	out, reds := applyRedactions(text, []redactSpan{{s, s + 11, "r1"}, {s + 3, s + 6, "r2"}})
	if out != "a\nkey=[REDACTED:r1]\nb\n" {
		t.Fatalf("out = %q", out)
	}
	if len(reds) != 1 || reds[0] != (Redaction{Line: 2, RuleID: "r1"}) {
		t.Fatalf("reds = %+v", reds)
	}
}

func TestID(t *testing.T) {
	id := ID([32]byte{1, 2, 3})
	if len(id) != 11 || !strings.HasPrefix(id, "pk_") || strings.Trim(id[3:], "abcdefghijklmnopqrstuvwxyz234567") != "" {
		t.Fatalf("id = %q", id)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		path       string
		cat        Category
		importance string
	}{
		{"package.json", CatConfig, ImportanceCritical},
		{"go.mod", CatConfig, ImportanceCritical},
		{"cmd/tool/main.go", CatEntrypoint, ImportanceCritical},
		{"src/index.ts", CatEntrypoint, ImportanceCritical},
		{"internal/auth/session.go", CatAuth, ImportanceHigh},
		{"pkg/rbac.go", CatAuth, ImportanceHigh},
		{"api/routes.py", CatAPI, ImportanceHigh},
		{"db/user_model.rb", CatDatabase, ImportanceHigh},
		{"internal/auth/session_test.go", CatTest, ""},
		{"README.md", CatDocumentation, ImportanceMedium},
		{"docs/guide.md", CatDocumentation, ""},
		{"pkg/util.go", CatSource, ""},
		{"node_modules/x/index.js", CatDependency, ""},
		{"dist/app.js", CatBuild, ""},
		{"assets/logo.bin", CatOther, ""},
	}
	for _, tt := range tests {
		cat, imp := classify(tt.path, typeByName(tt.path))
		if cat != tt.cat || imp != tt.importance {
			t.Errorf("classify(%s) = %s %q, want %s %q", tt.path, cat, imp, tt.cat, tt.importance)
		}
	}
}

func TestDefaultPatternsVerbatim(t *testing.T) {
	tests := []struct {
		path   string
		reason Reason
	}{
		{"server.pem", ReasonCredentials},
		{"config/.env.production", ReasonCredentials},
		{"deploy/credentials.json", ReasonCredentials},
		{"app/api_token.txt", ReasonCredentials},
		{"web/node_modules/react/index.js", ReasonDependencyDir},
		{"vendor/github.com/x/y.go", ReasonDependencyDir},
		{"packages/a/node_modules/b/c.js", ReasonDependencyDir},
		{"dist/bundle.js", ReasonBuildOutput},
		{"rust/target/debug/x", ReasonBuildOutput},
		{"__pycache__/m.cpython-311.pyc", ReasonCache},
		{"data/dump.sql", ReasonPatternMatch},
		{"logs/today.txt", ReasonPatternMatch},
		{"img/logo.png", ReasonBinary},
		{"release.tar.xz", ReasonBinary},
		{"sub/.git/config", ReasonPatternMatch},
	}
	for _, tt := range tests {
		r, _, ok := matchDefault(tt.path)
		if !ok || r != tt.reason {
			t.Errorf("matchDefault(%s) = %s %v, want %s", tt.path, r, ok, tt.reason)
		}
	}
	for _, p := range []string{"main.go", "docs/environment.md", "src/tokenizer.go"} {
		if r, pat, ok := matchDefault(p); ok {
			t.Errorf("matchDefault(%s) = %s via %s, want no match", p, r, pat)
		}
	}
	if n := len(DefaultPatterns()); n != 55 {
		t.Fatalf("default patterns = %d, want the seed's 55", n)
	}
}

func TestIgnoreMatcherNestedAndNegation(t *testing.T) {
	m := newIgnoreMatcher(map[string][]byte{
		".ctxpackignore":     []byte("# comment\n*.snap\nfixtures/\n"),
		"web/.ctxpackignore": []byte("!keep.snap\ngen/\n"),
	})
	tests := map[string]bool{
		"a.snap":            true,
		"web/keep.snap":     false,
		"web/other.snap":    true,
		"fixtures/x.json":   true,
		"web/gen/out.ts":    true,
		"gen/out.ts":        false,
		"src/main.go":       false,
		"web/fixtures/a.js": true,
	}
	for p, want := range tests {
		if got := m.Match(p); got != want {
			t.Errorf("Match(%s) = %v, want %v", p, got, want)
		}
	}
	var none *ignoreMatcher
	if none.Match("x") {
		t.Fatal("nil matcher matched")
	}
}

func TestCountTokensLargeTextIsStable(t *testing.T) {
	small, err := CountTokens("hello world\n")
	if err != nil || small != 3 {
		t.Fatalf("CountTokens = %d, %v", small, err)
	}
	big := strings.Repeat("func main() { fmt.Println(\"hello\") }\n", 40000) // ~1.5 MB: several pieces
	a, err := CountTokens(big)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := CountTokens(big)
	if a != b || a < 40000*10 {
		t.Fatalf("counts %d and %d", a, b)
	}
}

func TestValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             "plain",
		"caf\xe9":           "caf\uFFFD",
		"Gr\xf6\xdfe":       "Gr\uFFFD\uFFFDe",
		"ok é \xff\xfe end": "ok é \uFFFD\uFFFD end",
		"\xe2\x82":          "\uFFFD\uFFFD", // a cut sequence: a U+FFFD each byte, as encoding/json
	} {
		if got := validUTF8(in); got != want {
			t.Errorf("validUTF8(%q) = %q, want %q", in, got, want)
		}
		// encoding/json reads the serialization of in back as want.
		data, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal(data, &back); err != nil || back != want {
			t.Errorf("json of %q reads back as %q, want %q", in, back, want)
		}
	}
}
