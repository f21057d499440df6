package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Event is the part of a GitHub webhook payload ctxpack reads
// (GITHUB_EVENT_PATH). Unknown fields are ignored.
type Event struct {
	// push
	Ref        string        `json:"ref"`
	Before     string        `json:"before"`
	After      string        `json:"after"`
	Created    bool          `json:"created"`
	Deleted    bool          `json:"deleted"`
	Forced     bool          `json:"forced"`
	BaseRef    *string       `json:"base_ref"`
	HeadCommit *eventCommit  `json:"head_commit"`
	Commits    []eventCommit `json:"commits"`
	// pull_request, pull_request_target, pull_request_review,
	// pull_request_review_comment
	Action      string       `json:"action"`
	Number      int          `json:"number"`
	PullRequest *pullRequest `json:"pull_request"`
	// issue_comment (on a pull request: issue.pull_request is set)
	Issue *issue `json:"issue"`
	// merge_group
	MergeGroup *mergeGroup `json:"merge_group"`
	// workflow_run, check_suite, check_run
	WorkflowRun *workflowRun `json:"workflow_run"`
	CheckSuite  *workflowRun `json:"check_suite"`
	CheckRun    *workflowRun `json:"check_run"`
	// create (ref_type branch or tag), delete
	RefType string `json:"ref_type"`
	// deployment, deployment_status
	Deployment *deployment `json:"deployment"`
	// status
	SHA        string     `json:"sha"`
	Repository *eventRepo `json:"repository"`
}

type eventCommit struct {
	ID string `json:"id"`
}

type pullRequest struct {
	Number  int       `json:"number"`
	HTMLURL string    `json:"html_url"`
	Head    prRef     `json:"head"`
	Base    prRef     `json:"base"`
	State   string    `json:"state"`
	Title   *string   `json:"title"`
	Body    *string   `json:"body"`
	Labels  []prLabel `json:"labels"`
}

type prLabel struct {
	Name string `json:"name"`
}

type prRef struct {
	SHA  string     `json:"sha"`
	Ref  string     `json:"ref"`
	Repo *eventRepo `json:"repo"`
}

type mergeGroup struct {
	HeadSHA string `json:"head_sha"`
	BaseSHA string `json:"base_sha"`
	HeadRef string `json:"head_ref"`
}

type issue struct {
	Number      int       `json:"number"`
	PullRequest *struct{} `json:"pull_request"`
}

// workflowRun is what workflow_run, check_suite and check_run share: the
// commit they ran on and the pull requests it belongs to (empty for a
// pull request from a fork).
type workflowRun struct {
	HeadSHA      string           `json:"head_sha"`
	HeadBranch   string           `json:"head_branch"`
	Event        string           `json:"event"`
	PullRequests []runPullRequest `json:"pull_requests"`
	HeadRepo     *eventRepo       `json:"head_repository"`
	Repo         *eventRepo       `json:"repository"`
}

type runPullRequest struct {
	Number int   `json:"number"`
	Head   prRef `json:"head"`
	Base   prRef `json:"base"`
}

type deployment struct {
	SHA string `json:"sha"`
}

type eventRepo struct {
	FullName      string `json:"full_name"`
	DefaultBranch string `json:"default_branch"`
}

// ReadEvent reads and parses the payload at path. A missing path, an
// unreadable file or a payload that is not a JSON object is an error.
func ReadEvent(path string) (*Event, error) {
	if path == "" {
		return nil, errors.New("GITHUB_EVENT_PATH is not set: ctxpack action runs inside a GitHub Actions job, which provides the event payload")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the event payload (GITHUB_EVENT_PATH): %w", err)
	}
	return ParseEvent(data)
}

// ParseEvent parses a webhook payload.
func ParseEvent(data []byte) (*Event, error) {
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the event payload (GITHUB_EVENT_PATH) is not a JSON object: %w", err)
	}
	return &ev, nil
}

// Plan kinds.
const (
	PlanSkip      = "skip"       // nothing to pack (a deleted ref)
	PlanRange     = "range"      // Base..Head from their merge base
	PlanCommit    = "commit"     // Head against its first parent
	PlanNewBranch = "new-branch" // Head against the default branch's merge base
	// PlanPullNumber is a pull request known only by number (an
	// issue_comment): its base and head are asked of the API.
	PlanPullNumber = "pull-number"
)

// Plan says what a workflow event packs.
type Plan struct {
	Kind string
	// Base and Head are commit ids from the payload (Head may be a tag
	// object id for a tag push; it resolves to the tagged commit).
	Base, Head string
	// AltHead is a commit to pack instead of Head when Head is not in the
	// checkout (a pull_request's merge commit, GITHUB_SHA).
	AltHead string
	// DefaultBranch is the repository's default branch (new-branch plans).
	DefaultBranch string
	// Ref is the pushed ref or the pull request's head branch.
	Ref string
	// Trigger is the pack's source trigger: push, pull_request, commit,
	// merge_group, workflow_dispatch or schedule.
	Trigger string
	// PR is the pull request number, 0 when none.
	PR int
	// Fork is true when the pull request's head is in another repository.
	Fork bool
	// Pull is the pull request as the payload describes it (title, body,
	// labels), nil when the payload has none.
	Pull *pullRequest
	// Why says in one sentence what is packed, for the log.
	Why string
}

