// Package leakcorpus generates a git repository full of realistic synthetic
// secrets, at run time and from a seed, for the leak benchmark
// (bench/cmd/leakbench) and the leak tests: the usual providers' tokens,
// private keys, service accounts and credentialed URLs, and the leak
// classes of issue 13 — files gitleaks allowlists by path (1),
// backslash-escaped strings (2), password forms no key names (3),
// passwords that look like placeholders (4), secrets in names (5) — in
// many file kinds, in unchanged files, in lines a range adds, in a commit a
// later one undoes, in file names, and in the texts the intent and the
// manifest cap (a commit message, a pull request, the README's purpose).
// None of the values was ever issued and none is written in this source.
package leakcorpus

import (
	"encoding/json"
	"fmt"
	"html"
	"path"
	"slices"
	"sort"
	"strings"
)

// Where a secret sits in the repository's history.
const (
	InContent = "content" // a file of the head tree (unchanged in the range, or added by it)
	InDiff    = "diff"    // a line the range adds to a file that existed before
	InCommit  = "commit"  // added by one commit of the range and removed by a later one
	InName    = "name"    // a file or directory name
	// InMessage: the range's commit message or the pull request's title or
	// body (Corpus.Message, PRTitle, PRBody), where the intent caps it.
	InMessage = "message"
)

// Classes of issue 13 (and "provider": a usual provider's token in a usual
// setting).
const (
	ClassProvider    = "provider"
	ClassPath        = "1-allowlisted-path"
	ClassEscaped     = "2-escaped-string"
	ClassForm        = "3-password-form"
	ClassPlaceholder = "4-placeholder-like"
	ClassName        = "5-file-name"
)

// Plant is one planted secret and the strings whose presence in an output
// means it leaked.
type Plant struct {
	Class, Where, Kind, Path, Provider string
	Probes                             []string
}

// Corpus is the generated repository: the files of each commit, and what
// was planted where.
type Corpus struct {
	g      *gen
	Plants []Plant
	// base is the first commit; head changes some files and adds others;
	// interim is what a middle commit adds (files, and lines appended to
	// files of head) that the last commit removes again.
	Base, Head   map[string]string
	Interim      map[string]string
	InterimExtra map[string]string // lines appended to head files in the middle commit
	// Message is the message of the range's first commit; PRTitle and
	// PRBody are the pull request the leak benchmark opens for the range.
	Message         string
	PRTitle, PRBody string
}

// probes of a token: 12-byte windows of its random part, or the whole
// random part when it is short.
func probes(value string, constant int) []string {
	r := value[constant:]
	if len(r) <= 16 {
		return []string{r}
	}
	var out []string
	for i := 0; i+12 <= len(r); i += 6 {
		out = append(out, r[i:i+12])
	}
	return out
}

func (c *Corpus) add(class, where, p, provider string, pr []string) {
	c.Plants = append(c.Plants, Plant{Class: class, Where: where, Kind: kindOf(p), Path: p, Provider: provider, Probes: pr})
}

func (c *Corpus) addToken(class, where, p string, t token) {
	c.add(class, where, p, t.provider, probes(t.value, t.constant))
}

func (c *Corpus) addPassword(class, where, p, pw string) {
	c.add(class, where, p, "password", spellings(pw))
}

// spellings are the forms a value takes in what ctxpack writes: as is, in
// a JSON string (with and without HTML escaping: \u0026, \", \\) and in
// HTML or XML text (&amp;, &lt;, &quot;). A leak in any of them counts.
func spellings(v string) []string {
	out := []string{v}
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, escapeHTML := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		if enc.Encode(v) == nil {
			s := strings.TrimSuffix(b.String(), "\n")
			add(s[1 : len(s)-1])
		}
	}
	add(html.EscapeString(v))
	return out
}

// kindOf is a file's kind: its extension, or its name for files known by
// name (Dockerfile, Makefile, gradlew, …); "" for what is no file (a commit
// message, a pull request).
func kindOf(p string) string {
	if strings.HasPrefix(p, "(") {
		return ""
	}
	base := path.Base(p)
	switch {
	case base == "Dockerfile" || base == "Makefile" || base == "gradlew" || base == "mvnw" || base == "go.mod" ||
		base == "yarn.lock" || base == "Pipfile.lock" || base == "poetry.lock" || base == "package-lock.json":
		return base
	case strings.HasPrefix(base, ".env"):
		return ".env"
	}
	if e := path.Ext(base); e != "" {
		return e
	}
	return base
}

// style is how a file kind assigns a value to a key, and its frame.
type style struct {
	ext        string
	head, foot string
	line       func(key, value string) string
	filler     func(i int) string
}

func keyUpper(provider string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(provider)) + "_TOKEN"
}

