package pipeline

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/audit"
	"github.com/ctxpack/ctxpack/internal/gittest"
)

// TestOtherEncodingsKeepThePackCanonical: a change to a Latin-1 file (whose
// diff holds bytes that are not UTF-8) and a commit message in Latin-1
// (git's i18n.commitEncoding) give packs in canonical form, in every pack
// type and source, which the audit against the repository accepts. Their
// strings were serialized with \ufffd for each such byte, which decodes to
// a U+FFFD that serializes as itself: digest_mismatch on the pack's own
// audit.
func TestOtherEncodingsKeepThePackCanonical(t *testing.T) {
	g := gittest.New(t)
	g.WriteBytes("menu.txt", []byte("caf\xe9 cr\xe8me br\xfbl\xe9e\nna\xefve\n"))
	base := g.Commit("menu")
	g.WriteBytes("menu.txt", []byte("caf\xe9 cr\xe8me br\xfbl\xe9e\nna\xefve\nd\xe9j\xe0 vu\nGr\xf6\xdfe\n"))
	g.Git("-c", "i18n.commitEncoding=latin1", "commit", "-q", "-a", "-m", "men\xfa caf\xe9 Gr\xf6\xdfe")

	for _, typ := range []string{"auto", "full", "summary"} {
		for _, opts := range []PackOptions{{Commit: "HEAD"}, {Base: base, Head: "HEAD"}} {
			opts.Dir, opts.Type = g.Dir, typ
			run, err := Execute(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if run.Verdict.Status != audit.StatusPass {
				t.Fatalf("%s %+v: verdict %s %+v", typ, opts, run.Verdict.Status, run.Verdict.Failed)
			}
			if !utf8.Valid(run.Result.JSON) {
				t.Fatalf("%s %+v: the pack is not UTF-8", typ, opts)
			}
			v, err := Audit(context.Background(), AuditOptions{PackFile: writePack(t, run.Result.JSON), RepoDir: g.Dir})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != audit.StatusPass {
				t.Fatalf("%s %+v: audit --repo %s %+v", typ, opts, v.Status, v.Failed)
			}
		}
	}
}
