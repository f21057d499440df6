package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxpack/ctxpack/internal/fsutil"
)

// HookName is the hook ctxpack installs.
const HookName = "pre-push"

// OrigSuffix names where an existing pre-push hook is kept while ctxpack's
// is installed (pre-push.ctxpack-orig); ctxpack's hook runs it first.
const OrigSuffix = ".ctxpack-orig"

// marker identifies a hook ctxpack wrote (any version).
const marker = "# ctxpack-hook: pre-push"

// scriptVersion is bumped when the script changes; install rewrites older ones.
const scriptVersion = "v1"

// Script returns the pre-push hook: a POSIX sh script that saves git's stdin
// to a temporary file, runs the previous hook (pre-push.ctxpack-orig, when
// executable) with the same arguments and stdin, then runs
// `ctxpack hook pre-push` with them. The binary is the absolute path
// recorded at install (bin; "" records none), else `ctxpack` on PATH; when
// neither exists the push is blocked with a message that says how to fix it
// and that `git push --no-verify` bypasses the check once.
func Script(bin string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/sh
%s %s
# Installed by "ctxpack hook install"; "ctxpack hook uninstall" removes it and
# puts back the hook that was here before (kept as pre-push%s and run
# first, with the same arguments and input). Bypass once: git push --no-verify

ctxpack_bin=%s

orig="$(dirname -- "$0")/pre-push%s"
input=$(mktemp 2>/dev/null) || {
	input="${TMPDIR:-/tmp}/ctxpack-pre-push.$$"
	(umask 077 && set -C && : >"$input") || {
		echo "ctxpack pre-push hook: cannot create a temporary file; the push is blocked (git push --no-verify bypasses this check once)" >&2
		exit 1
	}
}
trap 'rm -f "$input"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
cat >"$input" || exit 1

# git runs a hook only when it is executable; so does this.
if [ -f "$orig" ] && [ -x "$orig" ]; then
	"$orig" "$@" <"$input" || {
		status=$?
		echo "ctxpack pre-push hook: the previous pre-push hook ($orig) failed (exit $status); the push is blocked" >&2
		exit "$status"
	}
fi

bin=
if [ -n "$ctxpack_bin" ] && [ -x "$ctxpack_bin" ]; then
	bin=$ctxpack_bin
elif command -v ctxpack >/dev/null 2>&1; then
	bin=$(command -v ctxpack)
fi
if [ -z "$bin" ]; then
	{
		echo "ctxpack pre-push hook: the ctxpack binary was not found, so this push cannot be checked and is blocked."
		if [ -n "$ctxpack_bin" ]; then
			echo "  It was installed as $ctxpack_bin, which is gone, and there is no ctxpack on PATH."
		else
			echo "  There is no ctxpack on PATH."
		fi
		echo "  Fix: install ctxpack (go install github.com/ctxpack/ctxpack/cmd/ctxpack@latest) and run"
		echo "       \"ctxpack hook install\" again, or remove this hook (\"ctxpack hook uninstall\", or delete $0)."
		echo "  Push once without the check: git push --no-verify"
	} >&2
	exit 1
fi
"$bin" hook pre-push "$@" <"$input"
`, marker, scriptVersion, OrigSuffix, shQuote(bin), OrigSuffix)
	return []byte(b.String())
}

// shQuote quotes s for sh in single quotes (a quote inside closes, escapes and reopens).
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// IsOurs reports whether data is a hook ctxpack wrote.
func IsOurs(data []byte) bool { return bytes.Contains(data, []byte(marker)) }

// InstallOptions configure Install.
type InstallOptions struct {
	// Dir is a directory inside the repository.
	Dir string
	// HooksDir overrides the hooks directory Locate finds.
	HooksDir string
	// Binary is the absolute path of the ctxpack binary to record; "" records
	// none (the hook looks for ctxpack on PATH).
	Binary string
}

// Installed says what Install did.
type Installed struct {
	Location *Location
	// Hook is the installed hook's path.
	Hook string
	// Kept is where the previous hook was moved, "" when there was none (or
	// it was kept by an earlier install).
	Kept string
	// Previous is the kept previous hook's path, whether moved now or before.
	Previous string
	// Updated is true when ctxpack's hook was already there and was rewritten
	// (Unchanged when it was identical).
	Updated, Unchanged bool
	// Binary is the recorded binary path ("" for PATH lookup).
	Binary string
}

// Install writes ctxpack's pre-push hook. An existing pre-push hook that is
// not ctxpack's is moved to pre-push.ctxpack-orig (content, mode and symlink
// kept as they are) and run first by ctxpack's. Installing again only
// rewrites ctxpack's hook (for a new binary path); it never touches the kept
// hook.
func Install(opts InstallOptions) (*Installed, error) {
	loc, err := locate(opts.Dir, opts.HooksDir)
	if err != nil {
		return nil, err
	}
	if opts.Binary != "" && !filepath.IsAbs(opts.Binary) {
		return nil, fmt.Errorf("binary path %q is not absolute", opts.Binary)
	}
	if err := os.MkdirAll(loc.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create hooks directory: %w", err)
	}
	hook := filepath.Join(loc.Dir, HookName)
	orig := hook + OrigSuffix
	res := &Installed{Location: loc, Hook: hook, Binary: opts.Binary}
	script := Script(opts.Binary)

	current, err := readHook(hook)
	if err != nil {
		return nil, err
	}
	origExists, err := exists(orig)
	if err != nil {
		return nil, err
	}
	if origExists {
		res.Previous = orig
	}
	switch {
	case current != nil && IsOurs(current):
		if bytes.Equal(current, script) {
			res.Unchanged = true
			return res, nil
		}
		res.Updated = true
	case current != nil:
		if origExists {
			return nil, fmt.Errorf("%s is not ctxpack's hook and %s already exists: move one of them away first", hook, orig)
		}
		if err := os.Rename(hook, orig); err != nil {
			return nil, fmt.Errorf("keep the existing hook: %w", err)
		}
		res.Kept, res.Previous = orig, orig
	}
	if err := fsutil.WriteFile(hook, script, 0o755); err != nil {
		if res.Kept != "" {
			_ = os.Rename(orig, hook) // put the previous hook back
		}
		return nil, err
	}
	return res, nil
}

// Uninstalled says what Uninstall did.
type Uninstalled struct {
	Location *Location
	Hook     string
	// Removed is true when ctxpack's hook was removed.
	Removed bool
	// Restored is true when the previous hook was put back.
	Restored bool
	// Foreign is true when the pre-push hook there is not ctxpack's (and
	// nothing was done).
	Foreign bool
}

// ErrNotOurs is returned by Uninstall when the pre-push hook is not ctxpack's
// while a kept hook exists too: a state ctxpack did not leave.
var ErrNotOurs = errors.New("the pre-push hook was not installed by ctxpack; left as it is")

// Uninstall removes ctxpack's pre-push hook and moves the previous hook
// back, exactly as it was (the rename keeps content and mode). With no
// ctxpack hook installed it does nothing (a foreign hook is left alone), but
// still puts back a kept hook whose place is free.
func Uninstall(dir, hooksDir string) (*Uninstalled, error) {
	loc, err := locate(dir, hooksDir)
	if err != nil {
		return nil, err
	}
	hook := filepath.Join(loc.Dir, HookName)
	orig := hook + OrigSuffix
	res := &Uninstalled{Location: loc, Hook: hook}
	current, err := readHook(hook)
	if err != nil {
		return nil, err
	}
	if current != nil && !IsOurs(current) {
		if kept, err := exists(orig); err != nil {
			return nil, err
		} else if kept {
			return res, fmt.Errorf("%s: %w, and %s is there too: sort them out by hand", hook, ErrNotOurs, orig)
		}
		res.Foreign = true
		return res, nil
	}
	if current != nil {
		if err := os.Remove(hook); err != nil {
			return nil, fmt.Errorf("remove %s: %w", hook, err)
		}
		res.Removed = true
	}
	origExists, err := exists(orig)
	if err != nil {
		return nil, err
	}
	if origExists {
		if err := os.Rename(orig, hook); err != nil {
			return nil, fmt.Errorf("restore %s: %w", orig, err)
		}
		res.Restored = true
	}
	return res, nil
}

func locate(dir, hooksDir string) (*Location, error) {
	if dir == "" {
		dir = "."
	}
	loc, err := Locate(dir)
	if err != nil {
		return nil, err
	}
	if hooksDir != "" {
		abs, err := filepath.Abs(hooksDir)
		if err != nil {
			return nil, err
		}
		loc.Dir, loc.From = abs, "--hooks-dir"
	}
	return loc, nil
}

// readHook returns the hook's content (following a symlink), nil when there
// is no hook. A dangling symlink reads as an empty, foreign hook.
func readHook(path string) ([]byte, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []byte{}, nil // dangling symlink
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
	return true, nil
}
