package importer

import (
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// This file reads labelled metadata lines ("**Date**: …") of Markdown logs.

// Metadata fields a labelled line can set.
type metaField int

const (
	fieldDate metaField = iota
	fieldEnded
	fieldBranch
	fieldStartCommit
	fieldEndCommit
	fieldObjective
	fieldStatus
)

// metaKeys maps a lower-cased label ("**Starting Commit**: …") to the field
// it sets and its rank among labels for the same field (lower wins).
var metaKeys = map[string]struct {
	field metaField
	rank  int
}{
	"date":              {fieldDate, 0},
	"session date":      {fieldDate, 0},
	"start date":        {fieldDate, 1},
	"started":           {fieldDate, 1},
	"start":             {fieldDate, 2},
	"start time":        {fieldDate, 2},
	"ended":             {fieldEnded, 0},
	"end":               {fieldEnded, 1},
	"end date":          {fieldEnded, 1},
	"end time":          {fieldEnded, 1},
	"completed":         {fieldEnded, 2},
	"finished":          {fieldEnded, 2},
	"branch":            {fieldBranch, 0},
	"current branch":    {fieldBranch, 1},
	"working branch":    {fieldBranch, 1},
	"feature branch":    {fieldBranch, 2},
	"git branch":        {fieldBranch, 1},
	"starting commit":   {fieldStartCommit, 0},
	"start commit":      {fieldStartCommit, 0},
	"starting sha":      {fieldStartCommit, 0},
	"base commit":       {fieldStartCommit, 1},
	"initial commit":    {fieldStartCommit, 1},
	"ending commit":     {fieldEndCommit, 0},
	"end commit":        {fieldEndCommit, 0},
	"ending sha":        {fieldEndCommit, 0},
	"final commit":      {fieldEndCommit, 1},
	"objective":         {fieldObjective, 0},
	"session objective": {fieldObjective, 0},
	"objectives":        {fieldObjective, 1},
	"goal":              {fieldObjective, 1},
	"session goal":      {fieldObjective, 1},
	"purpose":           {fieldObjective, 2},
	"task":              {fieldObjective, 4},
	"focus":             {fieldObjective, 5},
	"status":            {fieldStatus, 0},
	"session status":    {fieldStatus, 0},
	"overall status":    {fieldStatus, 1},
	"final status":      {fieldStatus, 1},
}

// Scopes of a labelled line, best first. A field only accepts labels from
// the scopes listed in fieldScopes.
type scope int

const (
	scopeHeader  scope = iota // preamble, first H1 body, "Session Info"
	scopeGit                  // "Git State"
	scopeOutcome              // outcome and session-end sections
	scopeOther
)

var fieldScopes = map[metaField][]scope{
	fieldDate:        {scopeHeader, scopeGit, scopeOutcome, scopeOther},
	fieldEnded:       {scopeHeader, scopeOutcome},
	fieldBranch:      {scopeHeader, scopeGit, scopeOutcome, scopeOther},
	fieldStartCommit: {scopeHeader, scopeGit, scopeOther},
	fieldEndCommit:   {scopeHeader, scopeGit, scopeOutcome, scopeOther},
	fieldObjective:   {scopeHeader, scopeOther},
	fieldStatus:      {scopeHeader, scopeOutcome},
}

// candidate is a value for a metadata field with its score (lower wins;
// ties go to the first seen).
type candidate struct {
	value string
	score int
}

type mdMeta map[metaField]candidate

func (m mdMeta) offer(f metaField, value string, score int) {
	if value == "" || isPlaceholder(clean(value)) {
		return
	}
	if c, ok := m[f]; ok && c.score <= score {
		return
	}
	m[f] = candidate{value, score}
}

// scopeOf returns the metadata scope of a section.
func (d *mdDoc) scopeOf(s *mdSection) scope {
	if s.level == 0 || (s.level == 1 && s == d.firstH1()) {
		return scopeHeader
	}
	switch kindOf(s) {
	case secMeta:
		return scopeHeader
	case secGit:
		return scopeGit
	case secOutcome:
		return scopeOutcome
	case secChecklist:
		if checklistPhase(s) == PhaseEnd {
			return scopeOutcome
		}
	}
	return scopeOther
}

func (d *mdDoc) firstH1() *mdSection {
	for _, s := range d.sections {
		if s.level == 1 {
			return s
		}
	}
	return nil
}

// readMeta offers every labelled line ("**Key**: value", "- **Key**: value",
// two-column "| Key | value |" rows in metadata sections) to d.meta.
func (d *mdDoc) readMeta() {
	for _, sec := range d.sections {
		sc := d.scopeOf(sec)
		for _, blk := range sec.blocks {
			switch blk.kind {
			case blockPara, blockItem:
				key, val, ok := boldLabel(blk.text)
				if !ok && blk.kind == blockItem && sc <= scopeGit {
					key, val, ok = plainLabel(blk.text)
				}
				if ok {
					d.offerMeta(key, val, sc)
				}
			case blockTable:
				if sc != scopeHeader {
					continue
				}
				for _, row := range blk.rows {
					if len(row) == 2 {
						d.offerMeta(strings.ToLower(clean(row[0])), row[1], sc)
					}
				}
			}
		}
	}
}

func (d *mdDoc) offerMeta(key, val string, sc scope) {
	mk, ok := metaKeys[key]
	if !ok && d.handoff && key == "phase" && sc == scopeHeader {
		mk, ok = metaKeys["status"], true
	}
	if !ok {
		return
	}
	allowed := false
	for _, a := range fieldScopes[mk.field] {
		allowed = allowed || a == sc
	}
	if !allowed || (mk.field == fieldStatus && reGitStatus().MatchString(clean(val))) {
		return
	}
	d.meta.offer(mk.field, val, int(sc)*10+mk.rank)
}

// reGitStatus matches a "Status" value describing the working tree rather
// than the session.
var reGitStatus = lazyregexp.New(`(?i)^(clean|dirty)\b|working (tree|directory)|^(mergeable|ahead|behind)\b`)
