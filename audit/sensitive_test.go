package audit

import "testing"

func TestSensitiveFile(t *testing.T) {
	tests := []struct {
		path string
		sig  string // "" = not sensitive
	}{
		// SSH
		{"home/deploy/.ssh/id_rsa", "ssh-private-key"},
		{"id_ed25519", "ssh-private-key"},
		{"keys/id_ecdsa", "ssh-private-key"},
		{"ci/deploy_rsa", "ssh-private-key"},
		{".ssh/deploy_key", "ssh-private-key"},
		{".ssh/config", "ssh-config"},
		{".ssh/id_rsa.pub", ""},
		{"keys/github_ed25519.pub", ""},
		{"infra/putty/server.ppk", "putty-private-key"},
		{"docs/ssh.md", ""},
		{"pkg/ssh/id_rsa.go", ""},
		// network / package manager / VCS credentials
		{".netrc", "netrc"},
		{"windows/_netrc", "netrc"},
		{".pgpass", "pgpass"},
		{".npmrc", "npmrc"},
		{"packages/web/.npmrc", "npmrc"},
		{".npmrc.example", ""},
		{".pypirc", "pypirc"},
		{".git-credentials", "git-credentials"},
		{"public/.htpasswd", "htpasswd"},
		{"rootfs/etc/shadow", "unix-shadow"},
		{"etc/passwd", "unix-passwd"},
		{"src/passwd.c", ""},
		{"cmd/shadow/main.go", ""},
		{"tools/passwd", ""},
		{".aws/credentials", "aws-credentials"},
		{"home/user/.aws/config", "aws-config"},
		{"aws/credentials.go", ""},
		{".azure/accessTokens.json", "azure-cli"},
		{".azure/msal_token_cache.json", "azure-cli"},
		{".config/gcloud/application_default_credentials.json", "gcloud-credentials"},
		{".config/gcloud/credentials.db", "gcloud-credentials"},
		{".kube/config", "kubeconfig"},
		{"clusters/prod.kubeconfig", "kubeconfig"},
		{".docker/config.json", "docker-config"},
		{".dockercfg", "docker-config"},
		{"config.json", ""},
		{".vault-token", "vault-token"},
		{".config/gh/hosts.yml", "github-cli-token"},
		{".cargo/credentials.toml", "cargo-credentials"},
		// FTP / SFTP
		{"AppData/Roaming/FileZilla/filezilla.xml", "filezilla"},
		{"FileZilla/recentservers.xml", "filezilla"},
		{"WinSCP.ini", "winscp"},
		{"sftp-config.json", "sftp-config"},
		{".vscode/sftp.json", "sftp-config"},
		{".vscode/settings.json", ""},
		// cloud tools
		{".s3cfg", "s3cfg"},
		{".boto", "boto"},
		{"infra/terraform.tfstate", "terraform-state"},
		{"infra/terraform.tfstate.backup", "terraform-state"},
		{"infra/prod.tfvars", "terraform-vars"},
		{"infra/secrets.auto.tfvars.json", "terraform-vars"},
		{"infra/terraform.tfvars.example", ""},
		{"infra/main.tf", ""},
		// browsers
		{"profile/logins.json", "browser-logins"},
		{"Chrome/Default/Login Data", "browser-logins"},
		{"firefox/key4.db", "browser-logins"},
		{"firefox/key3.db", "browser-logins"},
		// database clients
		{".my.cnf", "mysql-client"},
		{".dbeaver/credentials-config.json", "dbeaver"},
		{"workspace6/General/.dbeaver/data-sources.json", "dbeaver"},
		{"robomongo.json", "robomongo"},
		{".mongorc.js", "mongorc"},
		{"src/data-sources.json", ""},
		// keystores and private key exports
		{"android/app/release.keystore", "java-keystore"},
		{"certs/server.jks", "java-keystore"},
		{"vault/passwords.kdbx", "keepass"},
		{"login.keychain", "macos-keychain"},
		{"certs/client.pfx", "pkcs12"},
		{"certs/client.p12", "pkcs12"},
		{"certs/server.key", "private-key-file"},
		{"config/master.key", "private-key-file"},
		{"AuthKey_ABC123.p8", "private-key-file"},
		{"keys/private.asc", "pgp-private-key"},
		{"release/app-1.2.tar.gz.asc", ""},
		{"SHA256SUMS.asc", ""},
		{".gnupg/pubring.kbx", "pgp-private-key"},
		{"certs/ca.pem", ""},
		{"pkg/keystore/store.go", ""},
		{"vpn/office.ovpn", "openvpn-config"},
		// env files
		{".env", "dotenv"},
		{"services/api/.env", "dotenv"},
		{".env.local", "dotenv"},
		{".env.production", "dotenv"},
		{".env.development.local", "dotenv"},
		{".env.bak", "dotenv"},
		{"deploy/app.env", "dotenv"},
		{".envrc", "dotenv"},
		{".env.example", ""},
		{".env.sample", ""},
		{".env.template", ""},
		{".env.dist", ""},
		{"example.env", ""},
		{".env.go", ""},
		{"src/.env.d.ts", ""},
		{"docs/.env.md", ""},
		{"pkg/env/env.go", ""},
		{".venv", ""},
		// applications
		{"wordpress/wp-config.php", "wp-config"},
		{"wordpress/wp-config-sample.php", ""},
		{"jenkins/credentials.xml", "jenkins-credentials"},
		{"internal/credentials/xml.go", ""},
		// histories
		{".bash_history", "shell-history"},
		{"root/.zsh_history", "shell-history"},
		{".mysql_history", "db-history"},
		{".psql_history", "db-history"},
		{".node_repl_history", "shell-history"},
		{"docs/history.md", ""},
		// Windows separators
		{`C:\Users\me\.ssh\id_rsa`, "ssh-private-key"},
	}
	for _, tt := range tests {
		sig, ok := SensitiveFile(tt.path)
		if ok != (tt.sig != "") || sig != tt.sig {
			t.Errorf("SensitiveFile(%q) = %q, %v; want %q", tt.path, sig, ok, tt.sig)
		}
	}
}