var styles = []style{
	{".env", "# service configuration\nAPP_ENV=production\n", "LOG_LEVEL=info\n",
		func(k, v string) string { return k + "=" + v }, func(i int) string { return fmt.Sprintf("FEATURE_%d=on", i) }},
	{".yaml", "service:\n  name: billing\n  settings:\n", "  replicas: 3\n",
		func(k, v string) string { return "    " + strings.ToLower(k) + ": " + v },
		func(i int) string { return fmt.Sprintf("    option_%d: %d", i, i*7) }},
	{".json", "{\n  \"name\": \"billing\",\n", "  \"replicas\": 3\n}\n",
		func(k, v string) string { return "  \"" + strings.ToLower(k) + "\": \"" + v + "\"," },
		func(i int) string { return fmt.Sprintf("  \"option_%d\": %d,", i, i*7) }},
	{".py", "import os\n\n", "\n\ndef main():\n    pass\n",
		func(k, v string) string { return k + " = \"" + v + "\"" },
		func(i int) string { return fmt.Sprintf("RETRIES_%d = %d", i, i) }},
	{".js", "'use strict';\n\n", "\nmodule.exports = {};\n",
		func(k, v string) string { return "const " + k + " = '" + v + "';" },
		func(i int) string { return fmt.Sprintf("const retries%d = %d;", i, i) }},
	{".ts", "import { Client } from './client';\n\n", "\nexport default Client;\n",
		func(k, v string) string { return "export const " + k + ": string = \"" + v + "\";" },
		func(i int) string { return fmt.Sprintf("export const limit%d = %d;", i, i*10) }},
	{".go", "package config\n\n", "\nfunc init() {}\n",
		func(k, v string) string { return "const " + k + " = \"" + v + "\"" },
		func(i int) string { return fmt.Sprintf("const retries%d = %d", i, i) }},
	{".java", "package com.corp.billing;\n\npublic final class Config {\n", "}\n",
		func(k, v string) string { return "    public static final String " + k + " = \"" + v + "\";" },
		func(i int) string { return fmt.Sprintf("    public static final int RETRIES_%d = %d;", i, i) }},
	{".properties", "# billing service\nserver.port=8080\n", "logging.level.root=INFO\n",
		func(k, v string) string { return "billing." + strings.ToLower(k) + "=" + v },
		func(i int) string { return fmt.Sprintf("billing.option%d=%d", i, i) }},
	{".toml", "[service]\nname = \"billing\"\n", "replicas = 3\n",
		func(k, v string) string { return strings.ToLower(k) + " = \"" + v + "\"" },
		func(i int) string { return fmt.Sprintf("option_%d = %d", i, i) }},
	{".tf", "provider \"corp\" {\n  region = \"eu-west-1\"\n", "}\n",
		func(k, v string) string { return "  " + strings.ToLower(k) + " = \"" + v + "\"" },
		func(i int) string { return fmt.Sprintf("  retries_%d = %d", i, i) }},
	{".sh", "#!/usr/bin/env bash\nset -euo pipefail\n", "exec ./bin/server\n",
		func(k, v string) string { return "export " + k + "=\"" + v + "\"" },
		func(i int) string { return fmt.Sprintf("echo step %d", i) }},
	{"Dockerfile", "FROM golang:1.23 AS build\nWORKDIR /src\n", "CMD [\"/app\"]\n",
		func(k, v string) string { return "ENV " + k + "=" + v },
		func(i int) string { return fmt.Sprintf("RUN echo layer %d", i) }},
	{".md", "# Billing\n\nHow to run the service locally.\n\n", "\nThat is all.\n",
		func(k, v string) string { return "Set `" + k + "=" + v + "` before starting." },
		func(i int) string { return fmt.Sprintf("Step %d: read the logs.", i) }},
	{".xml", "<?xml version=\"1.0\"?>\n<configuration>\n  <appSettings>\n", "  </appSettings>\n</configuration>\n",
		func(k, v string) string { return "    <add key=\"" + k + "\" value=\"" + v + "\" />" },
		func(i int) string { return fmt.Sprintf("    <add key=\"Retries%d\" value=\"%d\" />", i, i) }},
	{".php", "<?php\nreturn [\n", "];\n",
		func(k, v string) string { return "    '" + strings.ToLower(k) + "' => '" + v + "'," },
		func(i int) string { return fmt.Sprintf("    'retries_%d' => %d,", i, i) }},
	{".rb", "module Billing\n", "end\n",
		func(k, v string) string { return "  " + k + " = '" + v + "'" },
		func(i int) string { return fmt.Sprintf("  RETRIES_%d = %d", i, i) }},
	{".cs", "namespace Billing;\n\npublic static class Settings\n{\n", "}\n",
		func(k, v string) string { return "    public const string " + k + " = \"" + v + "\";" },
		func(i int) string { return fmt.Sprintf("    public const int Retries%d = %d;", i, i) }},
	{".ini", "[service]\nname = billing\n", "replicas = 3\n",
		func(k, v string) string { return strings.ToLower(k) + " = " + v },
		func(i int) string { return fmt.Sprintf("option_%d = %d", i, i) }},
	{".kt", "package billing\n\n", "\nfun main() {}\n",
		func(k, v string) string { return "const val " + k + " = \"" + v + "\"" },
		func(i int) string { return fmt.Sprintf("const val RETRIES_%d = %d", i, i) }},
}

