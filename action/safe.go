package action

import (
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/ctxpack/ctxpack/internal/safetext"
)

// sigParam matches a signed URL's signature wherever it appears in text.
var sigParam = regexp.MustCompile(`(?i)([?&](?:amp;)?sig=)[^&\s"'<>]*`)

// redactURL removes the signature (and any other credential-bearing query
// value) from a URL so it can be logged.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return sigParam.ReplaceAllString(raw, "${1}***")
	}
	u.User = nil
	q := u.Query()
	for k := range q {
		switch strings.ToLower(k) {
		case "sig", "signature", "token", "access_token":
			q.Set(k, "***")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// redactText removes signatures from free text (error messages).
func redactText(s string) string { return sigParam.ReplaceAllString(s, "${1}***") }

// redactErr rewrites an error's text without signed URL signatures; a
// *url.Error (which net/http returns with the full URL) keeps its type.
func redactErr(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: redactURL(ue.URL), Err: redactedErr{ue.Err}}
	}
	return redactedErr{err}
}

type redactedErr struct{ err error }

func (e redactedErr) Error() string {
	if e.err == nil {
		return ""
	}
	return redactText(e.err.Error())
}
func (e redactedErr) Unwrap() error { return e.err }

// oneLine makes untrusted text safe for a log line (safetext.Line):
// control characters (newlines, which could start a workflow command such
// as ::set-env, and terminal escapes) are written as visible escapes.
func oneLine(s string) string { return safetext.Line(s) }
