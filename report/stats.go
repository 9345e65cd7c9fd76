package report

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// maxBins is the most bins a histogram gets: enough to show a distribution's shape, few enough
// that a run with 20,000 stages still embeds a small page.
const maxBins = 40

// maxPoints is the most points a per-tick series gets; a longer run is drawn in buckets of
// whole ticks (see bucketWidth), so a 100,000-tick run embeds 2,000 points, not 100,000.
const maxPoints = 2000

// histogram is a distribution in bins of equal width: bin i holds the values v with
// Lo[i] <= v < Lo[i]+Width.
type histogram struct {
	// Labels name the bins on the axis: "3" for a one-tick bin, "3–4" for whole ticks 3 and 4,
	// "0.5–1" for [0.5, 1) ms.
	Labels []string  `json:"labels"`
	Lo     []float64 `json:"lo"`
	Width  float64   `json:"width"`
	Counts []int     `json:"counts"`
}

// box is the five numbers a box plot draws, nearest-rank percentiles as the metrics tables
// compute them (so the box's median is stages.csv's), with the count and mean for its tooltip.
type box struct {
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	N      int     `json:"n"`
}

// percentile is the nearest-rank p-th percentile of sorted values: the value at rank
// ceil(p/100 × n), always one of the values.
func percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// boxOf summarises values (at least one), which it sorts in place.
func boxOf(values []float64) box {
	slices.Sort(values)
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return box{Min: values[0], Q1: percentile(values, 25), Median: percentile(values, 50), Q3: percentile(values, 75),
		Max: values[len(values)-1], Mean: sum / float64(len(values)), N: len(values)}
}

// niceStep is the smallest step of the form {1, 2, 5} × 10^k that is at least span/parts, as
// its mantissa and exponent, so bounds compute exactly (lo = i × m × 10^k) and label cleanly.
// integer asks for a step of at least 1.
func niceStep(span float64, parts int, integer bool) (mant int64, exp int) {
	raw := span / float64(parts)
	if raw <= 0 || integer && raw <= 1 {
		return 1, 0
	}
	exp = int(math.Floor(math.Log10(raw)))
	for {
		for _, m := range [...]int64{1, 2, 5} {
			if stepValue(m, exp) >= raw*(1-1e-12) {
				return m, exp
			}
		}
		exp++
	}
}

// stepValue is m × 10^exp, computed so that a negative exp divides (0.1 is 1/10, not 1 × 0.1).
func stepValue(m int64, exp int) float64 {
	if exp >= 0 {
		return float64(m) * math.Pow10(exp)
	}
	return float64(m) / math.Pow10(-exp)
}

// histogramOf bins values (at least one) into about maxBins bins (one more at most, as the first
// bin starts at a multiple of the width) of a nice width; integer
// values (ticks) get whole-number bins labelled by the values they hold.
func histogramOf(values []float64, integer bool) histogram {
	lo, hi := slices.Min(values), slices.Max(values)
	span := hi - lo
	if integer {
		span++ // ticks 3..5 take three one-tick bins
	}
	mant, exp := niceStep(span, maxBins, integer)
	step := stepValue(mant, exp)
	first := int64(math.Floor(lo / step))
	last := int64(math.Floor(hi / step))
	n := int(last - first + 1)
	h := histogram{Width: step, Lo: make([]float64, n), Labels: make([]string, n), Counts: make([]int, n)}
	for i := range n {
		k := first + int64(i)
		h.Lo[i] = stepValue(k*mant, exp)
		next := stepValue((k+1)*mant, exp)
		switch {
		case integer && step == 1:
			h.Labels[i] = formatNumber(h.Lo[i])
		case integer:
			h.Labels[i] = formatNumber(h.Lo[i]) + "–" + formatNumber(next-1)
		default:
			h.Labels[i] = formatNumber(h.Lo[i]) + "–" + formatNumber(next)
		}
	}
	for _, v := range values {
		i := int(int64(math.Floor(v/step)) - first)
		h.Counts[min(max(i, 0), n-1)]++
	}
	return h
}

// formatNumber writes a number as briefly as it reads back exactly: 3, 0.25, 1500.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// spread is a metric's values across a sweep's seeds at one point: their mean, range and
// standard deviation (the sample's, n − 1; 0 for one value).
type spread struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	SD   float64 `json:"sd"`
	N    int     `json:"n"`
}

// spreadOf summarises values (at least one).
func spreadOf(values []float64) spread {
	s := spread{Min: values[0], Max: values[0], N: len(values)}
	sum := 0.0
	for _, v := range values {
		sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	s.Mean = sum / float64(len(values))
	if len(values) > 1 {
		ss := 0.0
		for _, v := range values {
			ss += (v - s.Mean) * (v - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(len(values)-1))
	}
	return s
}

// bucketWidth is how many ticks one point of a per-tick series stands for: 1 up to maxPoints
// ticks, then the smallest width that brings the series to maxPoints points or fewer.
func bucketWidth(ticks int) int {
	return max(1, (ticks+maxPoints-1)/maxPoints)
}

// decimalSum adds exact decimal numbers (money, as the trace writes it) without rounding.
type decimalSum struct {
	sum    big.Rat
	places int
	// terms counts the numbers added: a sum of none is written "", not "0" (no turn had a price).
	terms int
}

// add adds s, a decimal number such as "0.0000225"; ok is false when s is not one.
func (d *decimalSum) add(s string) bool {
	var r big.Rat
	if s == "" || strings.ContainsAny(s, "eE/") {
		return false
	}
	if _, ok := r.SetString(s); !ok {
		return false
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		d.places = max(d.places, len(s)-i-1)
	}
	d.sum.Add(&d.sum, &r)
	d.terms++
	return true
}

// addSum adds another sum.
func (d *decimalSum) addSum(o *decimalSum) {
	d.sum.Add(&d.sum, &o.sum)
	d.places = max(d.places, o.places)
	d.terms += o.terms
}

// String writes the sum exactly, without trailing zeros ("0.00045585", "0"), or "" when nothing
// was added.
func (d *decimalSum) String() string {
	if d.terms == 0 {
		return ""
	}
	s := d.sum.FloatString(d.places)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// float is the sum as a float64, for drawing; tables show String.
func (d *decimalSum) float() float64 {
	f, _ := d.sum.Float64()
	return f
}
