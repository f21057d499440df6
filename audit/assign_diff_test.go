package audit

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/ctxpack/ctxpack/internal/corpus"
	"github.com/ctxpack/ctxpack/internal/leakcorpus"
	"github.com/ctxpack/ctxpack/internal/secrettest"
)

// checkSameAssignments fails when findAssignments and the reference
// disagree on text: other findings, another order or other positions.
func checkSameAssignments(t testing.TB, path, text string) {
	t.Helper()
	got := findAssignments(path, text, newLineIndex(text))
	want := findAssignmentsRef(path, text, newLineIndex(text))
	if !slices.Equal(got, want) {
		// positions and rules only: the values are secrets
		t.Fatalf("%s: findAssignments differs from the reference:\n got %v\nwant %v", path, spansOf(got), spansOf(want))
	}
}

func spansOf(as []assignment) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.rule+"@"+itoa(a.line)+":"+itoa(a.matchStart)+"/"+itoa(a.start)+"-"+itoa(a.end))
	}
	return out
}

// treeTexts are the text files (no NUL in the first 8 KiB) under each
// directory of CTXPACK_SCAN_TREE (a list like PATH; .git is skipped).
func treeTexts(t testing.TB) map[string]string {
	out := map[string]string{}
	for _, dir := range filepath.SplitList(os.Getenv("CTXPACK_SCAN_TREE")) {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
				return nil
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out[filepath.Base(dir)+"/"+filepath.ToSlash(rel)] = string(data)
			return nil
		})
		if err != nil {
			t.Fatalf("CTXPACK_SCAN_TREE: %v", err)
		}
	}
	return out
}

// TestFindAssignmentsMatchesReferenceTree compares on every text file of
// real trees: CTXPACK_SCAN_TREE=/tmp/hugo:/tmp/gin go test -run
// MatchesReferenceTree ./audit/
func TestFindAssignmentsMatchesReferenceTree(t *testing.T) {
	if os.Getenv("CTXPACK_SCAN_TREE") == "" {
		t.Skip("CTXPACK_SCAN_TREE is not set")
	}
	files := treeTexts(t)
	if len(files) == 0 {
		t.Fatal("CTXPACK_SCAN_TREE holds no text file")
	}
	n := 0
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if !yield(p) {
				return
			}
		}
	}) {
		checkSameAssignments(t, p, files[p])
		n++
	}
	t.Logf("%d files compared", n)
}

