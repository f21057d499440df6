package pipeline

import (
	"context"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"

	"github.com/ctxpack/ctxpack/internal/gittest"
	"github.com/ctxpack/ctxpack/internal/secrettest"
)

// TestRedactedFilesStillParse: redaction replaces exactly the secret, so a
// JSON, notebook, YAML or TOML file with secrets in every usual place
// (quoted and plain values, escaped strings, block scalars, URLs, keys with
// a hyphen) still parses after it, with the same keys, and holds no part of
// a secret.
func TestRedactedFilesStillParse(t *testing.T) {
	f := secrettest.Make(505)
	g := secrettest.NewGen(505)
	pw := g.Str(secrettest.Alnum, 14) + "+/x"
	jsonPEM := strings.ReplaceAll(f.RSAKey, "\n", `\n`)
	yamlPEM := "    " + strings.ReplaceAll(f.RSAKey, "\n", "\n    ")
	files := map[string]string{
		"config/app.json": `{
  "github_token": "` + f.GitHub + `",
  "db": {"url": "postgres://app:` + pw + `@db.internal:5432/app", "password": "` + pw + `"},
  "private_key": "` + jsonPEM + `",
  "env": ["SLACK_TOKEN=` + f.Slack + `", "API_KEY=\"` + f.APIKey + `\""],
  "stripe": "` + f.Stripe + `"
}
`,
		"analysis.ipynb": `{
 "cells": [
  {"cell_type": "code", "metadata": {}, "outputs": [],
   "source": ["import stripe\n", "stripe.api_key = \"` + f.Stripe + `\"\n", "aws_secret_access_key = \"` + f.AWSSecret + `\"\n"]}
 ],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5
}
`,
		"deploy/values.yaml": `image: app:1.2.3
env:
  AWS_ACCESS_KEY_ID: ` + f.AWSKeyID + `
  AWS_SECRET_ACCESS_KEY: "` + f.AWSSecret + `"
  db-password: ` + pw + `
  SLACK_TOKEN: '` + f.Slack + `'
tokens: [` + f.GitHub + `, other]
tls:
  key: |
` + yamlPEM + `
database_url: postgres://app:` + pw + `@db:5432/app
next_key: after
`,
		".github/workflows/deploy.yml": `on: push
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - run: docker login -u ci -p ` + pw + ` ghcr.io
      - run: 'curl -H "Authorization: token ` + f.GitHub + `" https://api.github.com'
`,
		"config/settings.toml": `[service]
api_key = "` + f.APIKey + `"
stripe = "` + f.Stripe + `"

[database]
password = "` + pw + `"
url = "mysql://root:` + pw + `@db/app"
key = """
` + f.RSAKey + `
"""
`,
	}
	repo := gittest.New(t)
	for p, c := range files {
		repo.Write(p, c)
	}
	repo.Commit("configs")
	run, err := Execute(context.Background(), PackOptions{Dir: repo.Dir})
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{f.GitHub, f.Stripe, f.Slack, f.AWSKeyID, f.AWSSecret, f.APIKey, pw}
	secrets = append(secrets, strings.Split(f.RSAKey, "\n")[1:12]...)
	assertNoFragment(t, "pack", run.Result.JSON, secrets)
	sent := map[string]string{}
	for _, it := range append(run.Result.Pack.KeyFiles, run.Result.Pack.Contents...) {
		sent[it.Path] = it.Content
	}
	for p, orig := range files {
		red, ok := sent[p]
		if !ok {
			t.Errorf("%s not sent", p)
			continue
		}
		if red == orig || !strings.Contains(red, "[REDACTED:") {
			t.Errorf("%s: nothing redacted", p)
		}
		before, err1 := parseKeys(p, orig)
		after, err2 := parseKeys(p, red)
		if err1 != nil {
			t.Fatalf("%s: fixture: %v", p, err1)
		}
		if err2 != nil {
			t.Errorf("%s: redacted text does not parse: %v\n%s", p, err2, red)
			continue
		}
		if before != after {
			t.Errorf("%s: keys changed:\n before %s\n after  %s\n%s", p, before, after, red)
		}
		if strings.Count(red, "\n") != strings.Count(orig, "\n")-redactedLineBreaks(orig) {
			t.Errorf("%s: a line break was eaten:\n%s", p, red)
		}
	}
}

// redactedLineBreaks is how many line breaks multi-line secrets (PEM keys)
// took with them: the lines between their BEGIN and END lines.
func redactedLineBreaks(orig string) int {
	n := 0
	for _, block := range strings.Split(orig, "-----BEGIN")[1:] {
		if end := strings.Index(block, "PRIVATE KEY-----"); end >= 0 {
			if e2 := strings.Index(block[end+1:], "PRIVATE KEY-----"); e2 >= 0 {
				n += strings.Count(block[:end+1+e2], "\n")
			}
		}
	}
	return n
}

// parseKeys parses text as its kind and returns its keys, sorted and
// joined, at every depth.
func parseKeys(p, text string) (string, error) {
	var v any
	var err error
	switch path.Ext(p) {
	case ".json", ".ipynb":
		err = json.Unmarshal([]byte(text), &v)
	case ".yml", ".yaml":
		err = yaml.Unmarshal([]byte(text), &v)
	case ".toml":
		err = toml.Unmarshal([]byte(text), &v)
	}
	if err != nil {
		return "", err
	}
	var keys []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				keys = append(keys, prefix+"."+k)
				walk(prefix+"."+k, x)
			}
		case []any:
			for _, x := range t {
				walk(prefix+"[]", x)
			}
		}
	}
	walk("", v)
	sort.Strings(keys)
	return strings.Join(keys, " "), nil
}
