package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/pipeline"
	"github.com/ctxpack/ctxpack/source"
)

var testScanner = sync.OnceValues(func() (*audit.Scanner, error) {
	return audit.NewScanner(audit.ScannerOptions{})
})

// clock is an injected clock the tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a repository with one packed commit.
type fixture struct {
	repo   *gittest.Repo
	head   string
	pack   []byte
	record []byte
}

// mainGo has 11 lines.
const mainGo = `package main

import "fmt"

func main() {
	fmt.Println(greeting())
}

func greeting() string {
	return "hello"
}
`

func newFixture(t *testing.T) *fixture {
	t.Helper()
	r := gittest.New(t)
	r.Write("README.md", "# demo\n\nA demo.\n")
	r.Write("main.go", "package main\n")
	r.Commit("first")
	r.Write("main.go", mainGo)
	r.Write("util/strings.go", "package util\n\n// Upper is upper.\nfunc Upper(s string) string { return s }\n")
	head := r.Commit("second")
	run, err := pipeline.Execute(context.Background(), pipeline.PackOptions{Dir: r.Dir, Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusPass {
		t.Fatalf("fixture verdict %s: %+v", run.Verdict.Status, run.Verdict.Failed)
	}
	return &fixture{repo: r, head: head, pack: run.Result.JSON, record: run.RecordJSON}
}

func (f *fixture) files(t *testing.T) Files {
	t.Helper()
	repo, err := source.Open(f.repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return NewRepoFiles(repo, repo.Root)
}

func openStore(t *testing.T, dir string, c *clock, files Files) *Store {
	t.Helper()
	sc, err := testScanner()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	s, err := Open(Options{Dir: dir, Now: c.Now, TTL: time.Hour, ExpiringSoon: 10 * time.Minute, Scanner: sc, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s *Store, f *fixture, name string) *View {
	t.Helper()
	res, err := s.Put(context.Background(), PutInput{Pack: f.pack, Record: f.record, Name: name})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	return res.View
}

// storeErr asserts err is a store error with code and returns it.
func storeErr(t *testing.T, err error, code string) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("want a %s error, got %v", code, err)
	}
	if se.Code != code {
		t.Fatalf("want code %s, got %s: %s (%v)", code, se.Code, se.Message, se.Details)
	}
	return se
}

func doc(t *testing.T, v any) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func rev(n int) *int { return &n }

// review is a document that passes the finalize checklist for the fixture.
func review(refs ...string) map[string]any {
	if refs == nil {
		refs = []string{"main.go:9-11"}
	}
	return map[string]any{
		"scope":    map[string]any{"description": "the greeting change"},
		"findings": []any{map[string]any{"description": "greeting is hard-coded", "refs": refs}},
		"qa":       map[string]any{"verdict": "pass"},
	}
}

func mustContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("missing %q in:\n%s", sub, s)
		}
	}
}

// packWorktree packs the work tree of dir: pack and record bytes.
func packWorktree(t *testing.T, dir string) [2][]byte {
	t.Helper()
	run, err := pipeline.Execute(context.Background(), pipeline.PackOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict.Status != audit.StatusPass {
		t.Fatalf("work-tree verdict %s: %+v", run.Verdict.Status, run.Verdict.Failed)
	}
	return [2][]byte{run.Result.JSON, run.RecordJSON}
}