func (s style) file(lines []string) string {
	return s.head + strings.Join(lines, "\n") + "\n" + s.foot
}

func (s style) pathFor(dir string, i int) string {
	switch s.ext {
	case "Dockerfile":
		return fmt.Sprintf("%s/svc%d/Dockerfile", dir, i)
	case ".env":
		return fmt.Sprintf("%s/svc%d/.env.production", dir, i)
	}
	return fmt.Sprintf("%s/settings_%d%s", dir, i, s.ext)
}

// Build generates the corpus of a seed: the same seed, the same corpus.
func Build(seed uint64) *Corpus {
	g := newGen(seed)
	c := &Corpus{g: g, Base: map[string]string{}, Head: map[string]string{}, Interim: map[string]string{}, InterimExtra: map[string]string{}}
	c.Base[".ctxpack.yml"] = "version: 1\npack:\n  scope: tree\n  type: full\nlimits:\n  max_content_bytes: 50000000\n  max_files: 5000\n  max_file_bytes: 5000000\n"
	c.Base["README.md"] = "# corpus\n\nGenerated by bench/cmd/leakbench.\n"
	c.Base["main.go"] = "package main\n\nfunc main() {}\n"
	c.providerSecrets()
	c.pathClass()
	c.escapedClass()
	c.formClass()
	c.placeholderClass()
	c.nameClass()
	c.keysAndURLs()
	c.markupPasswords()
	c.cappedTexts()
	// Everything in base is in head unless head changes it.
	for p, s := range c.Base {
		if _, ok := c.Head[p]; !ok {
			c.Head[p] = s
		}
	}
	return c
}

// providerSecrets: every provider's token in a head-tree file of every
// style (content), added to an existing file by the range (diff), and in a
// middle commit only (commit).
func (c *Corpus) providerSecrets() {
	gens := c.g.providers()
	si := 0
	next := func() style { s := styles[si%len(styles)]; si++; return s }
	// content: one file per style, unchanged in the range
	for i, gt := range gens {
		s := next()
		t := gt()
		p := s.pathFor("content", i)
		c.Base[p] = s.file([]string{s.filler(1), s.line(keyUpper(t.provider), t.value), s.filler(2)})
		c.addToken(ClassProvider, InContent, p, t)
	}
	// diff: the base file has fillers; the range inserts the secret
	for i, gt := range gens {
		s := next()
		t := gt()
		p := s.pathFor("diffs", i)
		var fill []string
		for k := 1; k <= 12; k++ {
			fill = append(fill, s.filler(k))
		}
		c.Base[p] = s.file(fill)
		withSecret := append(append(append([]string{}, fill[:6]...), s.line(keyUpper(t.provider), t.value)), fill[6:]...)
		c.Head[p] = s.file(withSecret)
		c.addToken(ClassProvider, InDiff, p, t)
	}
	// commit: a scratch file and lines appended to a head file, both
	// taken out again by the last commit
	var scratch []string
	for i, gt := range gens[:20] {
		t := gt()
		if i%2 == 0 {
			scratch = append(scratch, fmt.Sprintf("- try %s with `%s=%s`", t.provider, keyUpper(t.provider), t.value))
			c.addToken(ClassProvider, InCommit, "notes/scratch.md", t)
		} else {
			p := styles[0].pathFor("content", 0) // a head file the middle commit appends to
			c.InterimExtra[p] += keyUpper(t.provider) + "=" + t.value + "\n"
			c.addToken(ClassProvider, InCommit, p, t)
		}
	}
	c.Interim["notes/scratch.md"] = "# scratch\n\n" + strings.Join(scratch, "\n") + "\n"
}

