package audit

import (
	"path"
	"strings"
)

// SensitiveFile reports whether path names a file that holds credentials by
// its nature, whatever its content looks like — the kind of list gitrob and
// shhgit keep: private keys and key stores, credential and token files of
// CLIs and package managers, FTP/SFTP/database client configs, browser login
// stores, shell and database client histories, Terraform state and variables,
// .env files. signature is a short stable name for the kind of file.
//
// Matching is on the slash-separated path: base name (case-insensitive),
// extension, or a trailing directory/file pair such as .aws/credentials.
// Decisions:
//   - .env, .env.local, .env.production, .env.bak, app.env, .envrc are
//     sensitive; templates meant to be committed (.env.example, .env.sample,
//     .env.template, .env.dist, .env.defaults, .env.schema, .env.ci.example)
//     are not, and neither is a source file whose name merely starts with
//     ".env." (.env.go, .env.ts, .env.d.ts): its extension says it is code.
//   - id_rsa.pub and other *.pub files are public keys, not sensitive;
//     *.pem is not listed (certificates are public; a PEM private key is
//     found by its content), *.key is (server.key, Rails master.key).
//   - *.asc is sensitive unless it is a detached signature of another file
//     (release.tar.gz.asc, SHA256SUMS.asc).
//   - passwd/shadow/gshadow only under an etc/ directory (src/passwd.c is
//     code).
//   - A *.tfvars / .env template suffix (.example, .sample, .template,
//     .dist, .tmpl) makes any of these names not sensitive.
func SensitiveFile(p string) (signature string, ok bool) {
	p = strings.ReplaceAll(p, "\\", "/")
	lp := strings.ToLower(p)
	base := path.Base(lp)
	if base == "." || base == "/" || base == "" {
		return "", false
	}
	dir := path.Dir(lp)
	if dir == "." {
		dir = ""
	}
	parentName := path.Base(dir)
	if dir == "" {
		parentName = ""
	}
	ext := path.Ext(base)

	if isTemplateName(base) {
		return "", false
	}
	if sig, ok := sensitiveNames[base]; ok {
		return sig, true
	}
	for _, pr := range sensitivePairs {
		if parentName == pr.dir && (pr.file == "" || base == pr.file) {
			return pr.sig, true
		}
		if pr.file == "" && hasDirComponent(dir, pr.dir) {
			return pr.sig, true
		}
	}
	if sig, ok := sensitiveExts[ext]; ok {
		return sig, true
	}

	switch {
	case hasDirComponent(dir, ".ssh") && ext != ".pub":
		return "ssh-private-key", true
	case isDotenv(base):
		return "dotenv", true
	case ext == "" && (strings.HasSuffix(base, "_rsa") || strings.HasSuffix(base, "_dsa") ||
		strings.HasSuffix(base, "_ecdsa") || strings.HasSuffix(base, "_ed25519")):
		return "ssh-private-key", true
	case ext == ".asc" && !isDetachedSignature(base):
		return "pgp-private-key", true
	case (base == "passwd" || base == "master.passwd") && hasDirComponent(dir, "etc"):
		return "unix-passwd", true
	case (base == "shadow" || base == "gshadow" || base == "shadow-") && hasDirComponent(dir, "etc"):
		return "unix-shadow", true
	case strings.HasSuffix(base, ".tfvars") || strings.HasSuffix(base, ".tfvars.json"):
		return "terraform-vars", true
	case strings.HasPrefix(base, "terraform.tfstate") || strings.HasSuffix(base, ".tfstate") ||
		strings.HasSuffix(base, ".tfstate.backup"):
		return "terraform-state", true
	case strings.HasPrefix(base, "data-sources") && strings.HasSuffix(base, ".json") && hasDirComponent(dir, ".dbeaver"):
		return "dbeaver", true
	case strings.HasPrefix(base, "client_secret") && strings.HasSuffix(base, ".json"):
		return "google-oauth-client-secret", true
	case strings.Contains(base, "-firebase-adminsdk-") && strings.HasSuffix(base, ".json"):
		return "gcp-service-account-key", true
	case strings.HasSuffix(base, "_history") && strings.HasPrefix(base, "."):
		return "shell-history", true
	case strings.HasPrefix(base, "secring.") || base == "private-keys-v1.d" || hasDirComponent(dir, "private-keys-v1.d"):
		return "pgp-private-key", true
	}
	return "", false
}