// PlanFor decides what to pack for event name (GITHUB_EVENT_NAME) with its
// payload; sha is GITHUB_SHA.
func PlanFor(name string, ev *Event, sha string) (*Plan, error) {
	if ev == nil {
		return nil, errors.New("no event payload")
	}
	switch name {
	case "":
		return nil, errors.New("GITHUB_EVENT_NAME is not set: ctxpack action runs inside a GitHub Actions job")
	case "push":
		return planPush(ev)
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		return planPR(name, ev, sha)
	case "merge_group":
		return planMergeGroup(ev, sha)
	case "workflow_run", "check_suite", "check_run":
		run := map[string]*workflowRun{"workflow_run": ev.WorkflowRun, "check_suite": ev.CheckSuite, "check_run": ev.CheckRun}[name]
		return planRun(name, run, ev.Repository)
	case "issue_comment":
		if ev.Issue != nil && ev.Issue.PullRequest != nil && ev.Issue.Number > 0 {
			return &Plan{Kind: PlanPullNumber, PR: ev.Issue.Number, Trigger: "pull_request",
				Why: fmt.Sprintf("comment on pull request #%d: packing the pull request", ev.Issue.Number)}, nil
		}
	case "delete":
		return &Plan{Kind: PlanSkip, Ref: ev.Ref, Why: "delete event (" + ev.RefType + " " + ev.Ref + "): nothing to pack"}, nil
	case "create":
		if ev.RefType == "branch" && sha != "" {
			if err := checkSHA("GITHUB_SHA", sha); err != nil {
				return nil, err
			}
			p := &Plan{Kind: PlanNewBranch, Head: sha, Ref: "refs/heads/" + ev.Ref, Trigger: "push",
				Why: fmt.Sprintf("branch %s created: packing %s against the default branch's merge base", ev.Ref, short(sha))}
			if ev.Repository != nil {
				p.DefaultBranch = ev.Repository.DefaultBranch
			}
			return p, nil
		}
	case "deployment", "deployment_status":
		if ev.Deployment != nil && ev.Deployment.SHA != "" {
			sha = ev.Deployment.SHA
		}
	case "status":
		if ev.SHA != "" {
			sha = ev.SHA
		}
	}
	// workflow_dispatch, schedule, release, repository_dispatch and any
	// other event: the commit the workflow runs on against its first parent.
	if sha == "" {
		return nil, fmt.Errorf("%s event: GITHUB_SHA is not set, so there is no commit to pack", name)
	}
	if err := checkSHA("GITHUB_SHA", sha); err != nil {
		return nil, err
	}
	trigger := "commit"
	if name == "workflow_dispatch" || name == "schedule" {
		trigger = name
	}
	return &Plan{Kind: PlanCommit, Head: sha, Trigger: trigger, Why: fmt.Sprintf("%s event: packing commit %s against its parent", name, short(sha))}, nil
}

func planPush(ev *Event) (*Plan, error) {
	if ev.Deleted || isZero(ev.After) {
		return &Plan{Kind: PlanSkip, Ref: ev.Ref, Why: "push deleted " + ev.Ref + ": nothing to pack"}, nil
	}
	if ev.After == "" {
		return nil, errors.New("push event: the payload has no \"after\" commit")
	}
	if err := checkSHA("after", ev.After); err != nil {
		return nil, err
	}
	p := &Plan{Head: ev.After, Ref: ev.Ref, Trigger: "push"}
	if ev.Repository != nil {
		p.DefaultBranch = ev.Repository.DefaultBranch
	}
	switch {
	case strings.HasPrefix(ev.Ref, "refs/tags/"):
		p.Kind = PlanCommit
		p.Why = fmt.Sprintf("tag push %s: packing the tagged commit", ev.Ref)
	case ev.Before == "" || isZero(ev.Before) || ev.Created:
		p.Kind = PlanNewBranch
		p.Why = fmt.Sprintf("new branch %s: packing %s against the default branch's merge base", ev.Ref, short(ev.After))
	case ev.Forced:
		// The old tip may be gone from the remote and is not an ancestor:
		// everything the branch has over the default branch is packed.
		p.Kind = PlanNewBranch
		p.Why = fmt.Sprintf("force push to %s: packing %s against the default branch's merge base", ev.Ref, short(ev.After))
	default:
		if err := checkSHA("before", ev.Before); err != nil {
			return nil, err
		}
		p.Kind, p.Base = PlanRange, ev.Before
		p.Why = fmt.Sprintf("push to %s: packing %s..%s", ev.Ref, short(ev.Before), short(ev.After))
	}
	return p, nil
}