// pathClass: files gitleaks' default config allowlists by path (class 1).
func (c *Corpus) pathClass() {
	g := c.g
	gens := c.g.providers()
	npm := gens[13]()
	pw := func() string { return g.password() }
	p1 := pw()
	c.Base["web/package-lock.json"] = "{\n  \"name\": \"web\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"node_modules/left-pad\": {\n      \"version\": \"1.3.0\",\n" +
		"      \"resolved\": \"https://ci:" + npm.value + "@npm.corp.io/left-pad/-/left-pad-1.3.0.tgz\",\n      \"integrity\": \"sha512-" + g.str(b64, 86) + "==\"\n    }\n  }\n}\n"
	c.addToken(ClassPath, InContent, "web/package-lock.json", npm)
	c.Base["web/yarn.lock"] = "left-pad@^1.3.0:\n  version \"1.3.0\"\n  resolved \"https://deploy:" + p1 + "@registry.corp.io/left-pad/-/left-pad-1.3.0.tgz#" + g.str(hexChars, 40) + "\"\n"
	c.addPassword(ClassPath, InContent, "web/yarn.lock", p1)
	p2 := pw()
	c.Base["api/poetry.lock"] = "[[package]]\nname = \"requests\"\nversion = \"2.32.3\"\n\n[package.source]\ntype = \"legacy\"\nurl = \"https://deploy:" + p2 + "@pypi.corp.io/simple\"\nreference = \"corp\"\n"
	c.addPassword(ClassPath, InContent, "api/poetry.lock", p2)
	p3 := pw()
	c.Base["api/Pipfile.lock"] = "{\n    \"_meta\": {\n        \"sources\": [\n            {\"name\": \"corp\", \"url\": \"https://ci:" + p3 + "@pypi.corp.io/simple\", \"verify_ssl\": true}\n        ]\n    }\n}\n"
	c.addPassword(ClassPath, InContent, "api/Pipfile.lock", p3)
	gh := gens[1]()
	c.Base["go.mod"] = "module corp.io/billing\n\ngo 1.23\n\n// go env -w GOPRIVATE=corp.io; git config url.\"https://oauth2:" + gh.value + "@github.com/\".insteadOf https://github.com/\n\nrequire golang.org/x/sync v0.8.0\n"
	c.addToken(ClassPath, InContent, "go.mod", gh)
	p4 := pw()
	c.Base["gradlew"] = "#!/bin/sh\n# Gradle start up script\nexport ORG_GRADLE_PROJECT_nexusPassword=\"" + p4 + "\"\nexec java -classpath gradle/wrapper/gradle-wrapper.jar org.gradle.wrapper.GradleWrapperMain \"$@\"\n"
	c.addPassword(ClassPath, InContent, "gradlew", p4)
	p5 := pw()
	c.Base["mvnw"] = "#!/bin/sh\n# Maven wrapper\nMVNW_USERNAME=ci\nMVNW_PASSWORD=" + p5 + "\nexec java -jar .mvn/wrapper/maven-wrapper.jar \"$@\"\n"
	c.addPassword(ClassPath, InContent, "mvnw", p5)
	gk := gens[8]()
	c.Base["static/js/jquery-3.7.1.min.js"] = "/*! jQuery v3.7.1 */!function(e,t){\"use strict\";var n={apiKey:\"" + gk.value + "\",version:\"3.7.1\"};e.cfg=n}(window);\n"
	c.addToken(ClassPath, InContent, "static/js/jquery-3.7.1.min.js", gk)
	st := gens[24]()
	c.Base["static/js/bootstrap.bundle.min.js"] = "/*! Bootstrap v5.3.3 */(function(){window.SENTRY_AUTH_TOKEN=\"" + st.value + "\";})();\n"
	c.addToken(ClassPath, InContent, "static/js/bootstrap.bundle.min.js", st)
	sk := gens[6]()
	c.Base["static/js/angular.min.js"] = "/* AngularJS v1.8.3 */(function(w){w.STRIPE=\"" + sk.value + "\"})(window);\n"
	c.addToken(ClassPath, InContent, "static/js/angular.min.js", sk)
	oa := gens[11]()
	c.Base["static/swagger-ui-bundle.js"] = "window.onload = function() { SwaggerUIBundle({ url: \"/openapi.json\", apiKey: \"" + oa.value + "\" }) }\n"
	c.addToken(ClassPath, InContent, "static/swagger-ui-bundle.js", oa)
	gl := gens[3]()
	c.Base["config/gitleaks.toml"] = "# local notes, not a gitleaks config\n[ci]\ntoken = \"" + gl.value + "\"\n"
	c.addToken(ClassPath, InContent, "config/gitleaks.toml", gl)
}

