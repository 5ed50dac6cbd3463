package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Report is the JSON file a run writes: every figure it printed, under a
// stable name, and what was measured.
type Report struct {
	Figures []Figure `json:"figures"`
	Meta    Meta     `json:"meta"`
}

// Figure is one measured value. Names are slash-separated and stable between
// runs of the same sizes, e.g. "quiet/update-in-process/p50"; units
// are "ms", "x" (a ratio), "KiB" and "notes".
type Figure struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// Meta describes a run: the sizes, the rounds and the machine.
type Meta struct {
	Notes       int    `json:"notes"`
	Commits     int    `json:"commits"`
	Rounds      int    `json:"rounds"`
	Phases      string `json:"phases"`
	CurveRounds int    `json:"curve_rounds"` // 0: the curves were not measured
	HookUpdates int    `json:"hook_updates"`
	Quick       bool   `json:"quick"`
	GoVersion   string `json:"go_version"`
	GitVersion  string `json:"git_version"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUs        int    `json:"cpus"`
	Time        string `json:"time"`
}

// figures collects a run's figures in the order they are printed.
type figures struct{ list []Figure }

// add records a figure.
func (f *figures) add(name, unit string, v float64) {
	f.list = append(f.list, Figure{Name: name, Unit: unit, Value: v})
}

// dur records a duration in milliseconds.
func (f *figures) dur(name string, d time.Duration) { f.add(name, "ms", msOf(d)) }

// ratio records a ratio; 0 (no denominator) is left out.
func (f *figures) ratio(name string, v float64) {
	if v != 0 {
		f.add(name, "x", v)
	}
}

// kib records a memory size in KiB; 0 (unknown) is left out.
func (f *figures) kib(name string, v int64) {
	if v != 0 {
		f.add(name, "KiB", float64(v))
	}
}

// writeReport writes r to path as indented JSON.
func writeReport(path string, r Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// readReport reads a report written by writeReport; a figure name that
// occurs twice is an error.
func readReport(path string) (Report, error) {
	var r Report
	data, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("reading the report: %w", err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, f := range r.Figures {
		if f.Name == "" {
			return r, fmt.Errorf("%s: a figure has no name", path)
		}
		if seen[f.Name] {
			return r, fmt.Errorf("%s: figure %q occurs twice", path, f.Name)
		}
		seen[f.Name] = true
	}
	return r, nil
}
