// Command prbench packs real pull requests of real repositories and prints
// what a reviewer model would get: tokens at the default budget and at tier
// cheap, the share of added lines present, the share of commit subjects
// present, and unchanged boilerplate sent. Repositories are clones on disk
// (bench/prpacks/run clones them at run time; nothing of theirs is
// committed here).
//
//	go run ./bench/cmd/prbench -n 6 /path/to/clone[@commit] ...
//
// Pull requests are found on the first-parent history from the given commit
// (default HEAD): a merge commit "Merge pull request #N" packs its second
// parent against its first; a squash commit "… (#N)" packs itself against
// its parent. The first n of them that change 2 to 30 files are packed.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/pack"
	"github.com/ctxpack/ctxpack/pipeline"
)

type pr struct {
	repo, title string
	base, head  string
	files       int
	diffChars   int
	// diffTokens is the o200k size of the pull request's diff.
	diffTokens int
	subjects   []string
	added      map[string][]string // path -> added lines (non-blank), repeats kept
}

type result struct {
	tokens, budget  int
	addedShare      float64
	subjectShare    float64
	boilerplateSent []string
	typ             string
}

var (
	mergePR  = regexp.MustCompile(`^Merge pull request #(\d+)`)
	squashPR = regexp.MustCompile(`\(#(\d+)\)$`)
)

