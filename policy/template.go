package policy

// Template is the commented default policy `ctxpack init` writes. Parsing it
// gives exactly Default() (a test keeps them in step).
const Template = `# ctxpack policy: what may leave this repository in a context pack.
# Every key is optional; absent keys take the defaults shown here.
version: 1

pack:
  type: auto        # auto | full | summary
  tier: none        # none | strong (120,000 chars) | default (60,000) | cheap (25,000)
  scope: change     # commit and range packs: change (changed files, top-level files,
                    # ignore files on their paths) | tree (every file of the head tree)
  include: []       # only pack files matching these globs (doublestar syntax)
  exclude: []       # never pack files matching these globs

limits:
  max_tokens: 0               # o200k tokens of a change pack; 0 sizes it to the change:
                              # 4,000 + 2 x the diff's tokens, from 6,000 to 20,000
  max_content_bytes: 512000   # content and diffs, in bytes
  max_files: 200              # files with content in a full pack
  max_file_bytes: 50000       # larger files keep their head and tail lines
  preserve_head_lines: 100
  preserve_tail_lines: 50

secrets:
  action: redact    # redact (replace with [REDACTED:<rule>]) | exclude (drop the file) | fail
  config: ""        # gitleaks config; "" uses .gitleaks.toml when present
  history: fail     # a secret added by a commit of the range: fail | warn
  history_unavailable: fail   # the commits could not be scanned (not fetchable, no API
                              # patches, a file over history_max_blob_bytes): fail | warn
                              # (reported as skipped)
  history_max_blob_bytes: 104857600   # the largest file of a commit the per-commit scan reads

egress:
  destinations: []  # e.g. [{name: openai, max_tokens: 128000}, {name: internal, max_chars: 400000}]
  forbid: []        # globs whose content must never leave; their change is still listed

# what fails the verdict (the rest warns); [none] only warns; an empty list is an error
fail_on: [secret_unredacted, secret_in_history, forbidden_content, over_limit]

# For a commit, range, push or pull request, this file, the gitleaks config and
# .gitleaksignore are read from the base (what a change brings cannot loosen
# its own check). head lets the change's own configuration apply.
config_from: base
`