func planPR(name string, ev *Event, sha string) (*Plan, error) {
	pr := ev.PullRequest
	if pr == nil {
		return nil, fmt.Errorf("%s event: the payload has no pull_request object", name)
	}
	if err := checkSHA("pull_request.base.sha", pr.Base.SHA); err != nil {
		return nil, err
	}
	if err := checkSHA("pull_request.head.sha", pr.Head.SHA); err != nil {
		return nil, err
	}
	number := pr.Number
	if number == 0 {
		number = ev.Number
	}
	p := &Plan{Kind: PlanRange, Base: pr.Base.SHA, Head: pr.Head.SHA, Ref: pr.Head.Ref, Trigger: "pull_request", PR: number, Pull: pr}
	if name != "pull_request_target" && sha != "" && sha != pr.Head.SHA && checkSHA("GITHUB_SHA", sha) == nil {
		p.AltHead = sha // refs/pull/N/merge, what actions/checkout checks out
	}
	base := ""
	if pr.Base.Repo != nil {
		base = pr.Base.Repo.FullName
	}
	if pr.Head.Repo == nil || !strings.EqualFold(pr.Head.Repo.FullName, base) {
		p.Fork = true
	}
	p.Why = fmt.Sprintf("%s #%d: packing %s..%s from their merge base", name, number, short(pr.Base.SHA), short(pr.Head.SHA))
	return p, nil
}

// planMergeGroup packs what the merge queue adds: base_sha..head_sha.
func planMergeGroup(ev *Event, sha string) (*Plan, error) {
	mg := ev.MergeGroup
	if mg == nil {
		return nil, errors.New("merge_group event: the payload has no merge_group object")
	}
	head := mg.HeadSHA
	if head == "" {
		head = sha
	}
	if err := checkSHA("merge_group.head_sha", head); err != nil {
		return nil, err
	}
	if mg.BaseSHA == "" {
		return &Plan{Kind: PlanCommit, Head: head, Trigger: "merge_group", Ref: mg.HeadRef,
			Why: fmt.Sprintf("merge group %s: no base_sha, packing %s against its parent", mg.HeadRef, short(head))}, nil
	}
	if err := checkSHA("merge_group.base_sha", mg.BaseSHA); err != nil {
		return nil, err
	}
	return &Plan{Kind: PlanRange, Base: mg.BaseSHA, Head: head, Trigger: "merge_group", Ref: mg.HeadRef,
		Why: fmt.Sprintf("merge group %s: packing %s..%s", mg.HeadRef, short(mg.BaseSHA), short(head))}, nil
}

// planRun packs the commit a workflow_run, check_suite or check_run ran
// on: its pull request's range when it names one (a workflow_run is the
// fork-safe way to comment on a pull request), else against the default
// branch's merge base.
func planRun(name string, run *workflowRun, repo *eventRepo) (*Plan, error) {
	if run == nil {
		return nil, fmt.Errorf("%s event: the payload has no %s object", name, name)
	}
	if err := checkSHA(name+".head_sha", run.HeadSHA); err != nil {
		return nil, err
	}
	for _, pr := range run.PullRequests {
		if pr.Number <= 0 || checkSHA("pull_requests.base.sha", pr.Base.SHA) != nil {
			continue
		}
		return &Plan{Kind: PlanRange, Base: pr.Base.SHA, Head: run.HeadSHA, Ref: run.HeadBranch, Trigger: "pull_request", PR: pr.Number,
			Fork: run.HeadRepo != nil && run.Repo != nil && !strings.EqualFold(run.HeadRepo.FullName, run.Repo.FullName),
			Why:  fmt.Sprintf("%s of pull request #%d: packing %s..%s from their merge base", name, pr.Number, short(pr.Base.SHA), short(run.HeadSHA))}, nil
	}
	p := &Plan{Kind: PlanNewBranch, Head: run.HeadSHA, Ref: "refs/heads/" + run.HeadBranch, Trigger: "push",
		Why: fmt.Sprintf("%s on %s: packing %s against the default branch's merge base", name, run.HeadBranch, short(run.HeadSHA))}
	if repo != nil {
		p.DefaultBranch = repo.DefaultBranch
	}
	return p, nil
}

// checkSHA accepts a full SHA-1 or SHA-256 commit id in hex.
func checkSHA(field, s string) error {
	if (len(s) != 40 && len(s) != 64) || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "" {
		return fmt.Errorf("event payload: %s %q is not a commit id", field, clip(s, 80))
	}
	return nil
}

func isZero(s string) bool { return s != "" && strings.Trim(s, "0") == "" }

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
