package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// compare is `svbench compare OLD.json NEW.json`: it prints, per figure of
// the two reports, the old and new value, the change in percent and the
// ratio new/old, marking figures present in one report only.
func compare(args []string, w io.Writer) error {
	if len(args) != 2 {
		return errors.New("usage: svbench compare OLD.json NEW.json")
	}
	old, err := readReport(args[0])
	if err != nil {
		return fmt.Errorf("OLD: %w", err)
	}
	cur, err := readReport(args[1])
	if err != nil {
		return fmt.Errorf("NEW: %w", err)
	}
	fmt.Fprintf(w, "OLD %s: %s\n", args[0], describe(old.Meta))
	fmt.Fprintf(w, "NEW %s: %s\n", args[1], describe(cur.Meta))
	if d := metaDifferences(old.Meta, cur.Meta); len(d) > 0 {
		fmt.Fprintf(w, "note: the runs differ in %s; figures of different sizes are not comparable\n", strings.Join(d, ", "))
	}
	fmt.Fprintln(w)
	printDiff(w, diffReports(old, cur))
	return nil
}

// describe summarises what a run measured and where.
func describe(m Meta) string {
	curves := "no curves"
	if m.CurveRounds > 0 {
		curves = fmt.Sprintf("curves of %d rounds", m.CurveRounds)
	}
	return fmt.Sprintf("%s notes, %s commits, %d rounds, hook session of %s updates, %s; %s, %s, %s/%s, %d CPUs, %s",
		thousands(m.Notes), thousands(m.Commits), m.Rounds, thousands(m.HookUpdates), curves,
		m.GoVersion, m.GitVersion, m.OS, m.Arch, m.CPUs, m.Time)
}

// metaDifferences names the sizes in which two runs differ.
func metaDifferences(a, b Meta) []string {
	var d []string
	for _, f := range []struct {
		name string
		a, b int
	}{{"notes", a.Notes, b.Notes}, {"commits", a.Commits, b.Commits}, {"rounds", a.Rounds, b.Rounds},
		{"hook updates", a.HookUpdates, b.HookUpdates}, {"curve rounds", a.CurveRounds, b.CurveRounds}} {
		if f.a != f.b {
			d = append(d, fmt.Sprintf("%s (%d, %d)", f.name, f.a, f.b))
		}
	}
	return d
}

// diffRow is one figure of a comparison; inOld and inNew say which reports
// have it.
type diffRow struct {
	name, oldUnit, newUnit string
	old, new               float64
	inOld, inNew           bool
}

// diffReports pairs the figures of old and cur by name: cur's in its order,
// then those only in old, in old's order.
func diffReports(old, cur Report) []diffRow {
	byName := map[string]Figure{}
	for _, f := range old.Figures {
		byName[f.Name] = f
	}
	var rows []diffRow
	seen := map[string]bool{}
	for _, f := range cur.Figures {
		seen[f.Name] = true
		r := diffRow{name: f.Name, newUnit: f.Unit, new: f.Value, inNew: true}
		if o, ok := byName[f.Name]; ok {
			r.old, r.oldUnit, r.inOld = o.Value, o.Unit, true
		}
		rows = append(rows, r)
	}
	for _, f := range old.Figures {
		if !seen[f.Name] {
			rows = append(rows, diffRow{name: f.Name, oldUnit: f.Unit, old: f.Value, inOld: true})
		}
	}
	return rows
}

// change returns the change from old to new in percent and the ratio
// new/old; ok is false when a value is missing, the units differ or old is 0.
func (r diffRow) change() (percent, ratio float64, ok bool) {
	if !r.inOld || !r.inNew || r.oldUnit != r.newUnit || r.old == 0 {
		return 0, 0, false
	}
	ratio = r.new / r.old
	return (ratio - 1) * 100, ratio, true
}

// status is the row's last column: the change and ratio, or why there is
// none.
func (r diffRow) status() string {
	switch {
	case !r.inOld:
		return "  only in NEW"
	case !r.inNew:
		return "  only in OLD"
	case r.oldUnit != r.newUnit:
		return "  units differ"
	}
	p, q, ok := r.change()
	if !ok {
		return "  old is 0"
	}
	return fmt.Sprintf("%+8.1f%% %8.2fx", p, q)
}

// printDiff prints the rows as a table.
func printDiff(w io.Writer, rows []diffRow) {
	width := len("figure")
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	fmt.Fprintf(w, "%-*s %14s %14s %9s %9s\n", width, "figure", "old", "new", "change", "new/old")
	for _, r := range rows {
		old, cur := "-", "-"
		if r.inOld {
			old = formatValue(r.old, r.oldUnit)
		}
		if r.inNew {
			cur = formatValue(r.new, r.newUnit)
		}
		fmt.Fprintf(w, "%-*s %14s %14s %s\n", width, r.name, old, cur, r.status())
	}
}

// formatValue formats v in unit.
func formatValue(v float64, unit string) string {
	switch unit {
	case "ms":
		return fmt.Sprintf("%.3f ms", v)
	case "x":
		return fmt.Sprintf("%.2fx", v)
	case "KiB":
		return fmt.Sprintf("%.0f KiB", v)
	default:
		return fmt.Sprintf("%g %s", v, unit)
	}
}
