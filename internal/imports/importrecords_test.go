package imports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/markdown"
)

// A record keeps its source's text so that it reads back byte for byte,
// whatever the text holds: CRLF or mixed line endings, no final newline,
// fences of any length, headings and front-matter lines, other scripts; and
// nothing in it becomes a section of the record.
func TestRecordKeepsTheSourceText(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	svc := testService(t, &now)
	for name, text := range map[string]string{
		"lf":              "# Development Session - 2025-01-16 13:47 - x\n\n## Updates\n\n### Update - 2025-01-16 14:00\n\nDone.\n",
		"crlf":            "# Title\r\n\r\n## Goals\r\n- one\r\n",
		"mixed":           "line one\r\nline two\nline three\r\n",
		"no final eol":    "# aider chat started at 2024-05-30 10:22:13\n\n#### hi",
		"fences":          "```go\nx := 1\n```\n\n````\n```nested```\n````\n" + strings.Repeat("`", 9) + "\n",
		"front matter":    "---\ntitle: not the record's\n---\n## Original text\n## Summary\n",
		"japanese":        "# 開発セッション\n\n目標：移行\n",
		"blank lines end": "text\n\n\n",
		"only newline":    "\n",
	} {
		l := importer.Session{ID: "rec", SourcePath: "src/" + name + ".md", Format: importer.FormatClaudeSession,
			Date: time.Date(2025, 1, 16, 13, 47, 0, 0, time.UTC), Objective: "o", Original: []byte(text)}
		data, err := svc.renderArchived(importedState("demo", l), l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _, ok := svc.keptOriginal("demo/sessions/rec.md", data)
		if !ok || !bytes.Equal(got, []byte(text)) {
			t.Errorf("%s: kept %q (ok %v), want %q", name, got, ok, text)
		}
		d, err := svc.ParseDoc("demo/sessions/rec.md", data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var h2 []string
		for _, s := range markdown.ScanSections(d.Body) {
			if s.Level <= 2 {
				h2 = append(h2, s.Title)
			}
		}
		if h2[len(h2)-1] != secOriginal || strings.Count(strings.Join(h2, "|"), secOriginal) != 1 {
			t.Errorf("%s: the kept text made sections of the record: %q", name, h2)
		}
		if st := d.ReadState("demo"); st.Objective != "o" || len(st.Problems) > 0 {
			t.Errorf("%s: the record reads back as %+v", name, st)
		}
	}
}
