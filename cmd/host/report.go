package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/warrenhq/warren"
)

// reportCmd is `host report DIR [--out FILE]`: the HTML report of a run or a sweep directory.
type reportCmd struct {
	Dir string `arg:"" help:"A run directory (host run --out; a state directory, with only its trace, works too) or a sweep directory (host sweep)."`
	Out string `help:"The HTML file to write (default: DIR/report.html). The page is self-contained: it needs no network to open." placeholder:"FILE"`
}

// Run renders the page in memory, then writes it whole: a bad directory leaves no file behind,
// and an existing report is replaced only by a complete one.
func (r *reportCmd) Run(e *env) error {
	out := r.Out
	if out == "" {
		out = filepath.Join(r.Dir, "report.html")
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		fmt.Fprintf(e.stderr, "host: --out %s is a directory; name the file to write, for example %s\n", out, filepath.Join(out, "report.html"))
		return errBadInput
	}
	var page bytes.Buffer
	if err := warren.WriteReport(r.Dir, &page); err != nil {
		fmt.Fprintf(e.stderr, "host: %v\n", err)
		return errBadInput
	}
	if err := writeWhole(out, page.Bytes()); err != nil {
		fmt.Fprintf(e.stderr, "host: writing the report: %v\n", err)
		return errBadInput
	}
	fmt.Fprintf(e.stdout, "wrote %s (%d KiB)\n", out, (page.Len()+1023)/1024)
	return nil
}

// writeWhole writes data to path through a temporary file in the same directory, renamed over
// path once it is complete.
func writeWhole(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
