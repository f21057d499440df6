package pack

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Intent is what the change is for: the first thing a reviewer reads. It
// comes from the commit messages of the range, the pull request (title,
// body, labels, the issues it closes) and, from the CLI, a goal or a task
// file. Every string of it is secret-scanned and redacted like any content.
type Intent struct {
	// Goal is the change's objective in a sentence or three: --goal, the
	// task's goal, else the pull request's title, else the single commit's
	// subject.
	Goal        string          `json:"goal,omitempty"`
	Task        *Task           `json:"task,omitempty"`
	PullRequest *PullRequest    `json:"pull_request,omitempty"`
	Commits     []CommitMessage `json:"commits"`
	// Acceptance are the checklist items of the pull request body, the task
	// and the commit messages: what "done" means for the change.
	Acceptance []string `json:"acceptance"`
	// Mentioned are paths of the head tree that the texts above name; they
	// are prioritised like changed files.
	Mentioned []string `json:"mentioned_paths"`
	// Truncated says some text was shortened or left out to keep the intent
	// bounded (see Omitted).
	Truncated bool   `json:"truncated,omitempty"`
	Omitted   string `json:"omitted,omitempty"`
	// Redactions are the secrets replaced in the intent's texts.
	Redactions []IntentRedaction `json:"redactions,omitempty"`
}

// IntentRedaction is a secret replaced in one text of the intent.
type IntentRedaction struct {
	// Field is where: "goal", "pull_request.body", "commits[3].body", ….
	Field  string `json:"field"`
	Line   int    `json:"line"`
	RuleID string `json:"rule_id"`
}

// Task is a task a CLI user hands over with --task (seed 004's task).
type Task struct {
	Title      string   `json:"title,omitempty"`
	Goal       string   `json:"goal,omitempty"`
	Body       string   `json:"body,omitempty"`
	Acceptance []string `json:"acceptance,omitempty"`
	// Files are paths the task names as its context.
	Files []string `json:"files,omitempty"`
}

// PullRequest is the pull request a pack was built for.
type PullRequest struct {
	Number int        `json:"number"`
	Title  string     `json:"title"`
	Body   string     `json:"body,omitempty"`
	Labels []string   `json:"labels,omitempty"`
	Closes []IssueRef `json:"closes,omitempty"`
}

// IssueRef is an issue a pull request closes.
type IssueRef struct {
	Number int    `json:"number"`
	Title  string `json:"title,omitempty"`
}

// CommitMessage is one commit's message, split into subject and body.
type CommitMessage struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	Body    string `json:"body,omitempty"`
}

// Bounds of the intent, in characters (runes).
const (
	intentGoalChars      = 600
	intentTitleChars     = 300
	intentSubjectChars   = 200
	intentPRBodyChars    = 4000
	intentCommitBody     = 1200
	intentCommitBodies   = 6000 // all commit bodies together
	intentMaxCommits     = 400
	intentMaxLabels      = 20
	intentMaxCloses      = 10
	intentMaxAcceptance  = 30
	intentAcceptChars    = 300
	intentMaxMentioned   = 30
	intentTaskBodyChars  = 4000
	intentMaxTaskFiles   = 50
	intentTruncateMarker = " … [truncated]"
)

// SplitMessage splits a commit message into its subject (first paragraph,
// joined to one line) and body.
func SplitMessage(msg string) (subject, body string) {
	msg = strings.TrimSpace(strings.ReplaceAll(msg, "\r\n", "\n"))
	head, rest, _ := strings.Cut(msg, "\n\n")
	return strings.Join(strings.Fields(head), " "), strings.TrimSpace(rest)
}

// redactionMarker matches what applyRedactions puts in a secret's place.
var redactionMarker = regexp.MustCompile(`\[REDACTED:[^\]\n]*\]`)