// sensitiveNames are base names (lowercase).
var sensitiveNames = map[string]string{
	// SSH
	"id_rsa": "ssh-private-key", "id_dsa": "ssh-private-key", "id_ecdsa": "ssh-private-key",
	"id_ed25519": "ssh-private-key", "id_ecdsa_sk": "ssh-private-key", "id_ed25519_sk": "ssh-private-key",
	"id_xmss": "ssh-private-key",
	// network / package manager / VCS credentials
	".netrc": "netrc", "_netrc": "netrc",
	".pgpass": "pgpass", "pgpass.conf": "pgpass",
	".npmrc":           "npmrc",
	".pypirc":          "pypirc",
	".git-credentials": "git-credentials",
	".htpasswd":        "htpasswd", "htpasswd": "htpasswd", ".htdigest": "htpasswd",
	".dockercfg":   "docker-config",
	".s3cfg":       "s3cfg",
	".boto":        "boto",
	".vault-token": "vault-token",
	".terraformrc": "terraform-credentials", "terraform.rc": "terraform-credentials",
	"credentials.tfrc.json": "terraform-credentials",
	".gem_credentials":      "rubygems-credentials",
	"proftpdpasswd":         "htpasswd", // gitleaks:allow (a signature name, not a credential)
	".esmtprc":              "mail-client-config", ".fetchmailrc": "mail-client-config",
	".muttrc": "mail-client-config", ".msmtprc": "mail-client-config",
	"kubeconfig": "kubeconfig",
	// cloud CLIs
	"application_default_credentials.json": "gcloud-credentials",
	"credentials.db":                       "gcloud-credentials",
	"access_tokens.db":                     "gcloud-credentials",
	"legacy_credentials":                   "gcloud-credentials",
	"accesstokens.json":                    "azure-cli",
	"msal_token_cache.json":                "azure-cli",
	"msal_token_cache.bin":                 "azure-cli",
	"service-account.json":                 "gcp-service-account-key",
	"service_account.json":                 "gcp-service-account-key",
	"credentials.json":                     "google-oauth-client-secret",
	// FTP / SFTP clients
	"filezilla.xml": "filezilla", "recentservers.xml": "filezilla", "sitemanager.xml": "filezilla",
	"winscp.ini":       "winscp",
	"sftp-config.json": "sftp-config", ".ftpconfig": "sftp-config", ".remote-sync.json": "sftp-config",
	"ftpsync.settings": "sftp-config", "deployment-config.json": "sftp-config",
	// browsers
	"logins.json": "browser-logins", "login data": "browser-logins", "login data for account": "browser-logins",
	"key3.db": "browser-logins", "key4.db": "browser-logins", "signons.sqlite": "browser-logins",
	"signons.txt": "browser-logins",
	// database clients
	".my.cnf": "mysql-client", ".mylogin.cnf": "mysql-client",
	"credentials-config.json": "dbeaver",
	"robomongo.json":          "robomongo", "robo3t.json": "robomongo", "3t.json": "robomongo",
	".mongorc.js":       "mongorc",
	".dbshell":          "db-history",
	".mysql_history":    "db-history",
	".psql_history":     "db-history",
	".sqlite_history":   "db-history",
	".rediscli_history": "db-history",
	// shell and REPL histories
	".bash_history": "shell-history", ".zsh_history": "shell-history", ".sh_history": "shell-history",
	".history": "shell-history", ".histfile": "shell-history", "fish_history": "shell-history",
	".python_history": "shell-history", ".node_repl_history": "shell-history", ".irb_history": "shell-history",
	".lesshst": "shell-history",
	// applications
	"wp-config.php":      "wp-config",
	"localsettings.php":  "mediawiki-config",
	"credentials.xml":    "jenkins-credentials",
	"hudson.util.secret": "jenkins-credentials", // gitleaks:allow (a signature name, not a credential)
	"keystore":           "java-keystore",
	".keystore":          "java-keystore",
	"known_hosts":        "ssh-known-hosts",
	"authorized_keys":    "ssh-authorized-keys",
	"otrkeys":            "otr-private-key",
	"otr.private_key":    "otr-private-key",
	"secret_token.rb":    "rails-secret-token",
}

