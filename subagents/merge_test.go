package subagents

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFairShares(t *testing.T) {
	cases := []struct {
		name    string
		lengths []int
		budget  int
		want    []int
	}{
		{"everything fits", []int{3, 5, 2}, 100, []int{3, 5, 2}},
		{"exact fit", []int{3, 5, 2}, 10, []int{3, 5, 2}},
		{"one long text", []int{10, 1000, 20}, 100, []int{10, 70, 20}},
		{"two long texts split evenly", []int{10, 1000, 500}, 110, []int{10, 50, 50}},
		{"remainder goes to the lowest index", []int{1000, 1000, 1000}, 10, []int{4, 3, 3}},
		{"remainder skips short texts", []int{1, 100, 100}, 10, []int{1, 5, 4}},
		{"short text just over an even share", []int{4, 4, 100}, 11, []int{4, 4, 3}},
		{"zero budget", []int{5, 5}, 0, []int{0, 0}},
		{"negative budget", []int{5}, -3, []int{0}},
		{"negative length counts as empty", []int{-4, 50}, 10, []int{0, 10}},
		{"no texts", nil, 10, []int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FairShares(tc.lengths, tc.budget); !slices.Equal(got, tc.want) {
				t.Errorf("FairShares(%v, %d) = %v, want %v", tc.lengths, tc.budget, got, tc.want)
			}
		})
	}
}

