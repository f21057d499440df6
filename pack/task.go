package pack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ctxpack/ctxpack/internal/safetext"
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
		var keys map[string]json.RawMessage
		if json.Unmarshal(data, &keys) == nil {
			if err := unknownTaskKey(name, slices.Collect(maps.Keys(keys))); err != nil {
				return nil, err
			}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(t); err != nil {
			return nil, fmt.Errorf("task file %s: %w (keys: title, goal, body, acceptance, files)", name, err)
		}
	case ".yml", ".yaml":
		var root yaml.Node
		if yaml.Unmarshal(data, &root) == nil && len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
			var keys []string
			for i, n := range root.Content[0].Content {
				if i%2 == 0 {
					keys = append(keys, n.Value)
				}
			}
			if err := unknownTaskKey(name, keys); err != nil {
				return nil, err
			}
		}
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
			return nil, fmt.Errorf("task file %s: %s (keys: title, goal, body, acceptance, files)", name, safetext.YAMLError(strings.TrimPrefix(err.Error(), "yaml: ")))
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

// taskKeys are the keys of a JSON or YAML task file.
var taskKeys = []string{"title", "goal", "body", "acceptance", "files"}

// unknownTaskKey names the first key of keys (in order) a task file may
// not have. The decoders name it too, but whole: a key is the file's text,
// which could be a secret, and the message may end up in a CI log.
func unknownTaskKey(name string, keys []string) error {
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(taskKeys, k) {
			return fmt.Errorf("task file %s: unknown key %s (keys: %s)", name, safetext.Quote(k), strings.Join(taskKeys, ", "))
		}
	}
	return nil
}
