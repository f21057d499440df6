package pack

import (
	"strings"
	"testing"
)

func TestParseTask(t *testing.T) {
	token := "ghp_" + strings.Repeat("Zq7Lm2Xv9", 4)
	tests := []struct {
		name, file, data string
		want             Task
		err              string
	}{
		{name: "markdown", file: "task.md", data: "# Rotate keys\n\nWhy.\n- [ ] done\n", want: Task{Title: "Rotate keys", Body: "Why.\n- [ ] done"}},
		{name: "json", file: "t.json", data: `{"title":"T","goal":"G","acceptance":["a"],"files":["x.go"]}`, want: Task{Title: "T", Goal: "G", Acceptance: []string{"a"}, Files: []string{"x.go"}}},
		{name: "yaml", file: "t.yaml", data: "title: T\nbody: B\n", want: Task{Title: "T", Body: "B"}},
		{name: "json unknown key", file: "t.json", data: `{"title":"x","titel":1}`, err: `task file t.json: unknown key "titel" (keys: title, goal, body, acceptance, files)`},
		{name: "yaml unknown key", file: "t.yml", data: "title: x\ngaol: y\n", err: `task file t.yml: unknown key "gaol"`},
		// A key is repeated only when it cannot be a secret: the message
		// may end up in a CI log.
		{name: "json token key", file: "t.json", data: `{"title":"x","` + token + `":1}`, err: "unknown key (a 40-character text, not shown"},
		{name: "yaml token key", file: "t.yaml", data: "title: x\n" + token + ": 1\n", err: "unknown key (a 40-character text, not shown"},
		{name: "json wrong type", file: "t.json", data: `{"title":["x"]}`, err: "task file t.json: json: cannot unmarshal"},
		{name: "yaml wrong type", file: "t.yaml", data: "title: x\nacceptance: Zq7Lm2Xv9pw\n", err: "cannot unmarshal !!str a value into []string"},
		{name: "empty", file: "t.md", data: "\n\n", err: "empty"},
		{name: "not utf-8", file: "t.md", data: "\xff\xfe", err: "not UTF-8"},
		{name: "too large", file: "t.md", data: strings.Repeat("x", MaxTaskBytes+1), err: "over the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTask(tt.file, []byte(tt.data))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "Zq7Lm2Xv9") {
					t.Fatalf("err = %v repeats the token", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != tt.want.Title || got.Goal != tt.want.Goal || got.Body != tt.want.Body ||
				strings.Join(got.Acceptance, "|") != strings.Join(tt.want.Acceptance, "|") || strings.Join(got.Files, "|") != strings.Join(tt.want.Files, "|") {
				t.Fatalf("ParseTask = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzParseTask: a task file (a user's, or a pull request's text in a
// workflow that writes one) never panics the parser, and an error never
// repeats a long run of letters and digits the file holds.
func FuzzParseTask(f *testing.F) {
	f.Add("t.json", `{"title":"x","ghp_Zq7Lm2Xv9Zq7Lm2Xv9Zq7Lm2Xv9Zq7Lm2Xv9":1}`)
	f.Add("t.yaml", "title: x\nacceptance: [a, b]\n")
	f.Add("t.md", "# T\n- [ ] a\n")
	f.Add("t.yml", "- 1\n")
	f.Fuzz(func(t *testing.T, name, data string) {
		_, err := ParseTask(name, []byte(data))
		if err == nil || !strings.HasSuffix(strings.ToLower(name), ".json") {
			return
		}
		// JSON errors of encoding/json repeat no value; the keys are ours.
		for _, w := range strings.FieldsFunc(data, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') }) {
			if len(w) >= 24 && strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.Contains(err.Error(), w) {
				t.Fatalf("error %q repeats %q", err, w)
			}
		}
	})
}