// capText shortens s to n runes, marking the cut; it reports whether it cut.
// A cut inside a redaction marker moves before the marker: a marker is
// whole or gone. n <= 0 is no cap.
func capText(s string, n int) (string, bool) {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i, k := 0, 0
	for i = range s {
		if k == n {
			break
		}
		k++
	}
	for _, m := range redactionMarker.FindAllStringIndex(s, -1) {
		if m[0] >= i {
			break
		}
		if i < m[1] {
			i = m[0]
		}
	}
	return strings.TrimRightFunc(s[:i], func(r rune) bool { return r == ' ' || r == '\n' }) + intentTruncateMarker, true
}

// boundIntent caps every text of the intent and drops what is over the
// counts, saying so. Every text goes through text with its field name (as
// in IntentRedaction.Field) and its cap in runes (0: none), which caps it
// and reports whether it cut. The goal falls back to the task's goal or
// title, then to the pull request's title, then to the only commit's
// subject, capped as that text is.
func boundIntent(in Intent, text func(field string, s *string, n int) bool) Intent {
	out := in
	var omitted []string
	cut := func(field string, s *string, n int) {
		if *s == "" {
			return
		}
		// A message in another encoding (git's i18n.commitEncoding) shows
		// each byte that is not UTF-8 as U+FFFD (validUTF8), so that the
		// pack decodes to what it was serialized from.
		*s = validUTF8(*s)
		c := text(field, s, n)
		out.Truncated = out.Truncated || c
	}
	goalChars := intentGoalChars
	if out.Goal == "" && in.Task != nil {
		if out.Goal = in.Task.Goal; out.Goal == "" {
			out.Goal, goalChars = in.Task.Title, intentTitleChars
		}
	}
	if out.Goal == "" && in.PullRequest != nil {
		out.Goal, goalChars = in.PullRequest.Title, intentTitleChars
	}
	if out.Goal == "" && len(in.Commits) == 1 {
		out.Goal, goalChars = in.Commits[0].Subject, intentSubjectChars
	}
	cut("goal", &out.Goal, goalChars)
	if in.Task != nil {
		t := *in.Task
		cut("task.title", &t.Title, intentTitleChars)
		cut("task.goal", &t.Goal, intentGoalChars)
		cut("task.body", &t.Body, intentTaskBodyChars)
		t.Acceptance = append([]string(nil), t.Acceptance...)
		for i := range t.Acceptance {
			cut(fmt.Sprintf("task.acceptance[%d]", i), &t.Acceptance[i], intentAcceptChars)
		}
		if len(t.Files) > intentMaxTaskFiles {
			omitted = append(omitted, fmt.Sprintf("%d task files", len(t.Files)-intentMaxTaskFiles))
			t.Files, out.Truncated = t.Files[:intentMaxTaskFiles], true
		}
		t.Files = append([]string(nil), t.Files...)
		for i := range t.Files {
			cut(fmt.Sprintf("task.files[%d]", i), &t.Files[i], 0)
		}
		out.Task = &t
	}
	if in.PullRequest != nil {
		pr := *in.PullRequest
		cut("pull_request.title", &pr.Title, intentTitleChars)
		cut("pull_request.body", &pr.Body, intentPRBodyChars)
		if len(pr.Labels) > intentMaxLabels {
			pr.Labels, out.Truncated = pr.Labels[:intentMaxLabels], true
		}
		pr.Labels = append([]string(nil), pr.Labels...)
		for i := range pr.Labels {
			cut(fmt.Sprintf("pull_request.labels[%d]", i), &pr.Labels[i], 100)
		}
		if len(pr.Closes) > intentMaxCloses {
			omitted = append(omitted, fmt.Sprintf("%d closed issues", len(pr.Closes)-intentMaxCloses))
			pr.Closes, out.Truncated = pr.Closes[:intentMaxCloses], true
		}
		pr.Closes = append([]IssueRef(nil), pr.Closes...)
		for i := range pr.Closes {
			cut(fmt.Sprintf("pull_request.closes[%d].title", i), &pr.Closes[i].Title, intentTitleChars)
		}
		out.PullRequest = &pr
	}
	out.Commits = append([]CommitMessage{}, in.Commits...)
	if n := len(out.Commits); n > intentMaxCommits {
		// Keep the first and the last commits: where the change started and
		// where it ended up.
		half := intentMaxCommits / 2
		omitted = append(omitted, fmt.Sprintf("%d commit messages in the middle of the range", n-intentMaxCommits))
		out.Commits = append(out.Commits[:half:half], out.Commits[n-half:]...)
		out.Truncated = true
	}
	bodies := 0
	droppedBodies := 0
	for i := range out.Commits {
		c := &out.Commits[i]
		cut(fmt.Sprintf("commits[%d].subject", i), &c.Subject, intentSubjectChars)
		cut(fmt.Sprintf("commits[%d].body", i), &c.Body, intentCommitBody)
		if c.Body == "" {
			continue
		}
		if bodies+utf8.RuneCountInString(c.Body) > intentCommitBodies {
			c.Body, out.Truncated = "", true
			droppedBodies++
			continue
		}
		bodies += utf8.RuneCountInString(c.Body)
	}
	if droppedBodies > 0 {
		omitted = append(omitted, fmt.Sprintf("the bodies of %d commit messages", droppedBodies))
	}
	out.Acceptance = []string{}
	out.Mentioned = []string{}
	if len(omitted) > 0 {
		out.Omitted = "left out: " + strings.Join(omitted, "; ")
	}
	return out
}

