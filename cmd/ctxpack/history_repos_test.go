package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/source"
)

// threeCommits commits three changes to r, in two directories.
func threeCommits(r *gittest.Repo) []string {
	var out []string
	for i, f := range []string{"a/one.go", "b/two.go", "a/three.go"} {
		r.Write(f, "package x\n\nconst N = "+string(rune('1'+i))+"\n")
		r.Write("README.md", "# repo\n\nstep "+string(rune('1'+i))+"\n")
		out = append(out, r.Commit("step "+f))
	}
	return out
}

// TestLogAndVerifyEveryRepository: log and verify walk the chain of records
// of every kind of repository git opens, and print the same bytes through
// go-git and the git CLI where both can read the repository.
func TestLogAndVerifyEveryRepository(t *testing.T) {
	tests := []struct {
		name     string
		make     func(t *testing.T) (dir string, commits []string)
		backends []string // CTXPACK_GIT_BACKEND values that must give the same output
	}{
		{"ordinary", func(t *testing.T) (string, []string) {
			r := gittest.New(t)
			return r.Dir, threeCommits(r)
		}, []string{"", source.BackendGoGit, source.BackendCLI}},
		{"sparse checkout", func(t *testing.T) (string, []string) {
			r := gittest.New(t)
			cs := threeCommits(r)
			r.Git("sparse-checkout", "set", "a")
			return r.Dir, cs
		}, []string{"", source.BackendCLI}},
		{"partial clone", func(t *testing.T) (string, []string) {
			origin := gittest.New(t)
			cs := threeCommits(origin)
			origin.Git("config", "uploadpack.allowFilter", "true")
			dir := filepath.Join(t.TempDir(), "clone")
			origin.Git("clone", "-q", "--filter=blob:none", "file://"+origin.Dir, dir)
			return dir, cs
		}, []string{"", source.BackendCLI}},
		{"sha256", func(t *testing.T) (string, []string) {
			r := gittest.NewWith(t, "--object-format=sha256")
			return r.Dir, threeCommits(r)
		}, []string{"", source.BackendCLI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, cs := tt.make(t)
			g := gittest.Init(t, dir) // reinitializing keeps the repository; its commands get the fixture's env
			wantGit := len(tt.backends) == 2
			repo, err := source.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if backend := repo.Backend(); (backend == source.BackendCLI) != wantGit {
				t.Fatalf("the fixture is not what it claims: opened with %q", backend)
			}
			repo.Close()
			if wantGit {
				// go-git cannot read it: the chain is walked through the git CLI.
				t.Setenv(source.BackendEnv, source.BackendGoGit)
				if code, _, _ := runCLI(t, "verify", "-C", dir); code == 0 {
					t.Fatal("go-git read a repository it cannot: the fixture is wrong")
				}
			}
			t.Setenv(source.BackendEnv, "")
			out := filepath.Join(t.TempDir(), "p.json")
			for _, c := range cs {
				if code, _, stderr := runCLI(t, "pack", "-C", dir, "--commit", c, "--notes", "-o", out); code != 0 {
					t.Fatalf("pack --notes %s: %s", c, stderr)
				}
			}
			// The same output from every backend that can read the repository.
			same := func(args ...string) (int, string) {
				t.Helper()
				var code0 int
				var out0 string
				for i, b := range tt.backends {
					t.Setenv(source.BackendEnv, b)
					code, stdout, stderr := runCLI(t, append(args, "-C", dir)...)
					if i == 0 {
						code0, out0 = code, stdout+stderr
					} else if code != code0 || stdout+stderr != out0 {
						t.Fatalf("%s with %s=%q: exit %d\n%s%s\nwith %q: exit %d\n%s", args[0], source.BackendEnv, b, code, stdout, stderr, tt.backends[0], code0, out0)
					}
				}
				return code0, out0
			}
			code, log := same("log")
			if code != 0 || strings.Count(log, " pass ") != 3 || !strings.Contains(log, cs[2][:12]) || strings.Contains(log, "no record") {
				t.Fatalf("log: exit %d\n%s", code, log)
			}
			code, ver := same("verify")
			if code != 0 || !strings.Contains(ver, "3 record(s), chain intact") {
				t.Fatalf("verify: exit %d\n%s", code, ver)
			}
			// The middle record removed: the chain is broken there, and
			// the notes ref's history tells a removed record from one
			// never written.
			g.Git("notes", "--ref=ctxpack", "remove", cs[1])
			code, ver = same("verify")
			if code != 1 || !strings.Contains(ver, "BREAK "+cs[1][:12]+" missing_note: no note: it was removed from refs/notes/ctxpack after the record of "+cs[2]) {
				t.Fatalf("verify after removing a record: exit %d\n%s", code, ver)
			}
		})
	}
}
