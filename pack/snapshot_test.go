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
