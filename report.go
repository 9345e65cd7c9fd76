package warren

import (
	"io"

	"github.com/warrenhq/warren/report"
)

// ErrBadReportInput is wrapped by WriteReport's errors that are the directory's fault: one that is
// neither a run nor a sweep directory, or a file in it that does not parse (the error names the
// file, the line and what would be valid). `host report` exits 2 for them.
var ErrBadReportInput = report.ErrBadInput

// WriteReport writes the HTML report of dir to out: one self-contained page (the charting
// library and the data inlined, no network needed to open it) with the charts of a run directory
// (host run --out: agents by phase, throughput, stage graphs with edge counts, visit lengths,
// token spend) or of a sweep directory (host sweep: each metric against each parameter, with its
// spread across seeds). It is what `host report` writes, so an embedder gets the same page; the
// same directory gives the same bytes. docs/report.md describes the page.
func WriteReport(dir string, out io.Writer) error {
	return report.Write(out, dir)
}