// TestFindAssignmentsMatchesReference compares on this repository's audit
// sources, the generated corpus, the leak corpus and generated credential
// lines of every syntax, each under source, config, shell and doc names.
func TestFindAssignmentsMatchesReference(t *testing.T) {
	var texts []string
	for _, data := range corpus.Files(300, 1) {
		texts = append(texts, string(data))
	}
	c := leakcorpus.Build(7)
	for _, m := range []map[string]string{c.Base, c.Head, c.Interim, c.InterimExtra} {
		for p, s := range m {
			checkSameAssignments(t, p, s)
			texts = append(texts, s)
		}
	}
	own, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range own {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	gen := generatedAssignmentLines(4000)
	// the generated lines must exercise the rules, not only the prefilter
	if n := len(findAssignmentsRef("a/x", gen, newLineIndex(gen))); n < 500 {
		t.Fatalf("the generated lines hold %d findings, want at least 500", n)
	}
	texts = append(texts, gen)
	// The same lines forty to a line (minified-like lines over 512 bytes,
	// where the quoted-assignment pattern first looks for a key before an
	// operator and a quote), joined by each separator a bundle has; without
	// the allow comments, which would skip every line.
	lines := strings.Split(strings.ReplaceAll(gen, "gitleaks:allow", ""), "\n")
	var long strings.Builder
	for i, l := range lines {
		long.WriteString(l)
		if i%40 == 39 {
			long.WriteString("\n")
		} else {
			long.WriteString([]string{";", " ", ",", "}{", ""}[i%5])
		}
	}
	// and long lines whose one assignment is of each form the key may take
	for _, form := range []string{`password string = "s3cr3tv4lue"`, `String password = "s3cr3tv4lue"`,
		`password: str = "s3cr3tv4lue"`, `"api_key": "s3cr3tv4lue"`, `x[secret] = 's3cr3tv4lue'`,
		`token ?= "s3cr3tv4lue"`, `$password = @"s3cr3tv4lue"`, "db.pass_word ||= `s3cr3tv4lue`", `пароль = "s3cr3tv4lue"`,
		`HTTPBasicAuth(user, "s3cr3tv4lue")`, `login = ( u, 's3cr3tv4lue')`, `new NetworkCredential(name="u", "s3cr3tv4lue")`,
		`fetch(base+"?a=1&api_key=s3cr3tv4lue&b=2")`, `// see ?a=1&api_key=s3cr3tv4lue&b=2 there`} {
		long.WriteString(strings.Repeat("x=1;", 150) + form + ";" + strings.Repeat("y(2);", 40) + "\n")
	}
	if n := len(findAssignmentsRef("a/x.js", long.String(), newLineIndex(long.String()))); n < 200 {
		t.Fatalf("the long generated lines hold %d findings, want at least 200", n)
	}
	texts = append(texts, long.String())
	slices.Sort(texts)
	paths := []string{"a/main.go", "a/app.py", "a/config.yaml", "a/app.properties", "a/run.sh", "a/.env", "a/README.md", "a/web.config", "a/Dockerfile", "a/x"}
	for i, s := range texts {
		ps := paths
		if raceEnabled { // each text under one of the names, in turn
			ps = paths[i%len(paths) : i%len(paths)+1]
		}
		for _, p := range ps {
			checkSameAssignments(t, p, s)
		}
	}
}

// generatedAssignmentLines are n lines of credential keys, separators,
// quotes and values in the forms the rules read, mixed with command
// lines, URLs and non-ASCII runes.
func generatedAssignmentLines(n int) string {
	r := rand.New(rand.NewPCG(3, 4))
	g := secrettest.NewGen(11)
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	var b strings.Builder
	for range n {
		for k := 1 + r.IntN(3); k > 0; k-- {
			b.WriteString(pick("", " ", "\t", "export ", "ENV ", "- ", "$", "  \"", "'", "<", "?", "&", ";", "//x/:", "--", "define('", "%env ", "set "))
			b.WriteString(pick("password", "DB_PASSWORD", "dbPassword", "api_key", "APIKey", "token", "secret", "pwd", "Pwd", "pass", "auth",
				"_auth", "$_AUTH", "private.key", "p_a_s_s_w_o_r_d", "A.P.I-KEY", "x[secret]", "Kennwort", "contraseña", "пароль", "name", "user", "key", "value", "access-key", "secretName", "sifre", "ſecret"))
			b.WriteString(pick("", "\"", "'", "]", " string", ": str", " String x"))
			b.WriteString(pick("=", ": ", " = ", ":=", " => ", "?=", "||=", " ", "=\"", ":'", ">", "\t", "::=", "="))
			b.WriteString(pick("", "\"", "'", "`", "r\"", "@\"", "{", "${X}", "$X", "<"))
			b.WriteString(g.Str(secrettest.Alnum+pick("", "+/=_-", " ;&|@:/#?.", "é日"), r.IntN(24)))
			b.WriteString(pick("", "\"", "'", "`", "}", "</password>", "</pass>", ";", " # c", "@tcp(h)/d", "@host", ")"))
			b.WriteString(pick("", " ", ", ", ";Password=", " value=\"v4lu3x\"", " name=\"token\" value=\"abcd1234\""))
		}
		b.WriteString(pick("\n", "\n", "\n", "\r\n", " gitleaks:allow\n", " [REDACTED:x]\n"))
		switch r.IntN(12) {
		case 0:
			b.WriteString(pick("mysql -uroot -p", "docker login -u u -p ", "sshpass -p ", "curl -u u:", "htpasswd -nb u ", "sqlplus a/",
				"echo x | docker login --password-stdin ", "redis-cli -a ", "keytool -storepass ", "openssl x -passin pass:", "xfreerdp /p:"))
			b.WriteString(g.Str(secrettest.Alnum, 4+r.IntN(12)) + "\n")
		case 1:
			b.WriteString(pick("postgres://", "https://", "jdbc:oracle:thin:", "dsn=\"", "u:"))
			b.WriteString(g.Str(secrettest.Alnum, 3+r.IntN(6)) + pick(":", "/") + g.Str(secrettest.Alnum+"/?#", 4+r.IntN(12)))
			b.WriteString(pick("@host/db", "@tcp(db:3306)/x", "@/db", "@unix(/s)/d", "@10.0.0.1") + "\n")
		case 2:
			b.WriteString(pick("auth=(", "login(", "HTTPBasicAuth(user, ", "new NetworkCredential(", "Baſic(", "NetworkCredential(") + "\"u\", \"" + g.Str(secrettest.Alnum, 4+r.IntN(10)) + "\")" + pick("", " // auth") + "\n")
		case 3:
			b.WriteString("Server=h;Database=d;User Id=u;" + pick("Password", "Pwd", "Jet OLEDB:Database Password", "PAſSWORD") + "=" + pick("{", "") + g.Str(secrettest.Alnum+";", 4+r.IntN(10)) + pick("}", "") + ";" + pick("", " // auth") + "\n")
		}
	}
	return b.String()
}

// TestMayHoldCredentialKeyCoversKeyIsCredential: every key that
// keyIsCredential accepts — each credential word, spelled in any case (the
// Kelvin sign for k, İ for i) and split anywhere by the separators a key
// may hold, on ASCII and non-ASCII lines — passes the cheap test.
func TestMayHoldCredentialKeyCoversKeyIsCredential(t *testing.T) {
	var words []string
	for w := range credExactWords {
		words = append(words, w)
	}
	words = append(words, credSuffixWords...)
	for _, p := range credWordPairs {
		words = append(words, p[0]+"_"+p[1], p[0]+p[1])
	}
	for k := range credKeys {
		words = append(words, k)
	}
	slices.Sort(words)
	r := rand.New(rand.NewPCG(1, 2))
	seps := []string{"", "", "_", ".", "-", "$", "@", "[", "]"}
	n := 0
	for _, w := range words {
		for range 50 {
			var b strings.Builder
			b.WriteString([]string{"", "db_", "my", "X.", "a-"}[r.IntN(5)])
			for _, c := range w {
				switch {
				case c == 'k' && r.IntN(3) == 0:
					c = '\u212a' // the Kelvin sign lowercases to k
				case c == 'i' && r.IntN(3) == 0:
					c = 'İ' // lowercases to i
				case r.IntN(3) == 0:
					c = unicode.ToUpper(c)
				}
				b.WriteRune(c)
				b.WriteString(seps[r.IntN(len(seps))])
			}
			key := strings.TrimRight(b.String(), "$@[]._-") + []string{"", "s", "_x"}[r.IntN(3)]
			if !keyIsCredential(key) {
				continue
			}
			n++
			line := []string{"  ", "é ", "ſ "}[r.IntN(3)] + key + " = \"v4lu3\""
			if !mayHoldCredentialKey(line, string(appendLowerASCII(nil, line)), isASCII(line)) {
				t.Fatalf("mayHoldCredentialKey rejects a line with the credential key %q", key)
			}
		}
	}
	if n < 500 {
		t.Fatalf("%d credential keys tried, want at least 500", n)
	}
}