// checklistItem matches a markdown task-list item: "- [ ] text", "* [x] text".
var checklistItem = regexp.MustCompile(`(?m)^[ \t]*[-*+][ \t]+\[[ xX]\][ \t]+(.+?)[ \t]*$`)

// deriveAcceptance collects the checklist items of the task, the pull request
// body and the commit bodies, in that order, once each, uncapped (the
// caller scans each item whole, then caps it).
func deriveAcceptance(in *Intent) {
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] || len(in.Acceptance) >= intentMaxAcceptance {
			return
		}
		seen[s] = true
		in.Acceptance = append(in.Acceptance, s)
	}
	texts := []string{}
	if in.Task != nil {
		for _, a := range in.Task.Acceptance {
			add(a)
		}
		texts = append(texts, in.Task.Body)
	}
	if in.PullRequest != nil {
		texts = append(texts, in.PullRequest.Body)
	}
	for _, c := range in.Commits {
		texts = append(texts, c.Body)
	}
	for _, t := range texts {
		for _, m := range checklistItem.FindAllStringSubmatch(t, -1) {
			add(m[1])
		}
	}
}

// pathLike matches the tokens of a text that could name a file: a run of
// path characters holding a dot or a slash.
var pathLike = regexp.MustCompile(`[A-Za-z0-9_.\-/]*[./][A-Za-z0-9_.\-/]*[A-Za-z0-9_]`)

// deriveMentioned finds the paths of the tree the intent's texts name,
// exactly ("pack/build.go", "./pack/build.go"; in looks a path up in the
// tree) or by a unique suffix of at least two components among the listed
// paths ("pack/build.go" for "internal/pack/build.go"), in order of first
// mention.
func deriveMentioned(in *Intent, listed []string, inTree func(string) bool) {
	exists := make(map[string]bool, len(listed))
	bySuffix := map[string][]string{}
	for _, p := range listed {
		exists[p] = true
		parts := strings.Split(p, "/")
		for i := 1; i+1 < len(parts); i++ {
			suf := strings.Join(parts[i:], "/")
			bySuffix[suf] = append(bySuffix[suf], p)
		}
	}
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] && len(in.Mentioned) < intentMaxMentioned {
			seen[p] = true
			in.Mentioned = append(in.Mentioned, p)
		}
	}
	var texts []string
	texts = append(texts, in.Goal)
	if in.Task != nil {
		texts = append(texts, in.Task.Title, in.Task.Goal, in.Task.Body)
		texts = append(texts, in.Task.Files...)
	}
	if in.PullRequest != nil {
		texts = append(texts, in.PullRequest.Title, in.PullRequest.Body)
		for _, c := range in.PullRequest.Closes {
			texts = append(texts, c.Title)
		}
	}
	for _, c := range in.Commits {
		texts = append(texts, c.Subject, c.Body)
	}
	for _, t := range texts {
		for _, tok := range pathLike.FindAllString(t, -1) {
			tok = strings.TrimPrefix(strings.TrimPrefix(tok, "./"), "/")
			tok = strings.TrimRight(tok, "./")
			switch {
			case exists[tok] || inTree != nil && inTree(tok):
				add(tok)
			case strings.Contains(tok, "/") && len(bySuffix[tok]) == 1:
				add(bySuffix[tok][0])
			}
		}
	}
}