// sensitivePairs are (parent directory, file) pairs; file "" means anything
// under that directory.
var sensitivePairs = []struct{ dir, file, sig string }{
	{".aws", "credentials", "aws-credentials"},
	{".aws", "config", "aws-config"},
	{".kube", "config", "kubeconfig"},
	{".docker", "config.json", "docker-config"},
	{".ssh", "config", "ssh-config"},
	{".ssh", "identity", "ssh-private-key"},
	{".gem", "credentials", "rubygems-credentials"},
	{".cargo", "credentials", "cargo-credentials"},
	{".cargo", "credentials.toml", "cargo-credentials"},
	{".composer", "auth.json", "composer-auth"},
	{"composer", "auth.json", "composer-auth"},
	{"gh", "hosts.yml", "github-cli-token"},
	{".config", "hub", "github-cli-token"},
	{".vscode", "sftp.json", "sftp-config"},
	{".dbeaver", "credentials-config.json", "dbeaver"},
	{".azure", "", "azure-cli"},
	{".gnupg", "", "pgp-private-key"},
	{".password-store", "", "password-store"},
}

// sensitiveExts are extensions (lowercase, with dot).
var sensitiveExts = map[string]string{
	".ppk":             "putty-private-key",
	".key":             "private-key-file",
	".p8":              "private-key-file",
	".pfx":             "pkcs12",
	".p12":             "pkcs12",
	".pkcs12":          "pkcs12",
	".jks":             "java-keystore",
	".keystore":        "java-keystore",
	".bks":             "java-keystore",
	".kdbx":            "keepass",
	".kdb":             "keepass",
	".keychain":        "macos-keychain",
	".keychain-db":     "macos-keychain",
	".agilekeychain":   "1password-keychain",
	".opvault":         "1password-keychain",
	".psafe3":          "password-safe",
	".ovpn":            "openvpn-config",
	".tfstate":         "terraform-state",
	".kubeconfig":      "kubeconfig",
	".publishsettings": "azure-publish-settings",
	".rdg":             "rdcman-credentials",
}

var templateSuffixes = map[string]bool{
	"example": true, "examples": true, "sample": true, "samples": true, "template": true,
	"templates": true, "tmpl": true, "tpl": true, "dist": true, "defaults": true,
	"default": true, "schema": true, "skel": true, "stub": true,
}

// isTemplateName: foo.example, .env.sample, terraform.tfvars.template,
// example.env, sample.tfvars.
func isTemplateName(base string) bool {
	parts := strings.Split(strings.TrimPrefix(base, "."), ".")
	if len(parts) < 2 {
		return false
	}
	switch parts[0] {
	case "example", "sample", "template":
		return true
	}
	for _, p := range parts[1:] {
		if templateSuffixes[p] {
			return true
		}
	}
	return false
}

// codeExts mark a name like ".env.go" as source code.
var codeExts = map[string]bool{
	"go": true, "js": true, "mjs": true, "cjs": true, "ts": true, "tsx": true, "jsx": true,
	"py": true, "rb": true, "php": true, "java": true, "kt": true, "rs": true, "cs": true,
	"swift": true, "c": true, "h": true, "cpp": true, "md": true, "rst": true, "txt": true,
	"html": true,
	"css":  true, "scss": true,
}

func isDotenv(base string) bool {
	switch {
	case base == ".env" || base == ".envrc" || base == ".flaskenv":
		return true
	case strings.HasPrefix(base, ".env."):
		rest := strings.Split(base[len(".env."):], ".")
		return !codeExts[rest[len(rest)-1]]
	case strings.HasSuffix(base, ".env") && len(base) > len(".env"):
		return true
	}
	return false
}

var signedExts = map[string]bool{
	"gz": true, "tgz": true, "bz2": true, "xz": true, "zst": true, "zip": true, "tar": true,
	"jar": true, "war": true, "deb": true, "rpm": true, "apk": true, "exe": true, "msi": true,
	"dmg": true, "pkg": true, "iso": true, "img": true, "whl": true, "gem": true, "nupkg": true,
	"sha256": true, "sha512": true, "sha1": true, "md5": true, "txt": true, "sig": true,
	"asc": false, "pom": true, "module": true, "crate": true, "sum": true, "bin": true,
}

// isDetachedSignature: release-1.2.tar.gz.asc, SHA256SUMS.asc, foo.jar.asc.
func isDetachedSignature(base string) bool {
	stem := strings.TrimSuffix(base, ".asc")
	if strings.Contains(stem, "sums") || strings.HasSuffix(stem, "sum") {
		return true
	}
	inner := path.Ext(stem)
	return inner != "" && signedExts[inner[1:]]
}

func hasDirComponent(dir, name string) bool {
	if dir == "" {
		return false
	}
	for _, c := range strings.Split(dir, "/") {
		if c == name {
			return true
		}
	}
	return false
}
