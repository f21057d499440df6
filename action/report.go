package action

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// reporter writes to the job: log lines, workflow commands (annotations,
// masks), step outputs and the job summary, through go-githubactions.
// go-githubactions panics when GITHUB_OUTPUT or GITHUB_STEP_SUMMARY is unset
// or unwritable; reporter checks first and degrades with a message.
type reporter struct {
	gha    *githubactions.Action
	getenv func(string) string
	out    io.Writer
	// annotations counts the annotations issued, to stay within GitHub's
	// display limits.
	annotations int
	warned      []string
}

// maxAnnotations is how many file annotations are issued; GitHub shows at
// most 10 errors and 10 warnings per step and 50 per job.
const maxAnnotations = 50

// fileCmdDelimiter is go-githubactions' heredoc delimiter for file commands:
// a value containing it could end the value early and forge another output.
const fileCmdDelimiter = "_GitHubActionsFileCommandDelimeter_"

func newReporter(getenv func(string) string, out io.Writer) *reporter {
	return &reporter{
		gha:    githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(out)),
		getenv: getenv,
		out:    out,
	}
}

// infof logs one line; arguments are made single-line so that untrusted text
// cannot start a workflow command.
func (r *reporter) infof(format string, args ...any) {
	fmt.Fprintln(r.out, oneLine(fmt.Sprintf(format, safeArgs(args)...)))
}

func safeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = oneLine(v)
		case error:
			out[i] = oneLine(redactText(v.Error()))
		default:
			out[i] = a
		}
	}
	return out
}

// warnf issues a warning annotation (no file).
func (r *reporter) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, safeArgs(args)...)
	r.warned = append(r.warned, msg)
	r.gha.Warningf("%s", msg)
}

// errorf issues an error annotation (no file).
func (r *reporter) errorf(format string, args ...any) {
	r.gha.Errorf("%s", fmt.Sprintf(format, safeArgs(args)...))
}

// noticef issues a notice annotation (no file).
func (r *reporter) noticef(format string, args ...any) {
	r.gha.Noticef("%s", fmt.Sprintf(format, safeArgs(args)...))
}

// mask hides s in the rest of the job log.
func (r *reporter) mask(s string) {
	if s = strings.TrimSpace(s); s != "" && !strings.ContainsAny(s, "\r\n") {
		r.gha.AddMask(s)
	}
}

// annotate issues an annotation on a file (and line, when > 0). Properties
// and message are escaped by go-githubactions (%, CR, LF, and : , in
// properties), so a hostile file name stays one property.
func (r *reporter) annotate(level, file string, line int, title, msg string) {
	if r.annotations >= maxAnnotations {
		r.annotations++
		return
	}
	r.annotations++
	fields := map[string]string{}
	if file != "" {
		fields["file"] = file
		if line > 0 {
			fields["line"] = strconv.Itoa(line)
		}
	}
	if title != "" {
		fields["title"] = title
	}
	a := r.gha.WithFieldsMap(fields)
	switch level {
	case "error":
		a.Errorf("%s", msg)
	case "warning":
		a.Warningf("%s", msg)
	default:
		a.Noticef("%s", msg)
	}
}

// flushAnnotations says how many annotations were not issued.
func (r *reporter) flushAnnotations() {
	if n := r.annotations - maxAnnotations; n > 0 {
		r.noticef("%d more findings were not annotated; the job summary and the transparency record list them all", n)
	}
}

// fileCommand runs fn, which writes to the file named by env (GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY), after checking the variable is set; a write failure
// (go-githubactions panics) becomes a warning.
func (r *reporter) fileCommand(env, what string, fn func()) (ok bool) {
	if r.getenv(env) == "" {
		r.warnf("%s is not set, so the %s was not written (run inside a GitHub Actions job to get it)", env, what)
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			r.warnf("could not write the %s to %s: %v", what, env, p)
			ok = false
		}
	}()
	fn()
	return true
}

// setOutputs writes step outputs in order; without GITHUB_OUTPUT they are
// logged instead.
func (r *reporter) setOutputs(kv [][2]string) {
	for _, p := range kv {
		if strings.ContainsAny(p[1], "\r\n") || strings.Contains(p[1], fileCmdDelimiter) {
			r.warnf("output %s was not set: its value spans lines", p[0])
			continue
		}
	}
	if r.getenv("GITHUB_OUTPUT") == "" {
		r.warnf("GITHUB_OUTPUT is not set, so the step outputs were not written; they are:")
		for _, p := range kv {
			r.infof("  %s=%s", p[0], p[1])
		}
		return
	}
	r.fileCommand("GITHUB_OUTPUT", "step outputs", func() {
		for _, p := range kv {
			if strings.ContainsAny(p[1], "\r\n") || strings.Contains(p[1], fileCmdDelimiter) {
				continue
			}
			r.gha.SetOutput(p[0], p[1])
		}
	})
}

// stepSummary appends markdown to the job summary.
func (r *reporter) stepSummary(md string) bool {
	return r.fileCommand("GITHUB_STEP_SUMMARY", "job summary", func() { r.gha.AddStepSummary(md) })
}
