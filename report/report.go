// Package report renders what a run or a sweep wrote as one self-contained HTML page: charts of
// the agents by phase over ticks, throughput, each blueprint's stage graph with how often each
// edge was taken, how long stage visits took, token spend, and for a sweep each metric against
// each parameter with its spread across seeds. `host report` writes it.
//
// The page needs no network: Apache ECharts (assets/echarts.min.js, whose version and SHA-256
// assets/README.md gives and a test checks), the page's own script and style, and the data are
// all inlined. The data is aggregated here, in Go (per-tick series, histograms, box plots,
// means), so the page's size does not grow with the number of agents. The same directory gives
// the same bytes: nothing reads the clock, and no map's order reaches the page.
//
// Inputs: a run directory (host run --out) holds trace.jsonl, timeline.csv, graph.json,
// manifest.json and metrics/*.csv, any of which may be missing (a state directory has only its
// trace), which the page then says; a sweep directory holds sweep.json, results.csv and a run
// directory per cell. docs/report.md describes each chart and how it is computed.
package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// echartsJS is Apache ECharts, minified, as npm publishes it (see assets/README.md).
//
//go:embed assets/echarts.min.js
var echartsJS string

// EChartsJS returns the Apache ECharts build the report embeds (minified, as npm publishes it),
// for other pages of the host that draw charts: host serve's dashboard serves it, so the binary
// carries one copy.
func EChartsJS() []byte { return []byte(echartsJS) }

// pageJS draws the charts from the page's data.
//
//go:embed assets/report.js
var pageJS string

// pageCSS is the page's style.
//
//go:embed assets/report.css
var pageCSS string

// pageHTML is the page's html/template.
//
//go:embed assets/page.html
var pageHTML string

// pageTemplate lays the page out; html/template escapes every value by where it lands (text,
// attribute, URL, and the data as JSON inside its script element).
var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// Write renders the report of dir, a run directory or a sweep directory (told apart by their
// files), to w as one HTML page. An error wrapping ErrBadInput names what is wrong with the
// input (the file, the line, and what would be valid); any other is w's.
func Write(w io.Writer, dir string) error {
	p, err := build(dir)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := p.render(&buf); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// build reads dir and computes its page.
func build(dir string) (*page, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, badWrap(err, "%s", dir)
	}
	if !st.IsDir() {
		return nil, badf("%s: not a directory; want a run directory (host run --out) or a sweep directory (host sweep)", dir)
	}
	if exists(filepath.Join(dir, fileSweep)) {
		return sweepPage(dir)
	}
	for _, name := range []string{fileTrace, fileTimeline, fileGraph, fileManifest, dirMetrics} {
		if exists(filepath.Join(dir, name)) {
			return runPage(dir)
		}
	}
	return nil, badf("%s: neither a run directory (with trace.jsonl, timeline.csv, graph.json, manifest.json or metrics/, as host run --out writes) nor a sweep directory (with sweep.json and results.csv, as host sweep writes)", dir)
}

// page is everything the template shows.
type page struct {
	Kind  string // run or sweep
	Title string
	// Figures are the headline numbers (run.csv's columns, or the sweep's parameters), as
	// written; FiguresFrom names where they come from.
	Figures     []keyValue
	FiguresFrom string
	// Info is a table of keys and values (the manifest) under InfoTitle.
	Info      []keyValue
	InfoTitle string
	// Notes say what the directory lacks and what the page leaves out for it.
	Notes  []string
	Charts []chart
	Tables []table
}

// chart is one chart's section: its title, its explanation, a <select> when the chart shows
// one of several things, and the data the page's script draws (Type says how).
type chart struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"-"`
	Explain string `json:"-"`
	// Select lists what the chart can show, one at a time; the script reads the chosen index.
	Select []option `json:"-"`
	// Height is the chart's height in CSS pixels (0: the default).
	Height int `json:"-"`
	// After is a table shown under the chart.
	After *table `json:"-"`
	Data  any    `json:"data"`
}

// option is one choice of a chart's <select>.
type option struct {
	Value    int
	Label    string
	Selected bool
}

// options lists labels as a select's options, sel chosen.
func options(labels []string, sel int) []option {
	out := make([]option, len(labels))
	for i, l := range labels {
		out[i] = option{Value: i, Label: l, Selected: i == sel}
	}
	return out
}

// table is a table on the page: a header, rows of cells (a cell may link), and how many rows
// were left out.
type table struct {
	Title  string
	Header []string
	Rows   [][]cell
	More   int
}

// cell is a table cell's text and, when it links, its target.
type cell struct {
	Text string
	Href string
}

// add appends a chart.
func (p *page) add(c chart) { p.Charts = append(p.Charts, c) }

// pageData is the JSON the page's script reads: every chart's id, type and data.
type pageData struct {
	Kind   string  `json:"kind"`
	Charts []chart `json:"charts"`
}

// render executes the template into w.
func (p *page) render(w io.Writer) error {
	data, err := json.Marshal(pageData{Kind: p.Kind, Charts: p.Charts})
	if err != nil {
		return fmt.Errorf("encoding the page's data: %w", err)
	}
	err = pageTemplate.Execute(w, struct {
		*page
		// Data is JSON (json.Marshal escapes <, > and & inside strings, so it cannot close
		// its script element); the library and the script are the files this package embeds.
		Data, ECharts, Script template.JS
		Style                 template.CSS
	}{p, template.JS(data), template.JS(echartsJS), template.JS(pageJS), template.CSS(pageCSS)})
	if err != nil {
		return fmt.Errorf("rendering the page: %w", err)
	}
	return nil
}

// joinList writes "a, b and c".
func joinList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
