package transparency

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxpack/ctxpack/pack/schema"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/ctxpack/ctxpack/source"
)

// LogEntry is one commit of `ctxpack log`.
type LogEntry struct {
	Commit  string `json:"commit"`
	HasNote bool   `json:"has_note"`
	// Digest is the digest of the note bytes (what a child's previous names).
	Digest   string `json:"digest,omitempty"`
	PackID   string `json:"pack_id,omitempty"`
	Type     string `json:"type,omitempty"`
	Verdict  string `json:"verdict,omitempty"`
	Included int    `json:"included"`
	Excluded int    `json:"excluded"`
	Secrets  int    `json:"secrets"`
	// Error says why a note that exists could not be read as a record.
	Error string `json:"error,omitempty"`
}

// VerdictNone is the log's verdict for a record of a pack that was not audited.
const VerdictNone = "none"

// notes is a snapshot of the notes ref for walking: its tip, the index of
// the tip's tree, and a cache of blobs. Trees are not cached: a walk of the
// notes history meets a different tree at every state.
type notes struct {
	ctx   context.Context
	objs  Objects
	tip   *source.Commit // nil when the ref does not exist
	index map[string]source.ObjectID
	blobs map[source.ObjectID][]byte
}

func loadNotes(ctx context.Context, objs Objects) (*notes, error) {
	n := &notes{ctx: ctx, objs: objs, index: map[string]source.ObjectID{}, blobs: map[source.ObjectID][]byte{}}
	id, ok, err := objs.RefID(ctx, string(NotesRef))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", NotesRef, err)
	}
	if !ok {
		return n, nil
	}
	if n.tip, err = objs.ReadCommit(ctx, id); err != nil {
		return nil, fmt.Errorf("read %s: %w", NotesRef, err)
	}
	if err := n.indexTree(n.tip.Tree, ""); err != nil {
		return nil, fmt.Errorf("read %s: %w", NotesRef, err)
	}
	return n, nil
}

func (n *notes) tree(id source.ObjectID) ([]source.TreeEntry, error) {
	t, err := n.objs.ReadTree(n.ctx, id)
	if err != nil {
		return nil, fmt.Errorf("notes tree: %w", err)
	}
	return t, nil
}

