package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/store"
)

// Seed 001's tool contract: the actions of each tool and the arguments each
// action takes.
var (
	inputActions  = []string{"list", "get", "write", "ttl", "delete"}
	outputActions = []string{"list", "read"}

	actionFields = map[string]map[string][]string{
		"input": {
			"list":   {"freshness"},
			"get":    {"id", "name", "freshness"},
			"write":  {"id", "name", "expected_revision", "document", "validate_only", "status"},
			"ttl":    {"id", "name", "ttl_minutes", "extend_minutes"},
			"delete": {"id", "name"},
		},
		"output": {
			"list": {"freshness"},
			"read": {"id", "name", "profile", "limit", "offset", "page_token", "contains", "freshness"},
		},
	}

	// legacyActions map a retired action to its replacement.
	legacyActions = map[string]map[string]string{
		"input": {
			"create": "write", "update": "write", "upsert": "write", "put": "write", "patch": "write",
			"finalize": "write", "read": "get",
		},
		"output": {"get": "read", "show": "read", "view": "read"},
	}
	// legacyFields map a retired argument to its replacement ("" = none).
	legacyFields = map[string]map[string]string{
		"input": {
			"op": "", "ops": "", "section": "document", "sections": "document", "content": "document",
			"patch": "document", "append": "document", "set": "document", "path": "document", "value": "document",
			"revision": "expected_revision", "ttl": "ttl_minutes", "extend": "extend_minutes",
		},
		"output": {
			"mode": "profile", "cursor": "page_token", "match": "contains", "format": "",
		},
	}
)

// args are one call's arguments, each kept raw until an action asks for it
// with its type.
type args struct {
	tool   string
	action string
	raw    map[string]json.RawMessage
}

// parseArgs reads a call's arguments and checks them against the contract:
// a known action, no legacy action or argument (each refused with what to
// use instead), no argument the action does not take.
func parseArgs(tool string, data json.RawMessage) (*args, error) {
	a := &args{tool: tool, raw: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) > 0 && string(bytes.TrimSpace(data)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&a.raw); err != nil {
			return nil, invalid(map[string]any{"reason": "arguments must be a JSON object"}, "%s: arguments must be a JSON object", tool)
		}
	}
	allowed := inputActions
	if tool == "output" {
		allowed = outputActions
	}
	rawAction, ok := a.raw["action"]
	if !ok {
		return nil, invalid(map[string]any{"required_fields": []string{"action"}, "allowed_actions": allowed},
			"%s: action is required: one of %s", tool, strings.Join(allowed, ", "))
	}
	if err := json.Unmarshal(rawAction, &a.action); err != nil {
		return nil, invalid(map[string]any{"requested_field": "action", "expected_type": "string", "allowed_actions": allowed},
			"%s: action must be a string: one of %s", tool, strings.Join(allowed, ", "))
	}
	fields, known := actionFields[tool][a.action]
	if !known {
		details := map[string]any{"requested_action": a.action, "allowed_actions": allowed}
		if to, legacy := legacyActions[tool][a.action]; legacy {
			details["supported_action"] = to
			msg := fmt.Sprintf("%s: action %q is retired: use action=%q", tool, a.action, to)
			switch {
			case tool == "input" && a.action == "finalize":
				details["guidance"] = "finalize is input write with status=finalized and the whole document"
				msg += " with status=\"finalized\""
			case tool == "input" && to == "write":
				details["guidance"] = "input write takes the whole document (document-only full-replace snapshot)"
			case tool == "input" && a.action == "read":
				details["guidance"] = "output read renders a pack; input get returns its document"
				msg += " (or output action=\"read\" for the rendered pack)"
			case tool == "output":
				details["guidance"] = "output read: profile replaces mode, page_token replaces cursor, contains replaces match"
			}
			return nil, invalid(details, "%s", msg)
		}
		if tool == "output" && (a.action == "write" || a.action == "ttl" || a.action == "delete") {
			details["supported_tool"] = "input"
			return nil, invalid(details, "output: action %q belongs to the input tool: output has only list and read", clipArg(a.action))
		}
		return nil, invalid(details, "%s: unknown action %q: use one of %s", tool, clipArg(a.action), strings.Join(allowed, ", "))
	}
	take := map[string]bool{"action": true}
	for _, f := range fields {
		take[f] = true
	}
	var extra []string
	for k := range a.raw {
		if !take[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		// The first (by name) is reported; the message lists what the action takes.
		k := extra[0]
		details := map[string]any{"requested_action": a.action, "unsupported_field": clipArg(k), "requested_field": clipArg(k), "supported_fields": fields}
		if to, legacy := legacyFields[tool][k]; legacy {
			switch {
			case tool == "output" && k == "format":
				details["guidance"] = "output is always markdown"
				return nil, invalid(details, "output: format is not an argument: output is always markdown")
			case tool == "input" && (k == "op" || k == "ops"):
				details["allowed_ops"] = []string{}
				details["supported_field"] = "document"
				details["guidance"] = "input write is a document-only full-replace snapshot: send the whole document, with id or name and expected_revision to update"
				return nil, invalid(details, "input: %s is retired: write the whole document (action=\"write\", document={...})", k)
			case to != "":
				details["supported_field"] = to
				msg := fmt.Sprintf("%s: %s is retired: use %s", tool, k, to)
				switch k {
				case "mode":
					details["mapping"] = map[string]string{"full": "reviewer", "compact": "orchestrator"}
					msg += " (mode=full is profile=reviewer)"
				case "match":
					details["guidance"] = "contains is a case-insensitive substring, not a regular expression"
					msg += " (a case-insensitive substring, not a regular expression)"
				case "cursor":
					msg += " (next_page_token from the LEGEND)"
				}
				if tool == "input" && to == "document" {
					details["guidance"] = "input write is a document-only full-replace snapshot"
				}
				return nil, invalid(details, "%s", msg)
			}
		}
		return nil, invalid(details, "%s %s: unsupported argument %q: it takes %s", tool, a.action, clipArg(k), strings.Join(append([]string{"action"}, fields...), ", "))
	}
	return a, nil
}

// str reads a string argument ("" when absent).
func (a *args) str(name string) (string, error) {
	raw, ok := a.raw[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", typeErr(a, name, "string")
	}
	return s, nil
}

// integer reads an integer argument (nil when absent).
func (a *args) integer(name string) (*int, error) {
	raw, ok := a.raw[name]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, typeErr(a, name, "integer")
	}
	return &n, nil
}

// boolean reads a boolean argument (false when absent).
func (a *args) boolean(name string) (bool, error) {
	raw, ok := a.raw[name]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, typeErr(a, name, "boolean")
	}
	return b, nil
}

func typeErr(a *args, name, typ string) error {
	return invalid(map[string]any{"requested_action": a.action, "requested_field": name, "expected_type": typ},
		"%s %s: %s must be a %s", a.tool, a.action, name, typ)
}

func invalid(details map[string]any, format string, args ...any) *store.Error {
	return &store.Error{Kind: store.KindValidation, Code: store.CodeInvalidData, Message: fmt.Sprintf(format, args...), Details: details}
}

// clipArg keeps an unknown name short in messages.
func clipArg(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "…"
	}
	return s
}
