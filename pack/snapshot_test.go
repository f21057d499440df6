package pack

import (
	"context"
	"errors"
	"testing"
)

func TestReadCommitsAside(t *testing.T) {
	patches := []CommitPatch{{Commit: "c1"}, {Commit: "c2"}}
	readErr := errors.New("blob missing")
	tests := []struct {
		name    string
		read    func(context.Context) ([]CommitPatch, error)
		want    []CommitPatch
		wantErr error
	}{
		{"read", func(context.Context) ([]CommitPatch, error) { return patches, nil }, patches, nil},
		{"failed", func(context.Context) ([]CommitPatch, error) { return nil, readErr }, nil, readErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Snapshot{}
			s.ReadCommitsAside(context.Background(), tt.read)
			for range 2 { // asked again, the same answer
				if err := s.AwaitCommits(); !errors.Is(err, tt.wantErr) {
					t.Fatalf("AwaitCommits = %v, want %v", err, tt.wantErr)
				}
				if len(s.Commits) != len(tt.want) || len(s.Commits) > 0 && s.Commits[1].Commit != "c2" {
					t.Fatalf("Commits = %+v, want %+v", s.Commits, tt.want)
				}
			}
		})
	}
	t.Run("none started", func(t *testing.T) {
		s := &Snapshot{Commits: patches}
		s.StopCommits()
		if err := s.AwaitCommits(); err != nil || len(s.Commits) != 2 {
			t.Fatalf("AwaitCommits = %v, Commits %+v: want the source's own", err, s.Commits)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		s := &Snapshot{}
		started := make(chan struct{})
		s.ReadCommitsAside(context.Background(), func(ctx context.Context) ([]CommitPatch, error) {
			close(started)
			<-ctx.Done() // a read that ends only when stopped
			return nil, ctx.Err()
		})
		<-started
		s.StopCommits() // returns once the read ended
		if err := s.AwaitCommits(); !errors.Is(err, context.Canceled) {
			t.Fatalf("AwaitCommits after StopCommits = %v, want context.Canceled", err)
		}
	})
}

func TestCommonAddedLines(t *testing.T) {
	l := func(n int, s string) Line { return Line{Number: n, Text: s} }
	a := []AddedLines{{Path: "a.go", Lines: []Line{l(1, "x"), l(2, "y"), l(3, "z")}}, {Path: "b.go", Lines: []Line{l(1, "q")}}}
	b := []AddedLines{{Path: "a.go", Lines: []Line{l(3, "z"), l(2, "other"), l(1, "x")}}, {Path: "c.go", Lines: []Line{l(1, "q")}}}
	got := CommonAddedLines(a, b)
	if len(got) != 1 || got[0].Path != "a.go" || len(got[0].Lines) != 2 || got[0].Lines[0] != l(1, "x") || got[0].Lines[1] != l(3, "z") {
		t.Fatalf("CommonAddedLines = %+v, want a.go lines 1 and 3 (line 2's text differs, b.go and c.go are in one only)", got)
	}
	if got := CommonAddedLines(a, nil); got != nil {
		t.Fatalf("against nothing: %+v", got)
	}
}
