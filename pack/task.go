package pack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxTaskBytes bounds a task file.
const MaxTaskBytes = 256 << 10

// ParseTask reads a task file (--task): JSON (.json) or YAML (.yml, .yaml)
// with the keys title, goal, body, acceptance and files, read strictly; any
// other file is markdown or text, whose first line (a "# " heading or not)
// is the title and the rest the body (its checklist items become the
// acceptance criteria).
func ParseTask(name string, data []byte) (*Task, error) {
	if len(data) > MaxTaskBytes {
		return nil, fmt.Errorf("task file %s: %d bytes, over the %d-byte limit", name, len(data), MaxTaskBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("task file %s: not UTF-8 text", name)
	}
	t := &Task{}
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(t); err != nil {
			return nil, fmt.Errorf("task file %s: %w (keys: title, goal, body, acceptance, files)", name, err)
		}
	case ".yml", ".yaml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		var doc struct {
			Title      string   `yaml:"title"`
			Goal       string   `yaml:"goal"`
			Body       string   `yaml:"body"`
			Acceptance []string `yaml:"acceptance"`
			Files      []string `yaml:"files"`
		}
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("task file %s: %s (keys: title, goal, body, acceptance, files)", name, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		*t = Task{Title: doc.Title, Goal: doc.Goal, Body: doc.Body, Acceptance: doc.Acceptance, Files: doc.Files}
	default:
		text := strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n"))
		first, rest, _ := strings.Cut(text, "\n")
		t.Title = strings.TrimSpace(strings.TrimLeft(first, "# "))
		t.Body = strings.TrimSpace(rest)
	}
	if t.Title == "" && t.Goal == "" && t.Body == "" && len(t.Acceptance) == 0 {
		return nil, fmt.Errorf("task file %s: empty: give a title, goal, body or acceptance criteria", name)
	}
	return t, nil
}