// escapedClass: secrets inside backslash-escaped strings (class 2).
func (c *Corpus) escapedClass() {
	g := c.g
	gens := g.providers()
	oa, hf := gens[11](), gens[20]()
	pw1 := g.password()
	nb := "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n" +
		"    \"import openai, psycopg2\\n\",\n    \"openai.api_key = \\\"" + oa.value + "\\\"\\n\",\n" +
		"    \"conn = psycopg2.connect(host=\\\"db\\\", user=\\\"ml\\\", password=\\\"" + pw1 + "\\\")\\n\"\n   ]\n  },\n" +
		"  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 2,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\"%env HF_TOKEN=" + hf.value + "\\n\"]\n  }\n" +
		" ],\n \"metadata\": {\"kernelspec\": {\"name\": \"python3\"}},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
	c.Base["notebooks/train.ipynb"] = nb
	c.addToken(ClassEscaped, InContent, "notebooks/train.ipynb", oa)
	c.addPassword(ClassEscaped, InContent, "notebooks/train.ipynb", pw1)
	c.addToken(ClassEscaped, InContent, "notebooks/train.ipynb", hf)

	tok := g.str(alnum, 40)
	pw2 := g.password()
	out := "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 3,\n   \"metadata\": {},\n   \"source\": [\"resp = login()\\n\", \"resp.json()\"],\n" +
		"   \"outputs\": [{\"output_type\": \"execute_result\", \"execution_count\": 3, \"metadata\": {}, \"data\": {\"text/plain\": [\"{\\\"access_token\\\": \\\"" + tok + "\\\", \\\"expires_in\\\": 3600}\"]}}]\n  },\n" +
		"  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 4,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\"!mysql -h db -u report -p" + pw2 + " reports < q.sql\\n\"]\n  }\n" +
		" ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"
	c.Base["notebooks/report.ipynb"] = "{\"cells\": [], \"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 5}\n"
	c.Head["notebooks/report.ipynb"] = out // added by the range: a diff of a notebook
	c.add(ClassEscaped, InDiff, "notebooks/report.ipynb", "access-token", []string{tok[:12], tok[12:24], tok[24:36]})
	c.addPassword(ClassEscaped, InDiff, "notebooks/report.ipynb", pw2)

	bearer := g.str(alnum, 48)
	pw3, pw4 := g.password(), g.password()
	gl := gens[3]()
	c.Base["deploy/pipeline.json"] = "{\n  \"steps\": [\n    {\"name\": \"smoke\", \"run\": \"curl -H \\\"Authorization: Bearer " + bearer + "\\\" https://api.corp.io/health\"},\n" +
		"    {\"name\": \"migrate\", \"env\": \"DATABASE_URL=\\\"postgres://app:" + pw3 + "@db.corp.io:5432/app\\\"\"},\n" +
		"    {\"name\": \"deploy\", \"run\": \"DEPLOY_TOKEN=\\\"" + gl.value + "\\\" ./deploy.sh\"}\n  ]\n}\n"
	c.add(ClassEscaped, InContent, "deploy/pipeline.json", "bearer", probes(bearer, 0))
	c.addPassword(ClassEscaped, InContent, "deploy/pipeline.json", pw3)
	c.addToken(ClassEscaped, InContent, "deploy/pipeline.json", gl)
	c.Base["k8s/app-config.yaml"] = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  config.json: \"{\\\"db\\\": {\\\"user\\\": \\\"app\\\", \\\"password\\\": \\\"" + pw4 + "\\\"}}\"\n"
	c.addPassword(ClassEscaped, InContent, "k8s/app-config.yaml", pw4)
	key, body := g.pem("RSA")
	c.Base["deploy/tls.json"] = "{\"cert\": \"/etc/tls/cert.pem\", \"key\": \"" + strings.ReplaceAll(key, "\n", "\\n") + "\"}\n"
	c.add(ClassEscaped, InContent, "deploy/tls.json", "private-key", body)
	dp := gens[19]()
	c.Base["web/package.json"] = "{\n  \"name\": \"web\",\n  \"scripts\": {\n    \"deploy\": \"DOPPLER_TOKEN=\\\"" + dp.value + "\\\" doppler run -- node deploy.js\"\n  },\n  \"dependencies\": {\"pbkdf2-password\": \"^1.2.1\"}\n}\n"
	c.addToken(ClassEscaped, InContent, "web/package.json", dp)
}

