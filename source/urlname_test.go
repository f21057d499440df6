package source

import "testing"

// TestURLName: the repository a remote names is owner/name on a host, the
// last element of a local path.
func TestURLName(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"https://github.com/ctxpack/ctxpack.git", "ctxpack/ctxpack"},
		{"https://github.com/ctxpack/ctxpack", "ctxpack/ctxpack"},
		{"https://x-access-token:t@github.com/o/n.git/", "o/n"},
		{"git@github.com:o/n.git", "o/n"},
		{"ssh://git@github.com/o/n.git", "o/n"},
		{"ssh://git@gitlab.example:2222/group/sub/n.git", "group/sub/n"},
		{"git://host/o/n", "o/n"},
		{"/srv/git/origin.git", "origin"},
		{"../repo", "repo"},
		{"file:///tmp/x/repo.git", "repo"},
		{"", ""},
		{"https://github.com/", ""},
	} {
		if got := urlName(c.url); got != c.want {
			t.Errorf("urlName(%q) = %q, want %q", c.url, got, c.want)
		}
	}
	r := &Repo{Name: "origin"}
	r.NameFromEnv("o/n")
	if r.Name != "o/n" {
		t.Errorf("NameFromEnv did not name a repository without an owner: %q", r.Name)
	}
	r.NameFromEnv("other/x")
	if r.Name != "o/n" {
		t.Errorf("NameFromEnv replaced the remote's owner/name: %q", r.Name)
	}
}
