package reports_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"reconcile"
	"reconcile/reports"
)

// reviewed writes the test workbook, lets edit change it as a person
// would in a spreadsheet, saves it and returns its path.
func reviewed(t *testing.T, edit func(f *excelize.File)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "review-wechatpay-2026-11-28.xlsx")
	if err := reports.WriteWorkbook(path, testResult(t)); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	edit(f)
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	return path
}

func set(t *testing.T, f *excelize.File, cells map[string]any) {
	t.Helper()
	for cell, v := range cells {
		if err := f.SetCellValue("Review", cell, v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadDecisions(t *testing.T) {
	// Review rows 2 to 9 hold run-1-0001 to -0005, -0007, -0008 and -0010.
	path := reviewed(t, func(f *excelize.File) {
		set(t, f, map[string]any{
			"N2": "Approve ", "O2": "li.wei", "P2": "Checked with the channel: refund the difference.",
			"N4": "'investigate", "P4": "  waiting on WeChat  ",
			"N9": "REJECT", "O9": "zhang.san", "Q9": 2,
			"O5": "someone", "P5": "a note without a decision is not a decision",
		})
	})
	got, err := reports.ReadDecisions(path)
	if err != nil {
		t.Fatalf("ReadDecisions: %v", err)
	}
	want := []reports.Decision{
		{Sheet: "Review", Row: 2, Ref: "run-1-0001", Version: 0, Decision: "approve", Reviewer: "li.wei", Note: "Checked with the channel: refund the difference."},
		{Sheet: "Review", Row: 4, Ref: "run-1-0003", Version: 0, Decision: "investigate", Note: "waiting on WeChat"},
		{Sheet: "Review", Row: 9, Ref: "run-1-0010", Version: 2, Decision: "reject", Reviewer: "zhang.san"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	t.Run("no decisions", func(t *testing.T) {
		got, err := reports.ReadDecisions(reviewed(t, func(*excelize.File) {}))
		if err != nil || len(got) != 0 {
			t.Errorf("got %+v, %v; want nothing", got, err)
		}
	})

	t.Run("columns moved", func(t *testing.T) {
		path := reviewed(t, func(f *excelize.File) {
			if err := f.InsertCols("Review", "A", 1); err != nil {
				t.Fatal(err)
			}
			set(t, f, map[string]any{"A1": "My notes", "A3": "approve?", "O3": "reject"})
		})
		got, err := reports.ReadDecisions(path)
		if err != nil {
			t.Fatalf("ReadDecisions: %v", err)
		}
		want := []reports.Decision{{Sheet: "Review", Row: 3, Ref: "run-1-0002", Decision: "reject"}}
		if !slices.Equal(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
}

func TestReadDecisionsErrors(t *testing.T) {
	type where struct {
		line   int
		column string
	}
	tests := []struct {
		name string
		edit func(f *excelize.File)
		want []where
		says string
	}{
		{
			name: "no Finding column",
			edit: func(f *excelize.File) { set(t, f, map[string]any{"A1": "Ref", "N2": "approve"}) },
			want: []where{{1, "Finding"}},
			says: "no Finding column",
		},
		{
			name: "no Version column",
			edit: func(f *excelize.File) { set(t, f, map[string]any{"Q1": ""}) },
			want: []where{{1, "Version"}},
			says: "no Version column",
		},
		{
			name: "unknown decision",
			edit: func(f *excelize.File) { set(t, f, map[string]any{"N3": "maybe"}) },
			want: []where{{3, "Decision"}},
			says: `unknown decision "maybe"`,
		},
		{
			name: "bad version",
			edit: func(f *excelize.File) { set(t, f, map[string]any{"N5": "approve", "Q5": "x"}) },
			want: []where{{5, "Version"}},
			says: `version "x"`,
		},
		{
			name: "empty version",
			edit: func(f *excelize.File) { set(t, f, map[string]any{"N5": "approve", "Q5": ""}) },
			want: []where{{5, "Version"}},
			says: `version ""`,
		},
		{
			name: "decision without a finding",
			edit: func(f *excelize.File) { set(t, f, map[string]any{"N12": "approve", "Q12": 0}) },
			want: []where{{12, "Finding"}},
			says: "a decision but no finding",
		},
		{
			name: "finding decided twice",
			edit: func(f *excelize.File) {
				set(t, f, map[string]any{"A3": "run-1-0001", "N2": "approve", "N3": "reject"})
			},
			want: []where{{3, "Finding"}},
			says: `finding "run-1-0001" already decided on row 2`,
		},
		{
			name: "every bad line",
			edit: func(f *excelize.File) {
				set(t, f, map[string]any{"N3": "maybe", "N5": "approve", "Q5": "x", "N6": "approve"})
			},
			want: []where{{3, "Decision"}, {5, "Version"}},
			says: "maybe",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := reviewed(t, tt.edit)
			got, err := reports.ReadDecisions(path)
			if err == nil {
				t.Fatalf("got %+v and no error", got)
			}
			if got != nil {
				t.Errorf("got decisions %+v with the error", got)
			}
			var at []where
			for _, e := range unjoin(err) {
				var pe *reconcile.ParseError
				if !errors.As(e, &pe) {
					t.Fatalf("got %T %v, want a *reconcile.ParseError", e, e)
				}
				if pe.File != path {
					t.Errorf("file: got %q, want %q", pe.File, path)
				}
				at = append(at, where{pe.Line, pe.Column})
			}
			if !slices.Equal(at, tt.want) {
				t.Errorf("errors at %+v, want %+v", at, tt.want)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, tt.says) {
				t.Errorf("got %q, want it to name the file and say %q", msg, tt.says)
			}
		})
	}

	t.Run("no Review sheet", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "other.xlsx")
		f := excelize.NewFile()
		if err := f.SaveAs(path); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err := reports.ReadDecisions(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "no Review sheet") {
			t.Errorf("got %v, want an error naming the file and the missing sheet", err)
		}
	})

	t.Run("not a workbook", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing.xlsx")
		if _, err := reports.ReadDecisions(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("got %v, want an error naming the file", err)
		}
	})
}

// unjoin returns the errors an errors.Join holds, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