// formClass: password forms no key names (class 3).
func (c *Corpus) formClass() {
	g := c.g
	type form struct{ path, tmpl string }
	forms := []form{
		{"scripts/release.sh", "#!/bin/sh\ndocker login -u ci-bot -p {S} registry.corp.io\n"},
		{".github/workflows/push.yml", "on: push\njobs:\n  push:\n    runs-on: ubuntu-latest\n    steps:\n      - run: docker login -u ci -p {S} ghcr.io\n"},
		{"ops/Makefile", "login:\n\tpodman login --username ci --password {S} quay.io\n"},
		{"ci/login.sh", "echo '{S}' | docker login -u ci --password-stdin registry.corp.io\n"},
		{"db/Makefile", "restore:\n\tmysql -uroot -p{S} orders < dump.sql\n"},
		{"tools/backup.py", "import subprocess\nsubprocess.run([\"mysqldump\", \"-uroot\", \"-p{S}\", \"orders\"], check=True)\n"},
		{"tools/sync.py", "import os\nos.system(\"mysql -h db -u app -p{S} app < schema.sql\")\n"},
		{"deploy/ssh.sh", "sshpass -p '{S}' ssh deploy@10.0.0.5 'systemctl restart app'\n"},
		{"nginx/Dockerfile", "FROM nginx:1.27\nRUN htpasswd -bc /etc/nginx/.htpasswd admin {S}\n"},
		{"docs/auth.md", "Create the entry with `htpasswd -nbB admin {S}`.\n"},
		{"ops/flush.sh", "redis-cli -h cache -a {S} FLUSHALL\n"},
		{"docs/api.md", "```\ncurl -u admin:{S} https://api.corp.io/v1/users\n```\n"},
		{"certs/make.sh", "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{S}\n"},
		{"android/sign.sh", "keytool -genkey -alias app -keystore app.jks -storepass {S}\n"},
		{"db/restore.sh", "pg_restore --dbname=app --password={S} dump.sql\n"},
		{"ops/backup.sh", "smbclient //nas/backup -U svc%{S} -c 'put db.tar'\n"},
		{"db/run.sh", "sqlplus scott/{S}@orcl @migrate.sql\n"},
		{"ops/ldap.sh", "ldapsearch -x -D cn=admin,dc=corp -w {S} -b dc=corp\n"},
		{"internal/db/dsn.go", "package db\n\nconst dsn = \"orders:{S}@tcp(db.corp.io:3306)/orders?parseTime=true\"\n"},
		{"cmd/migrate/main.go", "package main\n\nvar dsn = \"root:{S}@/app\"\n\nfunc main() {}\n"},
		{"Api/appsettings.json", "{\"ConnectionStrings\": {\"Default\": \"Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;Pwd={{S}};\"}}\n"},
		{"Legacy/app.config", "<configuration>\n  <add name=\"db\" connectionString=\"Provider=Microsoft.ACE.OLEDB.12.0;Jet OLEDB:Database Password={S};\" />\n</configuration>\n"},
		{"src/main/resources/oracle.properties", "spring.datasource.url=jdbc:oracle:thin:scott/{S}@db.corp.io:1521:ORCL\n"},
		{"reports/client.py", "import requests\nresp = requests.get(url, auth=(\"svc-reports\", \"{S}\"))\n"},
		{"mail/mailer.py", "server.login(\"noreply@corp.io\", \"{S}\")\n"},
		{"api/basic.py", "session.auth = HTTPBasicAuth(user, '{S}')\n"},
		{"client/client.go", "package client\n\nfunc sign() { req.SetBasicAuth(\"svc\", \"{S}\") }\n"},
		{"Mail/Mailer.cs", "var cred = new NetworkCredential(\"svc\", \"{S}\");\n"},
		{"fr/config.py", "mot_de_passe = \"{S}\"\n"},
		{"es/config.yaml", "base_de_datos:\n  usuario: app\n  contraseña: {S}\n"},
		{"de/app.properties", "db.benutzer=app\ndb.passwort={S}\n"},
		{"br/settings.py", "SENHA = '{S}'\n"},
		{"ru/config.yml", "пароль: \"{S}\"\n"},
		{"de/setup.ini", "[Datenbank]\nKennwort = {S}\n"},
		{"zh/config.yaml", "数据库:\n  密码: {S}\n"},
		{"conf/app.ini", "[database]\nhost = db\nuser = app\npassword = {S}\n"},
		{"conf/db.properties", "db.user app\ndb.password {S}\n"},
		{"conf/jdbc.properties", "jdbc.password: {S}\n"},
	}
	for i, f := range forms {
		pw := g.password()
		content := strings.ReplaceAll(f.tmpl, "{S}", pw)
		where := InContent
		if i%3 == 1 {
			// the range adds it: a diff of a file that existed
			c.Base[f.path] = "# " + path.Base(f.path) + "\n"
			c.Head[f.path] = "# " + path.Base(f.path) + "\n" + content
			where = InDiff
			if strings.HasSuffix(f.path, ".json") {
				c.Base[f.path] = "{}\n"
				c.Head[f.path] = content
			}
		} else {
			c.Base[f.path] = content
		}
		c.addPassword(ClassForm, where, f.path, pw)
	}
}

