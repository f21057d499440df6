package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestScriptIsPOSIXSh(t *testing.T) {
	for _, bin := range []string{"", "/opt/ctx pack/bin/ctxpack", "/tmp/it's/ctxpack"} {
		script := Script(bin)
		if !IsOurs(script) || !strings.HasPrefix(string(script), "#!/bin/sh\n") {
			t.Fatalf("script for %q lacks the shebang or marker", bin)
		}
		f := filepath.Join(t.TempDir(), "pre-push")
		if err := os.WriteFile(f, script, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
			t.Fatalf("sh -n: %v\n%s", err, out)
		}
		if _, err := exec.LookPath("shellcheck"); err == nil {
			if out, err := exec.Command("shellcheck", "-s", "sh", f).CombinedOutput(); err != nil {
				t.Fatalf("shellcheck: %v\n%s", err, out)
			}
		}
		// The recorded path reads back exactly.
		out, err := exec.Command("sh", "-c", `eval "$(grep '^ctxpack_bin=' "$1")"; printf %s "$ctxpack_bin"`, "sh", f).Output()
		if err != nil || string(out) != bin {
			t.Fatalf("ctxpack_bin = %q, %v; want %q", out, err, bin)
		}
	}
}

func TestParseUpdates(t *testing.T) {
	z40, z64 := strings.Repeat("0", 40), strings.Repeat("0", 64)
	a40, b64 := strings.Repeat("a", 40), strings.Repeat("B", 64)
	in := "refs/heads/main " + a40 + " refs/heads/main " + z40 + "\r\n\n" +
		"(delete) " + z64 + " refs/heads/x " + b64 + "\n"
	us, err := ParseUpdates(strings.NewReader(in))
	if err != nil || len(us) != 2 {
		t.Fatalf("%v %v", us, err)
	}
	if !us[0].New() || us[0].Deleted() || !us[1].Deleted() || us[1].RemoteSHA != strings.ToLower(b64) {
		t.Fatalf("%+v", us)
	}
	for _, bad := range []string{"refs/heads/main " + a40 + " refs/heads/main\n", "a b c d\n", "refs/heads/main " + a40[:39] + " r " + z40 + "\n"} {
		if _, err := ParseUpdates(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestTemporaryBuildAndExpand(t *testing.T) {
	for exe, want := range map[string]bool{
		"/tmp/go-build123/b001/exe/ctxpack": true,
		"/tmp/x/ctxpack.test":               true,
		"/usr/local/bin/ctxpack":            false,
		"/home/me/go/bin/ctxpack":           false,
	} {
		if got := temporaryBuild(exe); got != want {
			t.Errorf("temporaryBuild(%s) = %v", exe, got)
		}
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	if p, _ := expandPath("~/hooks"); p != filepath.Join(home, "hooks") {
		t.Fatal(p)
	}
	if p, _ := expandPath("rel/hooks"); p != "rel/hooks" {
		t.Fatal(p)
	}
	if _, err := expandPath("~bob/hooks"); err == nil {
		t.Fatal("~user accepted")
	}
}
