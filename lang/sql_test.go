package lang

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isSQL is sqlRe's answer, on hand-made strings (every word, any case,
// the non-ASCII letters (?i) folds to ASCII ones) and on every string
// literal of this module's files.
func TestIsSQLIsThePattern(t *testing.T) {
	cases := []string{
		"", "select", "SELECT a FROM t", "SeLeCt *\nfrom t", "selected from", "select a fro",
		"insert into t", "INSERT  INTO", "update t set a=1", "UPDATE t SET", "delete from t",
		"where id = ", "WHERE name like ", "where x in", "where", "nothing here", "deletefrom",
		"ſelect a from t", "inſert into t", "ſelect a from t", "where id = \u212a", "sélect a from t",
		"x := `select * from users where id = ` + id",
	}
	for _, s := range cases {
		if got, want := isSQL(s), sqlRe().MatchString(s); got != want {
			t.Errorf("isSQL(%q) = %v, sqlRe says %v", s, got, want)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	literals := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir // bench/.corpora: other projects' trees
		}
		if d.IsDir() || langOf(p) == "" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, x := range lex(string(data), lexOpts{js: langOf(p) == LangJavaScript || langOf(p) == LangTypeScript}) {
			if x.kind != tString && x.kind != tTemplate {
				continue
			}
			literals++
			if got, want := isSQL(x.text), sqlRe().MatchString(x.text); got != want {
				t.Errorf("%s:%d: isSQL(%q) = %v, sqlRe says %v", p, x.line, x.text, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if literals < 1000 {
		t.Fatalf("compared %d string literals; want this module's", literals)
	}
}

// FuzzIsSQL holds isSQL to sqlRe on string literals a repository controls.
func FuzzIsSQL(f *testing.F) {
	f.Add("SELECT id FROM users WHERE name = ")
	f.Add("ſelect x from y")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isSQL(s), sqlRe().MatchString(s); got != want {
			t.Fatalf("isSQL(%q) = %v, sqlRe says %v", s, got, want)
		}
	})
}
