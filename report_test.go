package warren_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/warren"
)

func TestWriteReport(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		want string // in the page, or in the error when bad
		bad  bool
	}{
		{"a run directory", filepath.Join("report", "testdata", "review"), "<title>Run: review</title>", false},
		{"a sweep directory", filepath.Join("report", "testdata", "sweep"), "<title>Sweep: gossip</title>", false},
		{"neither", filepath.Join("report", "testdata", "review", "metrics"), "neither a run directory", true},
		{"no directory", filepath.Join("report", "testdata", "nosuch"), "no such file or directory", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var page bytes.Buffer
			err := warren.WriteReport(tt.dir, &page)
			switch {
			case tt.bad && (err == nil || !errors.Is(err, warren.ErrBadReportInput) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want ErrBadReportInput saying %q", err, tt.want)
			case !tt.bad && err != nil:
				t.Fatal(err)
			case !tt.bad && !strings.Contains(page.String(), tt.want):
				t.Errorf("the page lacks %q", tt.want)
			}
		})
	}
}
