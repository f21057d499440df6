package leakcorpus

import (
	"reflect"
	"strings"
	"testing"
)

// TestCorpusShape: the corpus holds what issue 13 asks of it — at least 150
// secrets, in at least 15 file kinds, in every class and every place — and
// the same seed gives the same corpus.
func TestCorpusShape(t *testing.T) {
	c := Build(13)
	if n := len(c.Plants); n < 150 {
		t.Errorf("%d secrets planted, want at least 150", n)
	}
	if k := c.Kinds(); len(k) < 15 {
		t.Errorf("%d file kinds %v, want at least 15", len(k), k)
	}
	classes, places := map[string]int{}, map[string]int{}
	for _, p := range c.Plants {
		classes[p.Class]++
		places[p.Where]++
		if len(p.Probes) == 0 {
			t.Errorf("%s in %s: no probe", p.Provider, p.Path)
		}
		found := false
		texts := map[string]string{"(commit message)": c.Message, "(pull request)": c.PRTitle + "\n" + c.PRBody}
		for _, files := range []map[string]string{c.Base, c.Head, c.Interim, c.InterimExtra, texts} {
			for path, content := range files {
				if p.Leaked([]byte(path + "\n" + content)) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s %s in %s: planted nowhere", p.Class, p.Provider, p.Path)
		}
	}
	for _, cl := range []string{ClassProvider, ClassPath, ClassEscaped, ClassForm, ClassPlaceholder, ClassName} {
		if classes[cl] == 0 {
			t.Errorf("no secret of class %s", cl)
		}
	}
	for _, w := range []string{InContent, InDiff, InCommit, InName, InMessage} {
		if places[w] == 0 {
			t.Errorf("no secret in %s", w)
		}
	}
	if !reflect.DeepEqual(Build(13).Plants, c.Plants) {
		t.Error("the same seed gave another corpus")
	}
	for _, content := range c.Base {
		if strings.Contains(content, "EXAMPLE") {
			t.Error("a value ends in EXAMPLE, which gitleaks allowlists")
		}
	}
}