// indexTree maps every annotated object's hex under the notes tree id
// (at prefix, for fan-out directories) to its note blob.
func (n *notes) indexTree(id source.ObjectID, prefix string) error {
	entries, err := n.tree(id)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := prefix + e.Name
		switch {
		case e.Mode.IsFile() && isLowerHex(name):
			// A note at a shallower level wins, as in git.
			if _, ok := n.index[name]; !ok || prefix == "" {
				n.index[name] = e.ID
			}
		case e.Mode == filemode.Dir && len(e.Name) == 2 && isLowerHex(e.Name):
			if err := n.indexTree(e.ID, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// find looks up the note blob for the object named hex in the notes tree
// id, at the top level or under any depth of fan-out directories.
func (n *notes) find(id source.ObjectID, hex string) (source.ObjectID, bool, error) {
	entries, err := n.tree(id)
	if err != nil {
		return "", false, err
	}
	for _, e := range entries {
		if e.Mode.IsFile() && e.Name == hex {
			return e.ID, true, nil
		}
	}
	for _, e := range entries {
		if e.Mode == filemode.Dir && len(e.Name) == 2 && len(hex) > 2 && strings.HasPrefix(hex, e.Name) {
			if h, ok, err := n.find(e.ID, hex[2:]); err != nil || ok {
				return h, ok, err
			}
		}
	}
	return "", false, nil
}

func (n *notes) has(c source.ObjectID) bool {
	_, ok := n.index[string(c)]
	return ok
}

func (n *notes) blob(h source.ObjectID) ([]byte, error) {
	if b, ok := n.blobs[h]; ok {
		return b, nil
	}
	b, err := n.objs.ReadBlob(n.ctx, h)
	if err != nil {
		return nil, fmt.Errorf("note blob: %w", err)
	}
	n.blobs[h] = b
	return b, nil
}

func (n *notes) get(c source.ObjectID) ([]byte, bool, error) {
	h, ok := n.index[string(c)]
	if !ok {
		return nil, false, nil
	}
	b, err := n.blob(h)
	return b, err == nil, err
}

// history calls visit on every state of the notes ref (the tip and all its
// ancestors, each once) until visit returns errStop.
func (n *notes) history(visit func(*source.Commit) error) error {
	if n.tip == nil {
		return nil
	}
	seen := map[source.ObjectID]bool{n.tip.ID: true}
	stack := []*source.Commit{n.tip}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := visit(c); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
		for i := len(c.Parents) - 1; i >= 0; i-- {
			p := c.Parents[i]
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := n.objs.ReadCommit(n.ctx, p)
			if err != nil {
				return err
			}
			stack = append(stack, pc)
		}
	}
	return nil
}

// pastVersion reports whether any earlier state of the notes ref held a note
// for c whose digest is digest. It walks the whole notes history, so it is
// only asked when a chain link does not match.
func (n *notes) pastVersion(c source.ObjectID, digest string) (bool, error) {
	checked := map[source.ObjectID]bool{}
	found := false
	err := n.history(func(nc *source.Commit) error {
		h, ok, err := n.find(nc.Tree, string(c))
		if err != nil || !ok || checked[h] {
			return err
		}
		checked[h] = true
		data, err := n.blob(h)
		if err != nil {
			return err
		}
		if DigestOf(data) == digest {
			found = true
			return errStop
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("walk %s history: %w", NotesRef, err)
	}
	return found, nil
}

var errStop = fmt.Errorf("stop")

// hadNote reports whether any state of the notes ref held a note for c.
func (n *notes) hadNote(c source.ObjectID) (bool, error) {
	found := false
	err := n.history(func(nc *source.Commit) error {
		_, ok, err := n.find(nc.Tree, string(c))
		if err != nil {
			return err
		}
		if ok {
			found = true
			return errStop
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("walk %s history: %w", NotesRef, err)
	}
	return found, nil
}

// recordedBefore reports whether child's current note entered the notes
// ref at a state that had no note for parent: it was written before its
// parent's record (concurrent runs), not bound to it and then unbound.
func (n *notes) recordedBefore(child, parent source.ObjectID) (bool, error) {
	h, ok := n.index[string(child)]
	if !ok || n.tip == nil {
		return false, nil
	}
	// Walk back along first parents while the note is the same blob: the
	// oldest such state is where it was written.
	var first *source.Commit
	for nc := n.tip; nc != nil; {
		got, ok, err := n.find(nc.Tree, string(child))
		if err != nil {
			return false, fmt.Errorf("walk %s history: %w", NotesRef, err)
		}
		if !ok || got != h {
			break
		}
		first = nc
		if len(nc.Parents) == 0 {
			break
		}
		if nc, err = n.objs.ReadCommit(n.ctx, nc.Parents[0]); err != nil {
			return false, fmt.Errorf("walk %s history: %w", NotesRef, err)
		}
	}
	if first == nil {
		return false, nil
	}
	_, had, err := n.find(first.Tree, string(parent))
	if err != nil {
		return false, fmt.Errorf("walk %s history: %w", NotesRef, err)
	}
	return !had, nil
}

// firstParent returns c's first parent, nil for a root commit.
func firstParent(ctx context.Context, objs Objects, c *source.Commit) (*source.Commit, error) {
	if len(c.Parents) == 0 {
		return nil, nil
	}
	p, err := objs.ReadCommit(ctx, c.Parents[0])
	if err != nil {
		return nil, fmt.Errorf("commit %s: parent: %w", c.ID, err)
	}
	return p, nil
}

// Log lists up to n commits (all when n <= 0) along first parents from
// `from`, newest first, with what their notes record. Commits without a note
// are listed with HasNote false.
func Log(repo *git.Repository, from plumbing.Hash, n int) ([]LogEntry, error) {
	return LogWith(context.Background(), GoGit(repo), source.ObjectID(from.String()), n)
}

// LogWith is Log reading through objs: a *source.Repo reads every
// repository git opens.
func LogWith(ctx context.Context, objs Objects, from source.ObjectID, n int) ([]LogEntry, error) {
	ns, err := loadNotes(ctx, objs)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	c, err := objs.ReadCommit(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	out := []LogEntry{}
	for c != nil && (n <= 0 || len(out) < n) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e := LogEntry{Commit: string(c.ID)}
		data, ok, err := ns.get(c.ID)
		if err != nil {
			return nil, fmt.Errorf("log: %w", err)
		}
		if ok {
			e.HasNote, e.Digest = true, DigestOf(data)
			if rec, err := ParseRecord(data); err != nil {
				e.Error = err.Error()
			} else {
				e.PackID, e.Type = rec.PackID, rec.ContextPackInfo.Type
				e.Verdict = VerdictNone
				if rec.Verdict != nil {
					e.Verdict = rec.Verdict.Status
				}
				e.Included = rec.ContextPackInfo.FilesIncluded
				e.Excluded = rec.ContextPackInfo.FilesExcluded
				e.Secrets = len(rec.Secrets)
			}
		}
		out = append(out, e)
		if c, err = firstParent(ctx, objs, c); err != nil {
			return nil, fmt.Errorf("log: %w", err)
		}
	}
	return out, nil
}

// Kinds of chain breaks.
const (
	// BreakMissingNote: a commit between noted commits has no note (its
	// child's record names a previous record, or older commits have notes).
	BreakMissingNote = "missing_note"
	// BreakDigestMismatch: a record's previous is not the digest of its
	// first parent's note, and no earlier version of that note had it.
	BreakDigestMismatch = "digest_mismatch"
	// BreakEditedNote: the note was changed after it was written (see Verify).
	BreakEditedNote = "edited_note"
	// BreakUnparsableNote: the note is not a valid record.
	BreakUnparsableNote = "unparsable_note"
)

// Break is one break of the hash chain, at the commit it names.
type Break struct {
	Commit  string `json:"commit"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Kinds of missing records: not breaks of the chain (nothing recorded was
// changed or removed), but commits the chain does not cover.
const (
	// MissingRecord: a commit between recorded commits was never recorded.
	MissingRecord = "missing_record"
	// MissingRecordedBeforeParent: a record was written before its first
	// parent's (two runs at once), so it names no previous record.
	MissingRecordedBeforeParent = "recorded_before_parent"
)

// ChainReport is the result of walking a chain.
type ChainReport struct {
	// Records is the number of notes met on the walk.
	Records int `json:"records"`
	// Start is the commit whose record starts the chain (empty previous and a
	// first parent without a note), empty when the walk ended elsewhere.
	Start string `json:"start,omitempty"`
	// Breaks are records changed or removed after a later record bound
	// them, and records that are not what ctxpack writes.
	Breaks []Break `json:"breaks"`
	// Missing are commits the chain does not cover, with nothing recorded
	// having changed: never recorded, or recorded before their parent.
	Missing []Break `json:"missing"`
}

// Verify walks first parents from `from` back to the start of the record
// chain and reports every break, newest first (see VerifyChain).
func Verify(repo *git.Repository, from plumbing.Hash) ([]Break, error) {
	rep, err := VerifyChain(repo, from)
	if err != nil {
		return nil, err
	}
	return rep.Breaks, nil
}

// VerifyChain walks first parents from `from` back to the commit that starts
// the chain: a record with an empty previous whose first parent has no note
// (or a root commit). Commits newer than the newest note are not yet recorded
// and are skipped. Each noted commit is checked:
//
//   - the note must be a record (strict JSON, known fields, the record
//     schema), else unparsable_note;
//   - the note must be byte for byte the canonical serialization of the
//     record it holds, and the record's source.head must be the commit the
//     note is attached to, else edited_note: ctxpack never writes anything
//     else, so the note was written or edited by hand (git notes edit, a
//     note copied to another commit);
//   - the child's previous must equal the digest of the note bytes. When it
//     does not, the history of the notes ref is searched: if an earlier
//     version of this note had exactly the digest the child names, the note
//     was replaced after the child bound it (edited_note, at this commit);
//     otherwise the child's record is wrong (digest_mismatch, at the child).
//     A child with an empty previous over a noted parent is a digest_mismatch.
//
// A commit without a note is missing_note when its child's record names a
// previous record, or when an older commit on the walk has a note (a gap).
// A note rewritten at the tip of the chain, with no child bound to it, cannot
// be told from a re-run: the chain proves what later records saw, and the
// tip is as trustworthy as its attestation.
func VerifyChain(repo *git.Repository, from plumbing.Hash) (*ChainReport, error) {
	return VerifyChainWith(context.Background(), GoGit(repo), source.ObjectID(from.String()))
}

// VerifyChainWith is VerifyChain reading through objs: a *source.Repo
// reads every repository git opens.
func VerifyChainWith(ctx context.Context, objs Objects, from source.ObjectID) (*ChainReport, error) {
	ns, err := loadNotes(ctx, objs)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	c, err := objs.ReadCommit(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	rep := &ChainReport{Breaks: []Break{}, Missing: []Break{}}
	add := func(commit source.ObjectID, kind, format string, args ...any) {
		rep.Breaks = append(rep.Breaks, Break{Commit: string(commit), Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	missing := func(commit source.ObjectID, kind, format string, args ...any) {
		rep.Missing = append(rep.Missing, Break{Commit: string(commit), Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	// claim is what the newer noted commit just above c says about c.
	type claim struct {
		child    source.ObjectID
		previous string
		known    bool // false when the child's note is not a record
	}
	var cl *claim
	var gap []source.ObjectID // unnoted commits after a missing note
	seen := false
	for c != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, ok, err := ns.get(c.ID)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		parent, err := firstParent(ctx, objs, c)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		if !ok {
			switch {
			case !seen:
				// Newer than any record: not recorded yet.
			case cl != nil && cl.known && cl.previous != "":
				msg := "no note, but the record of %s names a previous record (%s)"
				if removed, err := ns.pastVersion(c.ID, cl.previous); err != nil {
					return nil, fmt.Errorf("verify: %w", err)
				} else if removed {
					msg = "no note: it was removed from " + string(NotesRef) + " after the record of %s bound it (%s)"
				}
				add(c.ID, BreakMissingNote, msg, cl.child, cl.previous)
			default:
				gap = append(gap, c.ID)
			}
			cl = nil
			c = parent
			continue
		}
		seen = true
		rep.Records++
		for _, g := range gap {
			had, err := ns.hadNote(g)
			if err != nil {
				return nil, fmt.Errorf("verify: %w", err)
			}
			if had {
				add(g, BreakMissingNote, "no note: it was removed from %s (it had one), between commits that have one", NotesRef)
			} else {
				missing(g, MissingRecord, "never recorded, between commits that have a record")
			}
		}
		gap = nil
		digest := DigestOf(data)
		if cl != nil && cl.known {
			switch {
			case cl.previous == "":
				before, err := ns.recordedBefore(cl.child, c.ID)
				if err != nil {
					return nil, fmt.Errorf("verify: %w", err)
				}
				if before {
					missing(cl.child, MissingRecordedBeforeParent, "the record was written before its first parent %s had one, so it names no previous record", c.ID)
				} else {
					add(cl.child, BreakDigestMismatch, "the record has no previous, but its first parent %s has a record (%s)", c.ID, digest)
				}
			case cl.previous != digest:
				edited, err := ns.pastVersion(c.ID, cl.previous)
				if err != nil {
					return nil, fmt.Errorf("verify: %w", err)
				}
				if edited {
					add(c.ID, BreakEditedNote, "the note was replaced after the record of %s bound it: it was %s, it is %s", cl.child, cl.previous, digest)
				} else {
					add(cl.child, BreakDigestMismatch, "previous %s does not match the record of its first parent %s (%s)", cl.previous, c.ID, digest)
				}
			}
		}
		rec, perr := ParseRecord(data)
		if perr == nil {
			if err := schema.ValidateRecord(data); err != nil {
				perr = err
			}
		}
		if perr != nil {
			add(c.ID, BreakUnparsableNote, "the note is not a valid record: %v", perr)
			cl = &claim{child: c.ID}
			if parent == nil || !ns.has(parent.ID) {
				break // the chain cannot be followed further back
			}
			c = parent
			continue
		}
		if !IsCanonical(data) {
			add(c.ID, BreakEditedNote, "the note is not the canonical serialization ctxpack writes: it was edited by hand")
		} else if rec.Source.Head != "" && rec.Source.Head != string(c.ID) {
			add(c.ID, BreakEditedNote, "the note is the record of commit %s, not of this commit", rec.Source.Head)
		}
		cl = &claim{child: c.ID, previous: rec.Previous, known: true}
		if rec.Previous == "" && (parent == nil || !ns.has(parent.ID)) {
			rep.Start = string(c.ID)
			break
		}
		if rec.Previous != "" && parent == nil {
			add(c.ID, BreakDigestMismatch, "previous %s is set, but the commit has no parent", rec.Previous)
		}
		c = parent
	}
	return rep, nil
}