func main() {
	n := flag.Int("n", 6, "pull requests per repository")
	jsonOut := flag.String("json", "", "also write the figures as JSON to this file")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: prbench [-n N] [-json FILE] CLONE[@COMMIT]...")
		os.Exit(2)
	}
	ctx := context.Background()
	var rows []map[string]any
	var defTokens []int
	var defShares, cheapShares, subjShares []float64
	var fitShares, smallCheapShares []float64
	boiler := 0
	fmt.Printf("%-28s %-10s %5s %7s %7s %7s %6s %6s %6s %s\n", "pull request", "repo", "files", "diff", "tokens", "cheap", "added", "a/chp", "subj", "boilerplate")
	for _, arg := range flag.Args() {
		dir, at, _ := strings.Cut(arg, "@")
		if at == "" {
			at = "HEAD"
		}
		prs, err := findPRs(dir, at, *n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "prbench:", err)
			os.Exit(1)
		}
		for _, p := range prs {
			def, err := packPR(ctx, dir, p, "")
			if err != nil {
				fmt.Fprintf(os.Stderr, "prbench: %s %s: %v\n", p.repo, p.title, err)
				os.Exit(1)
			}
			cheap, err := packPR(ctx, dir, p, "cheap")
			if err != nil {
				fmt.Fprintf(os.Stderr, "prbench: %s %s (cheap): %v\n", p.repo, p.title, err)
				os.Exit(1)
			}
			title := p.title
			if len(title) > 28 {
				title = title[:27] + "…"
			}
			fmt.Printf("%-28s %-10s %5d %7d %7d %7d %5.0f%% %5.0f%% %5.0f%% %s\n", title, p.repo, p.files, p.diffChars,
				def.tokens, cheap.tokens, 100*def.addedShare, 100*cheap.addedShare, 100*def.subjectShare, strings.Join(def.boilerplateSent, ","))
			defTokens = append(defTokens, def.tokens)
			defShares = append(defShares, def.addedShare)
			cheapShares = append(cheapShares, cheap.addedShare)
			subjShares = append(subjShares, def.subjectShare)
			// "When the diff fits": the diff alone is within the pack's
			// token budget (the target), not the pack itself.
			if def.budget > 0 && p.diffTokens <= def.budget {
				fitShares = append(fitShares, def.addedShare)
			}
			if p.diffChars <= 16000 {
				smallCheapShares = append(smallCheapShares, cheap.addedShare)
			}
			boiler += len(def.boilerplateSent) + len(cheap.boilerplateSent)
			rows = append(rows, map[string]any{"repo": p.repo, "title": p.title, "base": p.base, "head": p.head, "files": p.files,
				"diff_chars": p.diffChars, "diff_tokens": p.diffTokens, "tokens": def.tokens, "budget": def.budget, "type": def.typ, "cheap_tokens": cheap.tokens,
				"added_share": def.addedShare, "cheap_added_share": cheap.addedShare, "subject_share": def.subjectShare,
				"boilerplate_sent": def.boilerplateSent})
		}
	}
	fmt.Println()
	fmt.Printf("pull requests: %d\n", len(defTokens))
	fmt.Printf("median default pack: %d tokens (target <= 10,000)\n", median(defTokens))
	fmt.Printf("added lines present, default: mean %.1f%%, min %.1f%%\n", 100*mean(defShares), 100*minf(defShares))
	fmt.Printf("added lines present, cheap: mean %.1f%%, min %.1f%%\n", 100*mean(cheapShares), 100*minf(cheapShares))
	fmt.Printf("added lines present, default, diff within the pack's budget (%d): mean %.1f%%, min %.1f%% (target 100%%)\n", len(fitShares), 100*mean(fitShares), 100*minf(fitShares))
	fmt.Printf("added lines present, cheap, diff <= 16,000 chars (%d): mean %.1f%%, min %.1f%% (target >= 95%%)\n", len(smallCheapShares), 100*mean(smallCheapShares), 100*minf(smallCheapShares))
	fmt.Printf("commit subjects present: mean %.1f%%, min %.1f%% (target 100%%)\n", 100*mean(subjShares), 100*minf(subjShares))
	fmt.Printf("unchanged boilerplate files sent: %d (target 0)\n", boiler)
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(rows, "", "  ")
		if err := os.WriteFile(*jsonOut, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "prbench:", err)
			os.Exit(1)
		}
	}
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// findPRs walks the first-parent history for pull requests of 2–30 files.
func findPRs(dir, at string, n int) ([]pr, error) {
	log, err := git(dir, "log", "--first-parent", "--format=%H %P%x09%s", "-n", "3000", at)
	if err != nil {
		return nil, err
	}
	repo := strings.TrimSuffix(dir[strings.LastIndex(strings.TrimRight(dir, "/"), "/")+1:], "/")
	var out []pr
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() && len(out) < n {
		ids, subject, _ := strings.Cut(sc.Text(), "\t")
		hashes := strings.Fields(ids)
		var p pr
		switch {
		case len(hashes) == 3 && mergePR.MatchString(subject):
			p = pr{repo: repo, title: subject, base: hashes[1], head: hashes[2]}
		case len(hashes) == 2 && squashPR.MatchString(subject):
			p = pr{repo: repo, title: subject, base: hashes[1], head: hashes[0]}
		default:
			continue
		}
		names, err := git(dir, "diff", "--name-only", p.base+"..."+p.head)
		if err != nil {
			return nil, err
		}
		p.files = len(strings.Fields(names))
		if p.files < 2 || p.files > 30 {
			continue
		}
		diff, err := git(dir, "diff", p.base+"..."+p.head)
		if err != nil {
			return nil, err
		}
		p.diffChars = len([]rune(diff))
		if p.diffTokens, err = pack.CountTokens(diff); err != nil {
			return nil, err
		}
		p.added = addedLines(diff)
		subjects, err := git(dir, "log", "--no-merges", "--format=%s", p.base+".."+p.head)
		if err != nil {
			return nil, err
		}
		for _, s := range strings.Split(strings.TrimSpace(subjects), "\n") {
			if s = strings.Join(strings.Fields(s), " "); s != "" {
				p.subjects = append(p.subjects, s)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// addedLines reads the added, non-blank lines of a unified diff per path.
func addedLines(diff string) map[string][]string {
	out := map[string][]string{}
	path := ""
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			path = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
		case strings.HasPrefix(l, "+") && path != "/dev/null":
			if t := strings.TrimSpace(l[1:]); t != "" {
				out[path] = append(out[path], strings.TrimRight(l[1:], "\r"))
			}
		}
	}
	return out
}

// ruled are reasons a rule (not the budget) keeps a file out: its lines are
// not expected in the pack.
var ruled = map[pack.Reason]bool{pack.ReasonCredentials: true, pack.ReasonBinary: true, pack.ReasonPolicy: true,
	pack.ReasonPatternMatch: true, pack.ReasonDependencyDir: true, pack.ReasonBuildOutput: true, pack.ReasonCache: true,
	pack.ReasonSymlink: true, pack.ReasonSubmodule: true}

func packPR(ctx context.Context, dir string, p pr, tier string) (result, error) {
	out, err := pipeline.Pack(ctx, pipeline.PackOptions{Dir: dir, Base: p.base, Head: p.head, Tier: tier})
	if err != nil {
		return result{}, err
	}
	pk := out.Result.Pack
	// A pack without a token budget (a Summary pack under the automatic
	// budget) has no budget the diff could fit.
	r := result{tokens: pk.Budget.EstimatedTokens, budget: pk.Budget.MaxTokens, typ: pk.Type}
	// Lines the pack carries, per path, counted with repeats: the "+" lines
	// of its diffs, and the lines of its content items. A file's regions do
	// not overlap, nor do its hunks; a region may repeat a hunk's lines, so
	// a line counts as often as the diffs or the contents hold it, whichever
	// is more, never as their sum.
	inDiff, inContent := lineCounts{}, lineCounts{}
	changed := map[string]bool{}
	for _, c := range pk.Changes {
		changed[c.Path] = true
		for _, l := range strings.Split(c.Diff, "\n") {
			if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
				inDiff.add(c.Path, l[1:])
			}
		}
	}
	for _, it := range append(append([]pack.Item{}, pk.KeyFiles...), pk.Contents...) {
		for _, l := range strings.Split(it.Content, "\n") {
			inContent.add(it.Path, l)
		}
		if isBoilerplate(it.Path) && !changed[it.Path] {
			r.boilerplateSent = append(r.boilerplateSent, it.Path)
		}
	}
	ruledOut := map[string]bool{}
	for _, e := range pk.FileIndex {
		if !e.Included && ruled[e.ExclusionReason] {
			ruledOut[e.Path] = true
		}
	}
	r.addedShare = addedShare(p.added, inDiff, inContent, ruledOut)
	subjects := map[string]bool{}
	if pk.Intent != nil {
		for _, c := range pk.Intent.Commits {
			subjects[c.Subject] = true
		}
	}
	found := 0
	for _, s := range p.subjects {
		if subjects[s] {
			found++
		}
	}
	r.subjectShare = 1
	if len(p.subjects) > 0 {
		r.subjectShare = float64(found) / float64(len(p.subjects))
	}
	return r, nil
}

// addedShare is the share of the added lines (per path, with repeats) the
// pack holds: a line added three times needs three copies in the pack's
// diffs or in its contents.
func addedShare(added map[string][]string, inDiff, inContent lineCounts, ruledOut map[string]bool) float64 {
	total, present := 0, 0
	for path, lines := range added {
		if ruledOut[path] {
			continue
		}
		want := lineCounts{}
		for _, l := range lines {
			want.add(path, l)
		}
		for l, n := range want[path] {
			total += n
			present += min(n, max(inDiff[path][l], inContent[path][l]))
		}
	}
	if total == 0 {
		return 1
	}
	return float64(present) / float64(total)
}

// lineCounts counts lines per path.
type lineCounts map[string]map[string]int

func (c lineCounts) add(path, line string) {
	if c[path] == nil {
		c[path] = map[string]int{}
	}
	c[path][strings.TrimRight(line, "\r")]++
}

// boilerplate and toolConfig name, independently of the pack builder's own
// list (so the bench can find what that list misses), the files the issue
// says never ride along unchanged: licences, notices, author and maintainer
// lists, codes of conduct, contributing guides, changelogs, security
// policies, lockfiles, and the configuration of the tools around the code
// (linters, CI, coverage, release, editors, bots). Matched on the base name,
// case-insensitively, with or without a documentation extension.
var (
	boilerplate = regexp.MustCompile(`^(licen[cs]e|copying|notice|patents|authors|contributors|maintainers|owners|codeowners|` +
		`code_of_conduct|conduct|contributing|changelog|changes|history|news|releases|security|support|governance)` +
		`([-_][a-z0-9-]+)?(\.(md|txt|rst|adoc|markdown))?$`)
	lockfile   = regexp.MustCompile(`(^go\.sum$|\.lock$|^package-lock\.json$|^npm-shrinkwrap\.json$|^pnpm-lock\.yaml$|\.lockb$|\.lockfile$)`)
	toolConfig = regexp.MustCompile(`^(\.[a-z0-9_.-]+(rc|ignore)(\.[a-z]+)?|\.(golangci|goreleaser|travis|gitlab-ci|pre-commit-config|pre-commit-hooks|` +
		`codecov|coveragerc|promu|yamllint|mergify|readthedocs|gitpod|editorconfig|gitattributes|mailmap|drone|cirrus|` +
		`stale|kodiak|gofumpt|revive|typos|markdownlint|clang-format|clang-tidy|flake8|snyk|node-version|python-version|` +
		`ruby-version|tool-versions|nvmrc)(\.[a-z]+)?|(codecov|goreleaser|appveyor|azure-pipelines|renovate|dependabot|` +
		`ruff|rustfmt|clippy|mypy|_typos|biome|security-insights|release-please-config|cloudbuild|bitbucket-pipelines)\.[a-z0-9]+|` +
		`(eslint|prettier|commitlint|release|stylelint)\.config\.(c|m)?js|jenkinsfile|pylintrc)$`)
	toolDirs = regexp.MustCompile(`^\.(github|circleci|buildkite|devcontainer|vscode|idea|husky|changeset)/`)
)

// isBoilerplate reports whether an unchanged file at p is one the pack
// should not carry.
func isBoilerplate(p string) bool {
	base := strings.ToLower(p[strings.LastIndex(p, "/")+1:])
	return boilerplate.MatchString(base) || lockfile.MatchString(base) || toolConfig.MatchString(base) || toolDirs.MatchString(p)
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func minf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}
