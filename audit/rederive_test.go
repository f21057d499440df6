package audit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/pack"
)

func TestSentMatches(t *testing.T) {
	const orig = "user = app\npassword = hunter2hunter2\nport = 5432\n"
	tests := []struct {
		name, sent  string
		truncatable bool
		want        bool
	}{
		{"verbatim", orig, false, true},
		{"redacted value", "user = app\npassword = [REDACTED:pw]\nport = 5432\n", false, true},
		{"two placeholders side by side", "user = app\npassword = [REDACTED:a][REDACTED:b]\nport = 5432\n", false, true},
		{"placeholder over lines", "user = app\n[REDACTED:private-key]\nport = 5432\n", false, true},
		{"placeholder for nothing", "user = app\npassword = hunter2hunter2[REDACTED:pw]\nport = 5432\n", false, false},
		{"text around a placeholder changed", "user = app\npasswd = [REDACTED:pw]\nport = 5432\n", false, false},
		{"text after changed", "user = app\npassword = [REDACTED:pw]\nport = 5433\n", false, false},
		{"line added", orig + "debug = true\n", false, false},
		{"literal placeholder text matches itself", "a [REDACTED:x] b\n", false, true},
		{"unterminated marker is literal", "password = [REDACTED:pw\nport = 5432\n", false, false},
		{"head and tail", "user = app\n... [truncated] ...\nport = 5432\n", true, true},
		{"head and tail, not truncatable", "user = app\n... [truncated] ...\nport = 5432\n", false, false},
		{"head cut mid-line", "user = ap\n... [truncated] ...\nport = 5432\n", true, true},
		{"head changed around the marker", "user = apq\n... [truncated] ...\nport = 5432\n", true, false},
		{"tail with a placeholder", "user = app" + pack.TruncationMarker + "[REDACTED:pw]\nport = 5432\n", true, true},
	}
	for _, tt := range tests {
		original := orig
		if strings.HasPrefix(tt.name, "literal") {
			original = tt.sent
		}
		if got := sentMatches(tt.sent, original, tt.truncatable); got != tt.want {
			t.Errorf("%s: sentMatches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRederiveItem(t *testing.T) {
	text := "line 1\nline 2 café\nline 3\nline 4\n"
	latin1 := []byte("line 1\nline 2 caf\xe9\nline 3\nline 4\n")
	item := func(id, enc, content string, start, end int) *pack.Item {
		path, _, _ := strings.Cut(id, ":")
		return &pack.Item{ID: id, Path: path, Encoding: enc, Content: content, StartLine: start, EndLine: end}
	}
	tests := []struct {
		name string
		it   *pack.Item
		data []byte
		want string // "" passes, else a fragment of the problem
	}{
		{"whole file", item("f.txt:1:4", "utf-8", text, 1, 4), []byte(text), ""},
		{"whole file, lines only in the id", item("f.txt:1:4", "utf-8", text, 0, 0), []byte(text), ""},
		{"region", item("f.txt:2:3", "utf-8", "line 2 café\nline 3\n", 2, 3), []byte(text), ""},
		{"last line without newline", item("f.txt:2:2", "utf-8", "b", 2, 2), []byte("a\nb"), ""},
		{"latin-1", item("f.txt:2:2", "latin-1", "line 2 café\n", 2, 2), latin1, ""},
		{"latin-1 read as utf-8", item("f.txt:2:2", "utf-8", "line 2 café\n", 2, 2), latin1, "not lines 2–2"},
		{"empty file", item("e.txt:0:0", "utf-8", "", 0, 0), nil, ""},
		{"region one line off", item("f.txt:2:3", "utf-8", "line 3\nline 4\n", 2, 3), []byte(text), "not lines 2–3"},
		{"lines past the end", item("f.txt:3:9", "utf-8", "line 3\nline 4\n", 3, 9), []byte(text), "file of 4 lines"},
		{"id and lines disagree", item("f.txt:2:3", "utf-8", "line 2 café\nline 3\n", 1, 2), []byte(text), "start_line/end_line"},
		{"id of another path", &pack.Item{ID: "g.txt:1:4", Path: "f.txt", Encoding: "utf-8", Content: text}, []byte(text), "path:start_line:end_line"},
		{"unknown encoding", item("f.txt:1:4", "ebcdic", text, 1, 4), []byte(text), "encoding"},
		{"region with a marker is not truncated", item("f.txt:1:3", "utf-8", "line 1"+pack.TruncationMarker, 1, 3), []byte(text), "not lines 1–3"},
	}
	for _, tt := range tests {
		got := rederiveItem(tt.it, tt.data)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRederiveDiff(t *testing.T) {
	header := "diff --git a/f.go b/f.go\nindex 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644\n--- a/f.go\n+++ b/f.go\n"
	h1 := "@@ -1,3 +1,3 @@ package f\n a\n-b\n+B\n c\n"
	h2 := "@@ -10,3 +10,3 @@ func x() {\n k\n-token := \"old\"\n+token := \"new\"\n m\n"
	h3 := "@@ -20,2 +20,3 @@\n y\n+z\n w\n"
	repo := header + h1 + h2 + h3
	noIndex, _ := pack.DropIndexLine(header)
	cut := strings.TrimPrefix(pack.TruncationMarker, "\n")
	tests := []struct {
		name, sent string
		truncated  bool
		want       string
	}{
		{"whole", repo, false, ""},
		{"some hunks", header + h1 + h3, true, ""},
		{"index line withheld", noIndex + h2, true, ""},
		{"redacted added line", header + strings.Replace(h2, `"new"`, `"[REDACTED:generic]"`, 1), false, ""},
		{"redacted removed line", header + strings.Replace(h2, `"old"`, `"[REDACTED:generic]"`, 1), false, ""},
		{"first hunks, then the marker", header + h1 + h2 + cut, true, ""},
		{"head and tail", repo[:len(header)+20] + pack.TruncationMarker + repo[len(repo)-15:], true, ""},
		{"marker but not truncated", header + h1 + cut, false, "does not say"},
		{"hunks out of order", header + h3 + h1, true, "not a hunk"},
		{"hunk not in the repository", header + strings.Replace(h3, "-20,2", "-21,2", 1), true, "not a hunk"},
		{"added line changed", header + strings.Replace(h1, "+B", "+X", 1), false, "differs"},
		{"context line changed", header + strings.Replace(h1, " c\n", " C\n", 1), false, "differs"},
		{"removed line changed", header + strings.Replace(h2, `-token := "old"`, `-token := "odd"`, 1), false, "differs"},
		{"header changed", strings.Replace(header, "b/f.go", "b/g.go", 2) + h1, true, "header"},
		{"head changed before the marker", header + strings.Replace(h1, "+B", "+X", 1) + cut, true, "cut around"},
		{"three markers", header + h1 + cut + h2 + cut + h3 + cut, true, "3 truncation markers"},
	}
	for _, tt := range tests {
		got := rederiveDiff(&pack.Change{Path: "f.go", Diff: tt.sent, DiffTruncated: tt.truncated}, repo)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// A diff's raw bytes reach the pack as encoding/json writes them.
	latin := header + "@@ -1 +1 @@\n-caf\xe9\n+caf\xe9s\n"
	sent := strings.ReplaceAll(latin, "\xe9", "\uFFFD")
	if got := rederiveDiff(&pack.Change{Diff: sent}, latin); got != "" {
		t.Errorf("latin-1 diff: %s", got)
	}
}

// A diff that matches the repository's may still show, as its text, part
// of a secret of a version of the file that its own text does not hold
// whole: each span pack.DiffSecrets gives must be behind a placeholder or
// cut away.
func TestRederiveDiffSecrets(t *testing.T) {
	header := "diff --git a/k.txt b/k.txt\nindex 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644\n--- a/k.txt\n+++ b/k.txt\n"
	hunk := "@@ -4,3 +4,3 @@ KEYLINE3\n KEYLINE4\n-KEYLINE5\n+KEYLINEX\n KEYLINE6\n"
	far := "@@ -40 +40 @@\n-z\n+y\n"
	repo := header + hunk + far
	// What DiffSecrets gives for the key's lines 3-6: every line's text.
	var secrets []pack.DiffSecret
	for _, l := range []string{"KEYLINE3", "KEYLINE4", "KEYLINE5", "KEYLINEX", "KEYLINE6"} {
		at := strings.Index(repo, l)
		secrets = append(secrets, pack.DiffSecret{Start: at, End: at + len(l), Finding: pack.Finding{RuleID: "private-key", StartLine: 2}, Old: l == "KEYLINE5"})
	}
	noIndex, _ := pack.DropIndexLine(header)
	red := "[REDACTED:private-key]"
	redacted := "@@ -4,3 +4,3 @@ " + red + "\n " + red + "\n-" + red + "\n+" + red + "\n " + red + "\n"
	tests := []struct {
		name, sent string
		truncated  bool
		exposed    string // the text of the span shown, "" for none
	}{
		{"every line redacted", noIndex + redacted + far, false, ""},
		{"the hunk left out", noIndex + far, true, ""},
		{"a context line shown", noIndex + strings.Replace(redacted, " "+red+"\n-", " KEYLINE4\n-", 1) + far, false, "KEYLINE4"},
		{"the heading shown", noIndex + strings.Replace(redacted, "@@ "+red, "@@ KEYLINE3", 1) + far, false, "KEYLINE3"},
		{"a removed line shown", header + strings.Replace(redacted, "-"+red, "-KEYLINE5", 1) + far, false, "KEYLINE5"},
		{"half a line shown", noIndex + strings.Replace(redacted, "+"+red, "+KEYL"+red, 1) + far, false, "KEYLINEX"},
		{"the whole diff shown", noIndex + hunk + far, false, "KEYLINE3"},
		{"cut before the key", noIndex[:20] + pack.TruncationMarker + "\n-z\n+y\n", true, ""},
		{"cut after a shown line", noIndex + "@@ -4,3 +4,3 @@ " + red + "\n KEYLINE4" + pack.TruncationMarker + "\n-z\n+y\n", true, "KEYLINE4"},
	}
	for _, tt := range tests {
		problem, exposed := rederiveDiffSecrets(&pack.Change{Path: "k.txt", Diff: tt.sent, DiffTruncated: tt.truncated}, repo, secrets)
		if problem != "" {
			t.Errorf("%s: %s", tt.name, problem)
			continue
		}
		got := ""
		if exposed != nil {
			got = repo[exposed.Start:exposed.End]
		}
		if got != tt.exposed {
			t.Errorf("%s: exposes %q, want %q", tt.name, got, tt.exposed)
		}
	}
	// A diff's raw bytes reach the pack as encoding/json writes them: the
	// spans move with the text.
	latin := header + "@@ -1 +1 @@\n-caf\xe9 KEYA\n+caf\xe9s KEYB\n"
	at := strings.Index(latin, "KEYB")
	sent := strings.ReplaceAll(latin, "\xe9", "\uFFFD")
	_, exposed := rederiveDiffSecrets(&pack.Change{Diff: sent}, latin, []pack.DiffSecret{{Start: at, End: at + 4}})
	if exposed == nil {
		t.Error("latin-1 diff: the secret it shows is not found")
	}
	_, exposed = rederiveDiffSecrets(&pack.Change{Diff: strings.Replace(sent, "KEYB", "[REDACTED:r]", 1)}, latin, []pack.DiffSecret{{Start: at, End: at + 4}})
	if exposed != nil {
		t.Error("latin-1 diff: a redacted secret is found")
	}
}

// FuzzRederive: the re-derivation never panics on any pack text, and a
// text made from the original the way a builder makes it (lines cut,
// spans replaced by placeholders, head and tail kept around the marker)
// always matches.
func FuzzRederive(f *testing.F) {
	f.Add("a\nb\nc\n", 1, 2, 2, 4, 3)
	f.Add("x[REDACTED:y]z\n... [truncated] ...\n", 0, 1, 1, 3, 9)
	f.Add("", 0, 0, 0, 0, 0)
	f.Fuzz(func(t *testing.T, text string, start, end, a, b, cut int) {
		it := &pack.Item{ID: fmt.Sprintf("p:%d:%d", start, end), Path: "p", Encoding: "utf-8", Content: text}
		_ = rederiveItem(it, []byte(text))
		_ = rederiveDiff(&pack.Change{Diff: text, DiffTruncated: true}, text)
		if _, exposed := rederiveDiffSecrets(&pack.Change{Diff: text}, text, []pack.DiffSecret{{Start: a, End: b}}); exposed != nil && (a >= b || a >= len(text) || b <= 0) {
			t.Fatalf("an empty span [%d,%d) of %d bytes is exposed", a, b, len(text))
		}
		_ = firstDifference(text, text[:len(text)/2])
		n := len(text)
		if n == 0 || strings.Contains(text, "]") {
			return // no placeholder or marker of the original's own
		}
		a, b = abs(a)%n, abs(b)%n
		if a > b {
			a, b = b, a
		}
		if a == b {
			return
		}
		const ph = "[REDACTED:rule]"
		redacted := text[:a] + ph + text[b:]
		if !sentMatches(redacted, text, false) {
			t.Fatalf("a redaction of [%d,%d) does not match", a, b)
		}
		// Cut redacted[k1:k2] for the marker, never inside the placeholder.
		outside := func(k int) int {
			k = abs(k) % (len(redacted) + 1)
			if k > a && k < a+len(ph) {
				return a
			}
			return k
		}
		k1, k2 := outside(cut), outside(cut/3)
		if k1 > k2 {
			k1, k2 = k2, k1
		}
		truncated := redacted[:k1] + pack.TruncationMarker + redacted[k2:]
		if !sentMatches(truncated, text, true) {
			t.Fatalf("a cut of [%d,%d) does not match", k1, k2)
		}
	})
}
