package store

import (
	"errors"
	"fmt"

	"github.com/ctxpack/ctxpack/transparency"
)

// Error kinds and codes of seed 001's v3 error contract. A validation
// failure is kind validation, code invalid_data; a page-token failure is
// code invalid_data with invalid_page_token in its message.
const (
	KindValidation = "validation"
	KindConflict   = "conflict"
	KindNotFound   = "not_found"
	KindInternal   = "internal"

	CodeInvalidData        = "invalid_data"
	CodeAmbiguous          = "ambiguous"
	CodeRevisionConflict   = "revision_conflict"
	CodeFinalizeValidation = "finalize_validation"
	CodeNotFound           = "not_found"
	CodeExpired            = "expired"
	CodeInternal           = "internal_error"
	// InvalidPageToken is in the message of every page-token failure.
	InvalidPageToken = transparency.ReadInvalidPageToken
)

// Error is a failure in seed 001's v3 error contract: kind, code,
// machine-readable details and a message that says the same for people.
// Neither ever holds a secret value.
type Error struct {
	Kind    string         `json:"kind"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func (e *Error) Error() string { return e.Message }

// AsError returns err in the contract's shape: a store or read error as it
// is, anything else as an internal error.
func AsError(err error) *Error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	var re *transparency.ReadError
	if errors.As(err, &re) {
		return &Error{Kind: re.Kind, Code: re.Code, Message: re.Message, Details: orEmpty(re.Details)}
	}
	return &Error{Kind: KindInternal, Code: CodeInternal, Message: err.Error(), Details: map[string]any{}}
}

func orEmpty(d map[string]any) map[string]any {
	if d == nil {
		return map[string]any{}
	}
	return d
}

func invalid(details map[string]any, format string, args ...any) *Error {
	return &Error{Kind: KindValidation, Code: CodeInvalidData, Message: fmt.Sprintf(format, args...), Details: orEmpty(details)}
}

func notFound(details map[string]any, format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Code: CodeNotFound, Message: fmt.Sprintf(format, args...), Details: orEmpty(details)}
}
