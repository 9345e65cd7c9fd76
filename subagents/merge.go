package subagents

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// defaultMergeBudget is the character budget Merge shares among the items' texts when the
// caller gives none: large enough for a useful summary of many workers, small enough that one
// fan_out result cannot swamp the parent's context.
const defaultMergeBudget = 16000

// WorkerResult is how one fan-out item ended, as the sub-agent system collected it.
type WorkerResult struct {
	// Index is the item's position in fan_out's items, from 0.
	Index int
	// Item is the work item (the worker's task).
	Item string
	// Worker is the worker's name.
	Worker string
	// Status is "done", "failed" or "killed".
	Status string
	// Output is the worker's final answer (done workers).
	Output string
	// Reason says why the worker failed or was killed.
	Reason string
}

// text is what the merged report shows for the result: the output of a done worker, the reason
// of any other, falling back to the other field so nothing a worker said is hidden.
func (r WorkerResult) text() string {
	first, second := r.Reason, r.Output
	if r.Status == "done" {
		first, second = r.Output, r.Reason
	}
	switch {
	case first != "":
		return first
	case second != "":
		return second
	}
	return "(no output)"
}

// Merge renders a fan-out's merged result, the text fan_out returns to its caller:
//
//	fan_out of 3 items: 1 done, 1 failed, 0 killed (stopped after the first failure: fail_all)
//	[0] done planner-0/1: the summary of item 0
//	[1] failed planner-0/2: model error: …
//	[2] not run
//
// The header counts the statuses; the suffix appears when stopped (fail_all ended the fan-out
// early). Then one line per item in index order, 0 to total-1: items without a result are "not
// run". Results whose Index lies outside [0, total) are ignored, and of two results for one index
// the first given wins.
//
// budget (<= 0 means 16000) bounds the result in characters. The header and the line prefixes
// come off it first; what is left is shared among the items' texts (see WorkerResult) by
// FairShares, each text shown verbatim up to its share and then marked "…[+N chars]" with the
// number of characters cut (the markers add a few characters beyond the budget). When even the
// prefixes do not fit, the items are listed without their texts for as long as the budget lasts,
// and a last line says how many more there are: the workers' final records keep every output.
// Deterministic: the same results render the same bytes.
func Merge(results []WorkerResult, total int, stopped bool, budget int) string {
	if budget <= 0 {
		budget = defaultMergeBudget
	}
	total = max(total, 0)
	byIndex := make([]*WorkerResult, total)
	for i := range results {
		r := &results[i]
		if r.Index >= 0 && r.Index < total && byIndex[r.Index] == nil {
			byIndex[r.Index] = r
		}
	}
	texts := make([]string, total)
	lengths := make([]int, total)
	prefixes := make([]string, total)
	var done, failed, killed int
	for i, r := range byIndex {
		if r == nil {
			prefixes[i] = "\n[" + strconv.Itoa(i) + "] not run"
			continue
		}
		switch r.Status {
		case "done":
			done++
		case "failed":
			failed++
		case "killed":
			killed++
		}
		prefixes[i] = "\n[" + strconv.Itoa(i) + "] " + r.Status + " " + r.Worker
		texts[i] = r.text()
		lengths[i] = utf8.RuneCountInString(texts[i])
	}
	header := "fan_out of " + strconv.Itoa(total) + " items: " + strconv.Itoa(done) + " done, " +
		strconv.Itoa(failed) + " failed, " + strconv.Itoa(killed) + " killed"
	if stopped {
		header += " (stopped after the first failure: fail_all)"
	}
	overhead := utf8.RuneCountInString(header)
	for i, p := range prefixes {
		overhead += utf8.RuneCountInString(p)
		if byIndex[i] != nil {
			overhead += len(": ")
		}
	}
	var sb strings.Builder
	sb.WriteString(header)
	if overhead > budget {
		writeCompact(&sb, prefixes, budget)
		return sb.String()
	}
	shares := FairShares(lengths, budget-overhead)
	for i, r := range byIndex {
		sb.WriteString(prefixes[i])
		if r == nil {
			continue
		}
		sb.WriteString(": ")
		writeTruncated(&sb, texts[i], lengths[i], shares[i])
	}
	return sb.String()
}

// compactReserve keeps room for the last line of a compact listing.
const compactReserve = 120

// writeCompact lists items without their texts while the budget lasts, then says how many
// are left out.
func writeCompact(sb *strings.Builder, prefixes []string, budget int) {
	used := utf8.RuneCountInString(sb.String())
	for i, p := range prefixes {
		n := utf8.RuneCountInString(p)
		if used+n > budget-compactReserve {
			sb.WriteString("\n… " + strconv.Itoa(len(prefixes)-i) + " more items not listed: merge_chars (" +
				strconv.Itoa(budget) + ") is too small to list every item; each worker's final record keeps its output")
			return
		}
		sb.WriteString(p)
		used += n
	}
}

// writeTruncated writes the first keep characters of text (which has length characters) and,
// when that cut something, the "…[+N chars]" marker.
func writeTruncated(sb *strings.Builder, text string, length, keep int) {
	if keep >= length {
		sb.WriteString(text)
		return
	}
	cut := 0
	for i := 0; i < keep; i++ {
		_, size := utf8.DecodeRuneInString(text[cut:])
		cut += size
	}
	sb.WriteString(text[:cut])
	sb.WriteString("…[+" + strconv.Itoa(length-keep) + " chars]")
}

// FairShares splits budget characters among texts of the given lengths by max-min fairness
// (water-filling): a text no longer than an even split of what is left keeps its whole length,
// and the texts longer than that share the rest evenly, the earlier ones (by index) taking the
// one-character remainders. So the shares never sum past budget, no text gets more than its
// length, and two cut texts differ by at most one character. Negative lengths count as 0; budget
// <= 0 gives every text 0. Exported so tests and documentation can show the rule Merge applies.
func FairShares(lengths []int, budget int) []int {
	shares := make([]int, len(lengths))
	if budget <= 0 || len(lengths) == 0 {
		return shares
	}
	order := make([]int, len(lengths))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(max(lengths[a], 0), max(lengths[b], 0)), cmp.Compare(a, b))
	})
	remaining := budget
	for k, i := range order {
		left := len(order) - k
		length := max(lengths[i], 0)
		if length <= remaining/left {
			shares[i] = length
			remaining -= length
			continue
		}
		// Every text from here on is longer than an even split: split evenly, the
		// remainder going one character each to the lowest indexes.
		rest := slices.Clone(order[k:])
		slices.Sort(rest)
		base, extra := remaining/left, remaining%left
		for j, idx := range rest {
			shares[idx] = base
			if j < extra {
				shares[idx]++
			}
		}
		break
	}
	return shares
}
