package action

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxpack/ctxpack/internal/safetext"
	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/source"
	"github.com/google/go-github/v60/github"
)

// When neither the checkout nor its remote has the commits of a change,
// the per-commit secret scan reads them from GitHub's API: the commits of
// the pull request (or of the comparison), and each commit's patches. What
// the API leaves out — more commits than it lists, a file without a patch
// (too large, or binary) — is named, and the scan counts as unavailable.

// maxAPICommits is how many commits GitHub lists for a pull request or a
// comparison; a change with more cannot be scanned commit by commit.
const maxAPICommits = 250

// apiHistory is the per-commit patches the API gave, and what it could not
// give.
type apiHistory struct {
	Commits []pack.CommitPatch
	// Missing says what the scan could not read; empty when complete.
	Missing []string
}

// prCommitIDs lists a pull request's commits, oldest first.
func prCommitIDs(ctx context.Context, gh *github.Client, owner, repo string, number int) ([]string, bool, error) {
	var ids []string
	opts := &github.ListOptions{PerPage: 100}
	for {
		cs, resp, err := gh.PullRequests.ListCommits(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, false, apiErr("list the pull request's commits", err)
		}
		for _, c := range cs {
			ids = append(ids, c.GetSHA())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return ids, len(ids) < maxAPICommits, nil
}

// commitsPatches reads each commit's patches. A merge's are the lines no
// parent has (an evil merge's, a conflict's resolution), as the local scan
// reads them (source's mergePatch): the lines its comparison with every
// parent adds (mergePatch).
func commitsPatches(ctx context.Context, gh *github.Client, owner, repo string, ids []string) (*apiHistory, error) {
	h := &apiHistory{}
	for _, id := range ids {
		if checkSHA("commit", id) != nil {
			return nil, fmt.Errorf("the API named %q as a commit", clip(id, 80))
		}
		var files []*github.CommitFile
		var parents []string
		opts := &github.ListOptions{PerPage: 100}
		for {
			c, resp, err := gh.Repositories.GetCommit(ctx, owner, repo, id, opts)
			if err != nil {
				return nil, apiErr("read commit "+short(id), err)
			}
			parents = parents[:0]
			for _, p := range c.Parents {
				parents = append(parents, p.GetSHA())
			}
			files = append(files, c.Files...)
			if resp.NextPage == 0 || len(c.Files) == 0 {
				break
			}
			opts.Page = resp.NextPage
		}
		if len(parents) > 1 {
			cp, missing, err := mergePatch(ctx, gh, owner, repo, id, parents)
			if err != nil {
				return nil, err
			}
			h.Commits, h.Missing = append(h.Commits, *cp), append(h.Missing, missing...)
			continue
		}
		if len(files) >= maxListedFiles {
			h.Missing = append(h.Missing, fmt.Sprintf("commit %s changes more files than the API lists (%d)", short(id), maxListedFiles))
		}
		cp := pack.CommitPatch{Commit: id}
		for _, f := range files {
			if f.GetStatus() == "removed" || f.GetAdditions() == 0 {
				continue
			}
			p := f.GetFilename()
			if !source.TreePath(p) {
				return nil, fmt.Errorf("the API names %q as a file of commit %s", clip(p, 200), short(id))
			}
			if f.GetPatch() == "" {
				h.Missing = append(h.Missing, fmt.Sprintf("%s in commit %s (the API gives no patch: too large or binary)", p, short(id)))
				continue
			}
			lines, err := addedLines(f.GetPatch())
			if err != nil {
				return nil, fmt.Errorf("the API's patch of %s in commit %s: %w", p, short(id), err)
			}
			if len(lines) > 0 {
				cp.Files = append(cp.Files, pack.AddedLines{Path: p, Lines: lines})
			}
		}
		h.Commits = append(h.Commits, cp)
	}
	return h, nil
}

// mergePatch is the lines merge id adds against every one of its parents,
// by path and line of the merge's version: each parent's comparison with
// the merge (parent...id, the parent being an ancestor) lists what the merge
// adds to it, and a line only some parents lack came from the others. What
// the API cannot give (a comparison over its file limit, a file without a
// patch that every parent's comparison changes) is listed as missing.
func mergePatch(ctx context.Context, gh *github.Client, owner, repo, id string, parents []string) (*pack.CommitPatch, []string, error) {
	var missing []string
	var common []pack.AddedLines // the lines added against every parent read so far
	changed := map[string]int{}  // path → the parents' comparisons that add to it
	unknown := map[string]bool{} // a comparison adds to it, without a patch
	for k, parent := range parents {
		if checkSHA("commit", parent) != nil {
			return nil, nil, fmt.Errorf("the API named %q as a parent of commit %s", clip(parent, 80), short(id))
		}
		cmp, files, err := compare(ctx, gh, owner, repo, parent, id)
		if err != nil {
			return nil, nil, err
		}
		if cmp.FilesCut {
			// A file the list leaves out would read as one this parent
			// has, or be missed as the merge's own.
			missing = append(missing, fmt.Sprintf("merge %s against %s (the API lists at most %d files of a comparison)", short(id), short(parent), maxCompareFiles))
		}
		var added []pack.AddedLines
		for _, f := range files {
			p := f.GetFilename()
			if f.GetStatus() == "removed" || f.GetAdditions() == 0 {
				continue
			}
			if !source.TreePath(p) {
				return nil, nil, fmt.Errorf("the API names %q as a file of merge %s", clip(p, 200), short(id))
			}
			changed[p]++
			if f.GetPatch() == "" {
				unknown[p] = true
				continue
			}
			lines, err := addedLines(f.GetPatch())
			if err != nil {
				return nil, nil, fmt.Errorf("the API's patch of %s in merge %s against %s: %w", p, short(id), short(parent), err)
			}
			added = append(added, pack.AddedLines{Path: p, Lines: lines})
		}
		slices.SortFunc(added, func(a, b pack.AddedLines) int { return strings.Compare(a.Path, b.Path) })
		if k == 0 {
			common = added
		} else {
			common = pack.CommonAddedLines(common, added)
		}
	}
	// A file only some comparisons add to is as one parent has it:
	// nothing of it is the merge's own. One every comparison adds to, one
	// of them without a patch, could hold lines no parent has.
	for _, p := range slices.Sorted(maps.Keys(unknown)) {
		if changed[p] == len(parents) {
			missing = append(missing, fmt.Sprintf("%s in merge %s (the API gives no patch: too large or binary)", p, short(id)))
		}
	}
	return &pack.CommitPatch{Commit: id, Files: common}, missing, nil
}

// addedLines reads the lines a unified-diff patch adds (GitHub's `patch`:
// hunks without file headers), numbered in the new file.
func addedLines(patch string) ([]pack.Line, error) {
	var out []pack.Line
	next := 0
	inHunk := false
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			n, err := hunkNewStart(l)
			if err != nil {
				return nil, err
			}
			if n < next {
				return nil, fmt.Errorf("hunk %s starts before the line the previous one ended on (%d)", safetext.Quote(clip(l, 60)), next)
			}
			next, inHunk = n, true
		case !inHunk:
			if strings.TrimSpace(l) != "" {
				return nil, fmt.Errorf("text before the first hunk header: %s", safetext.Quote(clip(l, 60)))
			}
		case strings.HasPrefix(l, "+"):
			out = append(out, pack.Line{Number: next, Text: l[1:]})
			next++
		case strings.HasPrefix(l, " "):
			next++
		case strings.HasPrefix(l, "-"), strings.HasPrefix(l, `\`), l == "":
		default:
			return nil, fmt.Errorf("a line that is not part of a hunk: %s", safetext.Quote(clip(l, 60)))
		}
	}
	return out, nil
}

// hunkNewStart reads the new side's first line from "@@ -a,b +c,d @@".
func hunkNewStart(header string) (int, error) {
	rest, ok := strings.CutPrefix(header, "@@ -")
	if ok {
		_, rest, ok = strings.Cut(rest, " +")
	}
	if ok {
		rest, _, ok = strings.Cut(rest, " @@")
	}
	if !ok {
		return 0, fmt.Errorf("bad hunk header %s", safetext.Quote(clip(header, 60)))
	}
	start, _, _ := strings.Cut(rest, ",")
	n, err := strconv.Atoi(start)
	if err != nil || n < 0 || n > 1<<30 {
		return 0, fmt.Errorf("bad hunk header %s", safetext.Quote(clip(header, 60)))
	}
	if n == 0 {
		n = 1 // an empty new side ("+0,0"): nothing is added
	}
	return n, nil
}

// prRefs asks the API for a pull request's base and head.
func prRefs(ctx context.Context, gh *github.Client, owner, repo string, number int) (*pullRequest, error) {
	pr, _, err := gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return nil, apiErr("read pull request #"+strconv.Itoa(number), err)
	}
	out := &pullRequest{Number: number,
		Base: prRef{SHA: pr.GetBase().GetSHA(), Ref: pr.GetBase().GetRef(), Repo: &eventRepo{FullName: pr.GetBase().GetRepo().GetFullName()}},
		Head: prRef{SHA: pr.GetHead().GetSHA(), Ref: pr.GetHead().GetRef(), Repo: &eventRepo{FullName: pr.GetHead().GetRepo().GetFullName()}},
	}
	return out, nil
}

// contentAt reads a file of commit ref through the API, for configuration:
// absent is a Blob that is not Found; a symlink, a directory or a file over
// max bytes is an error.
func contentAt(ctx context.Context, gh *github.Client, owner, repo, p, ref string, max int64) (source.Blob, error) {
	fc, dir, resp, err := gh.Repositories.GetContents(ctx, owner, repo, p, &github.RepositoryContentGetOptions{Ref: ref})
	if resp != nil && resp.StatusCode == 404 {
		return source.Blob{}, nil
	}
	if err != nil {
		return source.Blob{}, apiErr("read "+p+" at "+short(ref), err)
	}
	if fc == nil || dir != nil {
		return source.Blob{}, fmt.Errorf("%s at %s is a directory", p, short(ref))
	}
	if fc.GetType() != "file" {
		return source.Blob{}, fmt.Errorf("%s at %s is a %s: ctxpack reads configuration only from regular files", p, short(ref), fc.GetType())
	}
	if int64(fc.GetSize()) > max {
		return source.Blob{}, fmt.Errorf("%s at %s is %d bytes, over the %d-byte limit for this file", p, short(ref), fc.GetSize(), max)
	}
	text, err := fc.GetContent()
	if err != nil {
		return source.Blob{}, fmt.Errorf("read %s at %s: %w", p, short(ref), err)
	}
	if int64(len(text)) > max {
		return source.Blob{}, fmt.Errorf("%s at %s is over the %d-byte limit for this file", p, short(ref), max)
	}
	return source.Blob{Data: []byte(text), ID: fc.GetSHA()}, nil
}
