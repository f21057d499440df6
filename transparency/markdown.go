package transparency

import "strings"

// Markdown helpers for other views of a pack (the store's document
// sections) that must hold hostile text as safely as Read does.

// CodeSpan renders s as one inline code span on one line, whatever s holds.
func CodeSpan(s string) string { return viewCodeSpan(s) }

// Visible makes s one line of visible text (control and invisible
// characters escaped).
func Visible(s string) string { return viewVisible(s) }

// FenceBlock writes content as a fenced code block no line of it can close.
func FenceBlock(b *strings.Builder, content, lang string) { viewFenceBlock(b, content, lang) }

// FenceLang is a code-fence info string for a file name ("" when none fits).
func FenceLang(path string) string { return viewLang(path) }

// Clip shortens s to about max runes, saying how much was left out.
func Clip(s string, max int) string { return viewClip(s, max) }
