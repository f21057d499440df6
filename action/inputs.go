package action

import (
	"fmt"
	"strconv"
	"strings"
)

// Inputs are the action's inputs (action.yml), read from INPUT_<NAME>.
type Inputs struct {
	Policy           string
	Type             string
	Tier             string
	SecretsAction    string
	Comment          bool
	ArtifactName     string
	RetentionDays    int
	GitHubToken      string
	FailOnViolation  bool
	WorkingDirectory string
	SARIF            bool
}

// readInputs reads and checks the inputs. get is go-githubactions' GetInput
// (INPUT_<NAME>, upper case, spaces as underscores, trimmed).
func readInputs(get func(string) string) (*Inputs, error) {
	in := &Inputs{
		Policy:           get("policy"),
		Type:             strings.ToLower(get("type")),
		Tier:             strings.ToLower(get("tier")),
		SecretsAction:    strings.ToLower(get("secrets-action")),
		ArtifactName:     get("artifact-name"),
		GitHubToken:      get("github-token"),
		WorkingDirectory: get("working-directory"),
	}
	var err error
	if in.Comment, err = boolInput(get, "comment", true); err != nil {
		return nil, err
	}
	if in.FailOnViolation, err = boolInput(get, "fail-on-violation", true); err != nil {
		return nil, err
	}
	if in.SARIF, err = boolInput(get, "sarif", false); err != nil {
		return nil, err
	}
	switch in.Type {
	case "", "auto", "full", "summary":
	default:
		return nil, fmt.Errorf("input type %q: use auto, full or summary", clip(in.Type, 40))
	}
	switch in.Tier {
	case "", "none", "strong", "default", "cheap":
	default:
		return nil, fmt.Errorf("input tier %q: use strong, default, cheap or none", clip(in.Tier, 40))
	}
	switch in.SecretsAction {
	case "", "redact", "exclude", "fail":
	default:
		return nil, fmt.Errorf("input secrets-action %q: use redact, exclude or fail", clip(in.SecretsAction, 40))
	}
	if s := get("retention-days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("input retention-days %q: a whole number of days, at least 1", clip(s, 40))
		}
		in.RetentionDays = n
	}
	if in.ArtifactName != "" {
		if err := ValidateArtifactName(in.ArtifactName); err != nil {
			return nil, fmt.Errorf("input artifact-name: %w", err)
		}
	}
	return in, nil
}

// boolInput parses a boolean input as the toolkit's getBooleanInput does
// (YAML 1.2 core schema: true | True | TRUE | false | False | FALSE).
func boolInput(get func(string) string, name string, def bool) (bool, error) {
	switch v := get(name); v {
	case "":
		return def, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	default:
		return false, fmt.Errorf("input %s %q: use true or false", name, clip(v, 40))
	}
}
