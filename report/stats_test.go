package report

import (
	"slices"
	"testing"
)

func TestHistogramOf(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i)
	}
	tests := []struct {
		name    string
		values  []float64
		integer bool
		labels  []string // the first and the last label
		counts  []int    // every count, or the first and the last when there are many
		n       int
	}{
		{"one tick value", []float64{2, 2, 2}, true, []string{"2", "2"}, []int{3}, 1},
		{"ticks 0 to 2, a bin each", []float64{0, 2, 2, 1}, true, []string{"0", "2"}, []int{1, 1, 2}, 3},
		{"a hundred ticks in bins of five", hundred, true, []string{"0–4", "95–99"}, []int{5, 5}, 20},
		{"milliseconds in bins of one", []float64{12.5, 45.5, 45.5, 45.5, 45.5}, false, []string{"12–13", "45–46"}, []int{1, 4}, 34},
		{"tenths of a millisecond", []float64{0.05, 0.3, 0.31}, false, []string{"0.05–0.06", "0.31–0.32"}, []int{1, 1}, 27},
		{"one wall value", []float64{3.3}, false, []string{"3–4", "3–4"}, []int{1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := histogramOf(tt.values, tt.integer)
			if len(h.Counts) != tt.n || len(h.Labels) != tt.n || len(h.Lo) != tt.n {
				t.Fatalf("%d bins (%v), want %d", len(h.Counts), h.Labels, tt.n)
			}
			if h.Labels[0] != tt.labels[0] || h.Labels[tt.n-1] != tt.labels[1] {
				t.Errorf("labels %v, want %s … %s", h.Labels, tt.labels[0], tt.labels[1])
			}
			counts := h.Counts
			if len(tt.counts) == 2 && tt.n > 3 {
				counts = []int{h.Counts[0], h.Counts[tt.n-1]}
			}
			if !slices.Equal(counts, tt.counts) {
				t.Errorf("counts %v, want %v", h.Counts, tt.counts)
			}
			total := 0
			for _, c := range h.Counts {
				total += c
			}
			if total != len(tt.values) {
				t.Errorf("the bins hold %d values, want %d", total, len(tt.values))
			}
		})
	}
}

func TestBoxOfIsNearestRank(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   box
	}{
		{"one to ten", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, box{Min: 1, Q1: 3, Median: 5, Q3: 8, Max: 10, Mean: 5.5, N: 10}},
		{"one value", []float64{4}, box{Min: 4, Q1: 4, Median: 4, Q3: 4, Max: 4, Mean: 4, N: 1}},
		{"plan's visits", []float64{2, 0, 2, 2, 2}, box{Min: 0, Q1: 2, Median: 2, Q3: 2, Max: 2, Mean: 1.6, N: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := boxOf(tt.values); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   spread
	}{
		{"three seeds", []float64{88, 86, 84}, spread{Mean: 86, Min: 84, Max: 88, SD: 2, N: 3}},
		{"one seed", []float64{5}, spread{Mean: 5, Min: 5, Max: 5, N: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spreadOf(tt.values); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecimalSum(t *testing.T) {
	tests := []struct {
		name  string
		terms []string
		want  string
		bad   string // a term add must refuse
	}{
		{"the live run's turns", []string{"0.0000225", "0.0000225", "0.00041085"}, "0.00045585", ""},
		{"whole dollars", []string{"12.5", "0.5"}, "13", ""},
		{"cancelling out", []string{"-0.5", "0.5"}, "0", ""},
		{"nothing added", nil, "", ""},
		{"an exponent", nil, "", "1e-3"},
		{"a fraction", nil, "", "1/3"},
		{"not a number", nil, "", "cheap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d decimalSum
			for _, s := range tt.terms {
				if !d.add(s) {
					t.Fatalf("add(%q) refused", s)
				}
			}
			if tt.bad != "" && d.add(tt.bad) {
				t.Errorf("add(%q) took it; want it refused", tt.bad)
			}
			if got := d.String(); got != tt.want {
				t.Errorf("sum %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNiceStep(t *testing.T) {
	tests := []struct {
		name    string
		span    float64
		parts   int
		integer bool
		want    float64
	}{
		{"ticks need no bins wider than one", 30, 40, true, 1},
		{"2.5 rounds up to 5", 100, 40, true, 5},
		{"0.825 rounds up to 1", 33, 40, false, 1},
		{"0.00675 rounds up to 0.01", 0.27, 40, false, 0.01},
		{"exactly 2", 80, 40, false, 2},
		{"no span", 0, 40, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stepValue(niceStep(tt.span, tt.parts, tt.integer)); got != tt.want {
				t.Errorf("step %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBucketWidth(t *testing.T) {
	tests := []struct {
		name  string
		ticks int
		want  int
	}{
		{"short run, a point a tick", 122, 1},
		{"exactly the limit", maxPoints, 1},
		{"one tick over", maxPoints + 1, 2},
		{"the tick limit", 100000, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bucketWidth(tt.ticks); got != tt.want {
				t.Errorf("bucketWidth(%d) = %d, want %d", tt.ticks, got, tt.want)
			}
		})
	}
}