// intentFields lists every text of the intent with its field name.
func intentFields(in *Intent) []intentField {
	var out []intentField
	add := func(name string, s *string) {
		if *s != "" {
			out = append(out, intentField{name, s})
		}
	}
	add("goal", &in.Goal)
	if in.Task != nil {
		add("task.title", &in.Task.Title)
		add("task.goal", &in.Task.Goal)
		add("task.body", &in.Task.Body)
		for i := range in.Task.Acceptance {
			add(fmt.Sprintf("task.acceptance[%d]", i), &in.Task.Acceptance[i])
		}
		for i := range in.Task.Files {
			add(fmt.Sprintf("task.files[%d]", i), &in.Task.Files[i])
		}
	}
	if pr := in.PullRequest; pr != nil {
		add("pull_request.title", &pr.Title)
		add("pull_request.body", &pr.Body)
		for i := range pr.Labels {
			add(fmt.Sprintf("pull_request.labels[%d]", i), &pr.Labels[i])
		}
		for i := range pr.Closes {
			add(fmt.Sprintf("pull_request.closes[%d].title", i), &pr.Closes[i].Title)
		}
	}
	for i := range in.Commits {
		add(fmt.Sprintf("commits[%d].subject", i), &in.Commits[i].Subject)
		add(fmt.Sprintf("commits[%d].body", i), &in.Commits[i].Body)
	}
	for i := range in.Acceptance {
		add(fmt.Sprintf("acceptance[%d]", i), &in.Acceptance[i])
	}
	return out
}

type intentField struct {
	name string
	text *string
}

