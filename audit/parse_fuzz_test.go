package audit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets of the parsers of repository text added for issue 13:
// escaped strings, diff hunk headers, command lines and assignments, span
// settling. None may panic; each keeps its invariants on any input.

func FuzzEscapedStrings(f *testing.F) {
	for _, s := range []string{`{"a": "b\"c\u00e9\ud83d\ude00"}`, `"\x4`, `"\u12"`, "\"a\\\n\"", `"\\"\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ss := escapedStrings(text)
		doc, starts := decodedDoc(ss)
		for i, s := range ss {
			if len(s.from) != len(s.value) || len(s.to) != len(s.value) {
				t.Fatalf("string %d: maps of %d/%d for %d bytes", i, len(s.from), len(s.to), len(s.value))
			}
			for k := range s.value {
				if s.from[k] < 0 || s.from[k] >= s.to[k] || s.to[k] > len(text) {
					t.Fatalf("string %d byte %d maps to [%d,%d) of %d", i, k, s.from[k], s.to[k], len(text))
				}
			}
		}
		for a := 0; a < len(doc); a += 7 {
			for _, sp := range rawSpans(ss, starts, a, min(len(doc), a+11)) {
				if sp[0] < 0 || sp[0] >= sp[1] || sp[1] > len(text) {
					t.Fatalf("raw span %v of %d", sp, len(text))
				}
			}
		}
	})
}

func FuzzDiffFileLines(f *testing.F) {
	f.Add("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n-b\n+c\n+d\n\\ No newline at end of file\n")
	f.Add("@@ -0,0 +1 @@\n+x\n@@ -99999999999999999999,1 +1 @@\n")
	f.Fuzz(func(t *testing.T, diff string) {
		got := DiffFileLines(diff)
		if want := len(strings.Split(strings.TrimSuffix(diff, "\n"), "\n")); len(got) != want {
			t.Fatalf("%d line numbers for %d lines", len(got), want)
		}
		for _, n := range got {
			if n < 0 {
				t.Fatalf("negative line %d", n)
			}
		}
	})
}

func FuzzFindAssignments(f *testing.F) {
	for _, s := range []string{
		"mysql -uroot -pS3cretValue9 db\n", "echo 'x' | docker login --password-stdin\n", "htpasswd -nb admin pw\n",
		"dsn = \"u:p4ssw0rd9@tcp(db)/x\"\n", "auth=(\"u\", \"p4ssw0rd9\")\n", "contraseña: abcdEFGH1234\n",
		"Pwd={a;b};\n", "\"--password\", \"", "`", "'\"", "-p\"\n", "sqlplus a/b@", "x=[REDACTED:y\n",
	} {
		f.Add("run.sh", s)
		f.Add("app.py", s)
	}
	// Lines of 512 bytes or more, where the patterns first look for a
	// credential key before what they read after it (credentialKeys).
	pad := strings.Repeat("x=1;", 130)
	for _, s := range []string{`password: str = "s3cr3tv4lue"`, `login(u, 's3cr3tv4lue')`, `"k ?a=1&api_key=s3cr3tv4lue"`,
		`"db_token = s3cr3tv4lue"`, `String password = "s3cr3tv4lue"`, `x[secret] ||= ` + "`s3cr3tv4lue`"} {
		f.Add("app.js", pad+s+";"+pad+"\n")
		f.Add("a.env", s+" "+pad+"\n")
	}
	f.Fuzz(func(t *testing.T, path, content string) {
		checkSameAssignments(t, path, content)
		for _, a := range FindAssignments(path, []byte(content)) {
			if a.Start < 0 || a.Start >= a.End || a.End > len(content) || a.StartLine < 1 {
				t.Fatalf("bad finding %+v in %d bytes", a, len(content))
			}
			if strings.ContainsRune(content[a.Start:a.End], '\n') {
				t.Fatalf("a value across lines: %+v", a)
			}
		}
	})
}

func FuzzSettleSpan(f *testing.F) {
	f.Add(`"k": "ab\"cd\\" x`, 5, 12)
	f.Add("a+b/c== d", 0, 3)
	f.Fuzz(func(t *testing.T, text string, s, e int) {
		if len(text) == 0 {
			return
		}
		s, e = abs(s)%len(text), abs(e)%(len(text)+1)
		if s >= e {
			return
		}
		a, z := settleSpan(text, s, e)
		if a < 0 || a >= z || z > len(text) {
			t.Fatalf("settleSpan(%q, %d, %d) = %d, %d", text, s, e, a, z)
		}
		if utf8.ValidString(text) && !strings.Contains(text[s:e], "\n") {
			// The settled span still covers what was found, less quotes
			// and white space at its ends.
			core := strings.Trim(text[s:e], " \t\r\n\f\v\"'`")
			if core != "" && !strings.Contains(text[a:z], strings.TrimRight(strings.TrimLeft(core, "\\"), "\\")) {
				t.Fatalf("settleSpan(%q, %q) = %q lost the match", text, text[s:e], text[a:z])
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the most negative int
			return 0
		}
		return -n
	}
	return n
}