// markupPasswords: passwords with the characters outputs escape (&, <, >,
// ", \), in formats that take them literally (class 3): a leak in an
// escaped spelling is a leak too (spellings).
func (c *Corpus) markupPasswords() {
	g := c.g
	forms := []struct{ path, tmpl string }{
		{"conf/smtp.yaml", "smtp:\n  host: mail.corp.io\n  password: '{S}'\n"},
		{"conf/legacy.ini", "[mail]\nuser = app\npassword = {S}\n"},
		{"conf/relay.yaml", "relay:\n  password: '{S}'\n"},
		{"conf/queue.ini", "[queue]\npassword = {S}\n"},
	}
	for i, f := range forms {
		pw := g.str(upper, 1) + g.str(lower+digits, 9) + g.str("&<>", 1) + g.str(lower, 2) + g.str(`"\`, 1) + g.str(digits, 2)
		content := strings.ReplaceAll(f.tmpl, "{S}", pw)
		where := InContent
		if i%2 == 1 {
			c.Base[f.path] = "\n"
			c.Head[f.path] = content
			where = InDiff
		} else {
			c.Base[f.path] = content
		}
		c.addPassword(ClassForm, where, f.path, pw)
	}
}

// placeholderClass: real passwords the placeholder heuristics took for
// examples (class 4).
func (c *Corpus) placeholderClass() {
	g := c.g
	vals := []struct{ path, tmpl, value string }{
		{"iis/web.config", "<configuration><appSettings><add key=\"AdminPassword\" value=\"{S}\" /></appSettings></configuration>\n", "AdminPassword" + g.str(digits, 3) + g.str(symbols, 1)},
		{"svc/.env.staging", "AdminPassword={S}\n", "AdminPassword" + g.str(digits, 4)},
		{"svc/config.yaml", "db_password: {S}\n", "myS3cret" + g.str(alnum, 4) + "Pwd"},
		{"svc/settings.py", "DB_PASSWORD = \"{S}\"\n", "my" + g.pick("Summer", "Harbor", "Falcon") + "Secret" + g.pick("Pwd", "Pass")},
		{"svc/app.ini", "[db]\npwd = {S}\n", g.pick("Winter", "Autumn") + g.str(digits, 4) + "Pwd"},
		{"svc/proxy.yml", "proxy_password: {S}\n", "http" + g.str(digits, 1) + "Proxy" + g.str(symbols, 1) + g.str(alnum, 5)},
		{"svc/app.toml", "admin_password = \"{S}\"\n", "Admin" + g.str(symbols, 1) + g.str(digits, 4) + g.str(lower, 3)},
		{"svc/secrets.json", "{\"api_token\": \"{S}\"}\n", "your" + g.str(alnum, 10) + g.str(digits, 2)},
		{"svc/deploy.sh", "export REGISTRY_PASSWORD='{S}'\n", "password" + g.str(digits, 3) + g.str(symbols, 1) + g.str(upper, 2)},
		{"svc/Settings.cs", "const string SmtpPassword = \"{S}\";\n", "Smtp" + g.str(alnum, 6) + "Password" + g.str(digits, 2)},
	}
	for i, v := range vals {
		content := strings.ReplaceAll(v.tmpl, "{S}", v.value)
		where := InContent
		if i%2 == 1 {
			c.Base[v.path] = "\n"
			c.Head[v.path] = content
			where = InDiff
		} else {
			c.Base[v.path] = content
		}
		c.addPassword(ClassPlaceholder, where, v.path, v.value)
	}
}

// nameClass: secrets in file and directory names (class 5), in the head
// tree and in a middle commit only.
func (c *Corpus) nameClass() {
	gens := c.g.providers()
	for i, pick := range []int{1, 0, 13, 6, 11, 18} { // github, aws, npm, stripe, openai, vault
		t := gens[pick]()
		var p string
		switch i {
		case 0:
			p = "keys/" + t.value + ".json"
		case 1:
			p = "certs/" + t.value + ".txt"
		case 2:
			p = "config/token-" + t.value + ".txt"
		case 3:
			p = "exports/" + t.value + ".csv"
		case 4:
			p = "logs/" + t.value + "/run.txt"
		case 5:
			p = "deploy/" + t.value + "/values.yaml"
		}
		c.Head[p] = "placeholder content\n"
		if i%2 == 1 {
			c.Base[p] = "placeholder content\n"
		}
		c.addToken(ClassName, InName, p, t)
	}
	for _, pick := range []int{0, 3, 1, 23} { // aws, gitlab, github, grafana
		t := gens[pick]()
		p := "tmp/" + t.value + ".txt"
		c.Interim[p] = "scratch\n"
		c.addToken(ClassName, InCommit, p, t)
	}
}

// keysAndURLs: private keys, service accounts, AWS key pairs and
// credentialed URLs in their usual files.
func (c *Corpus) keysAndURLs() {
	g := c.g
	for i, k := range []struct{ path, kind, frame string }{
		{"deploy/bootstrap.yaml", "EC", "users:\n  - name: deploy\n    ssh_key: |\n      {K}\n"},
		{"ansible/files/deploy_key.txt", "OPENSSH", "{K}\n"},
		{"src/test/resources/signing.txt", "RSA", "{K}\n"},
		{"config/jwt.ts", "", "export const signingKey = `{K}`;\n"},
	} {
		key, body := g.pem(k.kind)
		key = strings.ReplaceAll(key, "BEGIN  PRIVATE", "BEGIN PRIVATE")
		key = strings.ReplaceAll(key, "END  PRIVATE", "END PRIVATE")
		if strings.HasSuffix(k.path, ".yaml") {
			key = strings.ReplaceAll(key, "\n", "\n      ")
		}
		content := strings.ReplaceAll(k.frame, "{K}", key)
		where := InContent
		if i == 3 {
			c.Base[k.path] = "export const signingKey = '';\n"
			c.Head[k.path] = content
			where = InDiff
		} else {
			c.Base[k.path] = content
		}
		c.add(ClassProvider, where, k.path, "private-key", body)
	}
	sa, body := g.serviceAccount()
	c.Base["deploy/gcp-sa.json"] = sa
	c.add(ClassProvider, InContent, "deploy/gcp-sa.json", "gcp-service-account", body)

	id, secret := g.providers()[0](), g.awsSecret()
	c.Base["infra/main.tf"] = "provider \"aws\" {\n  region     = \"eu-west-1\"\n  access_key = \"" + id.value + "\"\n  secret_key = \"" + secret + "\"\n}\n"
	c.addToken(ClassProvider, InContent, "infra/main.tf", id)
	c.add(ClassProvider, InContent, "infra/main.tf", "aws-secret-key", probes(secret, 0))
	id2, secret2 := g.providers()[0](), g.awsSecret()
	c.Base["config/aws.ini"] = "[default]\nregion = eu-west-1\n"
	c.Head["config/aws.ini"] = "[default]\nregion = eu-west-1\naws_access_key_id = " + id2.value + "\naws_secret_access_key = " + secret2 + "\n"
	c.addToken(ClassProvider, InDiff, "config/aws.ini", id2)
	c.add(ClassProvider, InDiff, "config/aws.ini", "aws-secret-key", probes(secret2, 0))

	acct := g.str(lower, 10)
	azKey := g.str(b64, 86) + "=="
	c.Base["Api/appsettings.Production.json"] = "{\n  \"Storage\": \"DefaultEndpointsProtocol=https;AccountName=" + acct + ";AccountKey=" + azKey + ";EndpointSuffix=core.windows.net\"\n}\n"
	c.add(ClassProvider, InContent, "Api/appsettings.Production.json", "azure-storage", probes(azKey, 0))

	for i, u := range []struct{ path, tmpl string }{
		{"config/database.yml", "production:\n  adapter: postgresql\n  url: postgres://orders:{S}@db.corp.io:5432/orders\n"},
		{"svc/.env.local", "MONGODB_URI=mongodb+srv://app:{S}@cluster0.corp.mongodb.net/app?retryWrites=true\n"},
		{"docker-compose.yml", "services:\n  worker:\n    image: worker:1\n    environment:\n      REDIS_URL: redis://:{S}@cache:6379/0\n"},
		{"app/settings.py", "CELERY_BROKER_URL = \"amqp://app:{S}@mq.corp.io:5672/app\"\n"},
		{"src/main/resources/application.properties", "spring.datasource.url=jdbc:mysql://db.corp.io:3306/app\nspring.datasource.username=app\nspring.datasource.password={S}\n"},
		{"deploy/values.yaml", "database:\n  url: mysql://root:{S}@mysql:3306/app\n"},
	} {
		pw := g.password()
		content := strings.ReplaceAll(u.tmpl, "{S}", pw)
		where := InContent
		if i%2 == 1 {
			c.Base[u.path] = "# " + u.path + "\n"
			c.Head[u.path] = content
			where = InDiff
		} else {
			c.Base[u.path] = content
		}
		c.addPassword(ClassProvider, where, u.path, pw)
	}
}

// cappedTexts: secrets where the intent or the manifest caps a text — a
// token at the end of a long commit subject and pull request title, a
// private key whose END line is past the cap of a commit body, a pull
// request body and the README's purpose paragraph. A cap before the scan
// left their first part, which no rule recognises.
func (c *Corpus) cappedTexts() {
	g := c.g
	gens := g.providers()
	// at pads a token so that a cap of n runes falls 14 characters into
	// its random part.
	at := func(t token, n int) string {
		return "Rotate the deploy credentials " + strings.Repeat("x", n-31-t.constant-14) + " " + t.value
	}
	subject, title := gens[1](), gens[13]() // github, npm
	key, body := g.pem("RSA")
	c.Message = at(subject, 200) + "\n\n" + strings.Repeat("The deploy job reads the key below. ", 20) + "\n" + key + "\n"
	c.addToken(ClassProvider, InMessage, "(commit message)", subject)
	c.add(ClassProvider, InMessage, "(commit message)", "private-key", body)
	prKey, prBody := g.pem("OPENSSH")
	c.PRTitle = at(title, 300)
	c.PRBody = strings.Repeat("This pull request rotates the deploy key. ", 90) + "\n" + prKey + "\n"
	c.addToken(ClassProvider, InMessage, "(pull request)", title)
	c.add(ClassProvider, InMessage, "(pull request)", "private-key", prBody)
	readmeKey, readmeBody := g.pem("EC")
	c.Base["README.md"] = "# corpus\n\nDeploys with the deploy key\n" + readmeKey + "\n\nGenerated by bench/cmd/leakbench.\n"
	c.add(ClassProvider, InContent, "README.md", "private-key", readmeBody)
}

// Kinds lists the file kinds that hold a planted secret.
func (c *Corpus) Kinds() []string {
	set := map[string]bool{}
	for _, p := range c.Plants {
		if p.Kind != "" {
			set[p.Kind] = true
		}
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