// buildIntent bounds the snapshot's intent, derives acceptance criteria and
// mentioned paths, and redacts secrets in every text. Every text is scanned
// whole, and its secrets replaced, before it is capped: a cap inside a
// secret would leave a part that no scan recognises (a private key without
// its END line, a token's first characters), and the audit, which sees
// only the capped text, could not tell.
func (b *builder) buildIntent(ctx context.Context) (*Intent, error) {
	action := b.secretAction()
	reds := map[string][]Redaction{} // by field
	var scanErr error
	text := func(field string, s *string, n int) bool {
		if scanErr != nil {
			return false
		}
		var r []Redaction
		var cut bool
		*s, r, cut, scanErr = b.boundIntentText(ctx, field, *s, n, action)
		reds[field] = append(reds[field], r...)
		return cut
	}
	in := boundIntent(b.snap.Intent, text)
	deriveAcceptance(&in)
	for i := range in.Acceptance {
		// An item is cut from a redacted text, whose markers are its
		// redactions too; it is capped, not counted as the intent's
		// truncation.
		field := fmt.Sprintf("acceptance[%d]", i)
		for _, m := range redactionMarker.FindAllString(in.Acceptance[i], -1) {
			reds[field] = append(reds[field], Redaction{Line: 1, RuleID: m[len("[REDACTED:") : len(m)-1]})
		}
		text(field, &in.Acceptance[i], intentAcceptChars)
	}
	if scanErr != nil {
		return nil, scanErr
	}
	// What the caps left of each text (a body over the bodies' bound is
	// left out whole) says which redactions the pack holds.
	for _, f := range intentFields(&in) {
		for _, r := range keptRedactions(reds[f.name], *f.text) {
			in.Redactions = append(in.Redactions, IntentRedaction{Field: f.name, Line: r.Line, RuleID: r.RuleID})
		}
	}
	sort.SliceStable(in.Redactions, func(i, j int) bool { return in.Redactions[i].Field < in.Redactions[j].Field })
	// Paths are looked for in the redacted texts, and a path whose name
	// holds a secret is not named.
	listed := make([]string, len(b.snap.Files))
	for i, f := range b.snap.Files {
		listed[i] = f.Path
	}
	var inTree func(string) bool
	if b.snap.Tree != nil {
		inTree = func(p string) bool {
			_, ok, err := b.snap.Tree.File(ctx, p)
			return err == nil && ok
		}
	}
	deriveMentioned(&in, listed, inTree)
	if len(in.Mentioned) > 0 {
		bad, err := ScanNames(ctx, b.opts.Scanner, in.Mentioned)
		if err != nil {
			return nil, fmt.Errorf("secret scan of the mentioned paths: %w", err)
		}
		kept := in.Mentioned[:0]
		for _, p := range in.Mentioned {
			if len(bad[p]) == 0 {
				kept = append(kept, p)
			}
		}
		in.Mentioned = kept
	}
	if in.Goal == "" && in.Task == nil && in.PullRequest == nil && len(in.Commits) == 0 {
		return nil, nil
	}
	return &in, nil
}

// boundIntentText redacts the secrets of one whole text of the intent,
// then caps it at n runes (0: no cap), and scans what the cap left again: a
// cut can make a match the whole text did not have. It returns the text,
// its redactions (some may lie in what the cap took; see keptRedactions),
// and whether it cut. Messages are never withheld whole (they say what the
// change is for): a secret in them is replaced whatever the action, and a
// fail action still fails the verdict through the event, also for a secret
// the cap then left out.
func (b *builder) boundIntentText(ctx context.Context, field, text string, n int, action string) (string, []Redaction, bool, error) {
	redact := func(text string) (string, []Redaction, error) {
		out, reds, err := b.redactText(ctx, "intent", "(intent) "+field, text, intentAction(action))
		if err != nil {
			return "", nil, fmt.Errorf("secret scan of the intent's %s: %w", field, err)
		}
		return out, reds, nil
	}
	text, reds, err := redact(text)
	if err != nil {
		return "", nil, false, err
	}
	text, cut := capText(text, n)
	if cut {
		var more []Redaction
		if text, more, err = redact(text); err != nil {
			return "", nil, false, err
		}
		reds = append(reds, more...)
	}
	return text, reds, cut, nil
}

// keptRedactions are the redactions of reds whose marker is still in text,
// a prefix of the text they were made in (line and rule name a marker; a
// line's last markers are the ones a cut takes).
func keptRedactions(reds []Redaction, text string) []Redaction {
	type at struct {
		line int
		rule string
	}
	left := map[at]int{}
	line := 1
	last := 0
	for _, m := range redactionMarker.FindAllStringIndex(text, -1) {
		line += strings.Count(text[last:m[0]], "\n")
		last = m[0]
		left[at{line, text[m[0]+len("[REDACTED:") : m[1]-1]}]++
	}
	var kept []Redaction
	for _, r := range reds {
		if k := (at{r.Line, r.RuleID}); left[k] > 0 {
			left[k]--
			kept = append(kept, r)
		}
	}
	return kept
}

// intentAction is what happened to a secret in the intent: it is always
// replaced; under a fail policy the verdict still fails.
func intentAction(action string) string {
	if action == SecretFailed {
		return SecretFailed
	}
	return SecretRedacted
}
