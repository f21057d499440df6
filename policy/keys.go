package policy

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxpack/ctxpack/internal/safetext"
	"gopkg.in/yaml.v3"
)

// fieldsOf lists the yaml keys of a struct type.
func fieldsOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// checkKeys walks a mapping node against a struct type and reports the first
// unknown key with its full dotted name and line, so typos never fall back to
// defaults silently.
func checkKeys(file, prefix string, node *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
				return nil
			}
			return &Error{File: file, Line: node.Line, Key: strings.TrimSuffix(prefix, "."), Msg: "must be a mapping of keys"}
		}
		known := map[string]reflect.Type{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			known[name] = f.Type
			names = append(names, name)
		}
		sort.Strings(names)
		seen := map[string]bool{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			ft, ok := known[k.Value]
			if !ok {
				return &Error{File: file, Line: k.Line, Key: prefix + k.Value,
					Msg: fmt.Sprintf("unknown key; known keys here are %s", strings.Join(names, ", "))}
			}
			if seen[k.Value] {
				return &Error{File: file, Line: k.Line, Key: prefix + k.Value, Msg: "key appears twice"}
			}
			seen[k.Value] = true
			if err := checkKeys(file, prefix+k.Value+".", v, ft); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if node.Kind != yaml.SequenceNode {
			if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
				return nil
			}
			return &Error{File: file, Line: node.Line, Key: strings.TrimSuffix(prefix, "."), Msg: "must be a list"}
		}
		base := strings.TrimSuffix(prefix, ".")
		for i, item := range node.Content {
			if err := checkKeys(file, fmt.Sprintf("%s[%d].", base, i), item, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

var yamlLineErr = regexp.MustCompile(`line (\d+): (.*)`)

// typeError turns a yaml.v3 decode error into an Error naming the key at that line.
func typeError(file string, root *yaml.Node, err error) error {
	msg := err.Error()
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	m := yamlLineErr.FindStringSubmatch(msg)
	if m == nil {
		return &Error{File: file, Msg: safetext.YAMLError(msg)}
	}
	var line int
	fmt.Sscanf(m[1], "%d", &line)
	return &Error{File: file, Line: line, Key: keyAtLine(root, "", line), Msg: "wrong type: " + safetext.YAMLError(m[2])}
}

// keyAtLine finds the dotted key whose key or value sits on a line.
func keyAtLine(node *yaml.Node, prefix string, line int) string {
	switch node.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			if found := keyAtLine(v, prefix+k.Value+".", line); found != "" {
				return found
			}
			if k.Line == line || v.Line == line {
				return prefix + k.Value
			}
		}
	case yaml.SequenceNode:
		base := strings.TrimSuffix(prefix, ".")
		for i, item := range node.Content {
			if found := keyAtLine(item, fmt.Sprintf("%s[%d].", base, i), line); found != "" {
				return found
			}
			if item.Line == line {
				return fmt.Sprintf("%s[%d]", base, i)
			}
		}
	}
	return ""
}

// lookup returns the value node of a dotted key, or nil.
func lookup(root *yaml.Node, key string) *yaml.Node {
	node := root
	for _, part := range strings.Split(key, ".") {
		if node == nil || node.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == part {
				next = node.Content[i+1]
			}
		}
		node = next
	}
	return node
}

// lineOf is the line of a dotted key's value, 0 when the key is absent (a default).
func lineOf(root *yaml.Node, key string) int {
	if n := lookup(root, key); n != nil {
		return n.Line
	}
	return 0
}

// seqLine is the line of the i-th item of a list key.
func seqLine(root *yaml.Node, key string, i int) int {
	n := lookup(root, key)
	if n == nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
		return lineOf(root, key)
	}
	return n.Content[i].Line
}