// TestFairSharesProperties checks the max-min fairness rules on random inputs.
func TestFairSharesProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 500 {
		lengths := make([]int, 1+rng.IntN(30))
		for j := range lengths {
			lengths[j] = rng.IntN(400)
		}
		budget := rng.IntN(4000)
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			shares := FairShares(lengths, budget)
			sum, total, minCut := 0, 0, -1
			for j, s := range shares {
				sum += s
				total += lengths[j]
				if s < 0 || s > lengths[j] {
					t.Fatalf("share %d of text %d (length %d) out of range", s, j, lengths[j])
				}
				if s < lengths[j] && (minCut < 0 || s < minCut) {
					minCut = s
				}
			}
			if sum > budget {
				t.Fatalf("shares %v sum to %d, past the budget %d", shares, sum, budget)
			}
			if total <= budget && sum != total {
				t.Fatalf("everything fits (%d <= %d) yet shares %v cut something", total, budget, shares)
			}
			if total > budget && sum != budget {
				t.Fatalf("shares %v leave %d of the budget unused while texts are cut", shares, budget-sum)
			}
			// Fairness: no text gets more than one character above the smallest cut share,
			// so a short text is untouched and long ones are cut evenly.
			for j, s := range shares {
				if minCut >= 0 && s > minCut+1 {
					t.Fatalf("text %d got %d while a cut text got only %d: %v of %v", j, s, minCut, shares, lengths)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	cases := []struct {
		name    string
		results []WorkerResult
		total   int
		stopped bool
		budget  int
		want    string
	}{
		{
			name: "all done, in index order whatever the result order",
			results: []WorkerResult{
				{Index: 1, Worker: "p/2", Status: "done", Output: "second"},
				{Index: 0, Worker: "p/1", Status: "done", Output: "first"},
			},
			total: 2,
			want:  "fan_out of 2 items: 2 done, 0 failed, 0 killed\n[0] done p/1: first\n[1] done p/2: second",
		},
		{
			name: "fail_all stopped with items never run",
			results: []WorkerResult{
				{Index: 0, Worker: "p/1", Status: "done", Output: "ok"},
				{Index: 1, Worker: "p/2", Status: "failed", Reason: "model error: quota"},
				{Index: 2, Worker: "p/3", Status: "killed", Reason: "fail_all: item 1 failed"},
			},
			total:   4,
			stopped: true,
			want: "fan_out of 4 items: 1 done, 1 failed, 1 killed (stopped after the first failure: fail_all)\n" +
				"[0] done p/1: ok\n[1] failed p/2: model error: quota\n[2] killed p/3: fail_all: item 1 failed\n[3] not run",
		},
		{
			name: "long outputs share the budget, short ones stay whole",
			results: []WorkerResult{
				{Index: 0, Worker: "p/1", Status: "done", Output: strings.Repeat("a", 100)},
				{Index: 1, Worker: "p/2", Status: "done", Output: "tiny"},
				{Index: 2, Worker: "p/3", Status: "done", Output: strings.Repeat("é", 50)},
			},
			total:  3,
			budget: 91 + 24, // the header and prefixes take 91; the texts share 24
			want: "fan_out of 3 items: 3 done, 0 failed, 0 killed\n" +
				"[0] done p/1: " + strings.Repeat("a", 10) + "…[+90 chars]\n" +
				"[1] done p/2: tiny\n" +
				"[2] done p/3: " + strings.Repeat("é", 10) + "…[+40 chars]",
		},
		{
			name: "fallbacks: a failure without a reason shows its output, silence shows a placeholder",
			results: []WorkerResult{
				{Index: 0, Worker: "p/1", Status: "failed", Output: "partial"},
				{Index: 1, Worker: "p/2", Status: "done"},
			},
			total: 2,
			want:  "fan_out of 2 items: 1 done, 1 failed, 0 killed\n[0] failed p/1: partial\n[1] done p/2: (no output)",
		},
		{
			name: "out-of-range and duplicate results are ignored",
			results: []WorkerResult{
				{Index: 0, Worker: "p/1", Status: "done", Output: "kept"},
				{Index: 0, Worker: "p/9", Status: "done", Output: "duplicate"},
				{Index: 5, Worker: "p/5", Status: "done", Output: "beyond"},
				{Index: -1, Worker: "p/0", Status: "done", Output: "negative"},
			},
			total: 1,
			want:  "fan_out of 1 items: 1 done, 0 failed, 0 killed\n[0] done p/1: kept",
		},
		{
			name:    "prefixes over the budget: items listed without texts while it lasts",
			results: tenDone(),
			total:   10,
			budget:  48 + 13 + compactReserve, // the header takes 48, ten prefixes 150: only the first fits
			want: "fan_out of 10 items: 10 done, 0 failed, 0 killed\n[0] done p/0\n" +
				"… 9 more items not listed: merge_chars (181) is too small to list every item; each worker's final record keeps its output",
		},
		{
			name:  "no items",
			total: 0,
			want:  "fan_out of 0 items: 0 done, 0 failed, 0 killed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(tc.results, tc.total, tc.stopped, tc.budget)
			if got != tc.want {
				t.Errorf("Merge =\n%s\nwant\n%s", got, tc.want)
			}
			if again := Merge(tc.results, tc.total, tc.stopped, tc.budget); again != got {
				t.Error("Merge is not deterministic")
			}
		})
	}
}

func TestMergeDefaultBudget(t *testing.T) {
	results := make([]WorkerResult, 4)
	for i := range results {
		results[i] = WorkerResult{Index: i, Worker: "p/" + strconv.Itoa(i+1), Status: "done", Output: strings.Repeat("x", 10000)}
	}
	got := Merge(results, len(results), false, 0)
	marks := regexp.MustCompile(`…\[\+\d+ chars\]`)
	if n := utf8.RuneCountInString(marks.ReplaceAllString(got, "")); n != 16000 {
		t.Errorf("the merged result has %d characters besides the cut markers, want the default budget, 16000", n)
	}
	kept := map[int]bool{}
	for _, line := range strings.Split(got, "\n")[1:] {
		kept[strings.Count(line, "x")] = true
	}
	if len(kept) > 2 {
		t.Errorf("the four equal texts were cut to %d different lengths, want shares within one character", len(kept))
	}
}

// tenDone is ten finished workers, p/0 to p/9.
func tenDone() []WorkerResult {
	out := make([]WorkerResult, 10)
	for i := range out {
		out[i] = WorkerResult{Index: i, Worker: "p/" + strconv.Itoa(i), Status: "done", Output: "out"}
	}
	return out
}
