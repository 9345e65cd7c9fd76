package report

import (
	"cmp"
	"slices"
	"strconv"
)

// tokenChart is the tokens the run's live model turns used, per tick and model (summed over a
// bucket of ticks in a long run), and the run's cost so far at each point, in dollars.
type tokenChart struct {
	Ticks  []int64     `json:"ticks"`
	Bucket int         `json:"bucket"`
	Models []intSeries `json:"models"`
	// Cost is the cumulative cost at each point's last tick; nil when no turn had a price.
	Cost []float64 `json:"cost"`
}

// addTokens adds the token spend chart and the table of each model's totals, or a note when
// no model turn reported tokens (scripted and policy models spend none).
func (p *page) addTokens(ts *traceStats) {
	if len(ts.models) == 0 {
		p.Notes = append(p.Notes, "No model turn reported tokens (scripted and policy models spend none): token spend is not drawn.")
		return
	}
	n := int(ts.lastTick) + 1
	w := bucketWidth(n)
	buckets := (n + w - 1) / w
	c := &tokenChart{Bucket: w, Ticks: make([]int64, buckets)}
	for b := range buckets {
		c.Ticks[b] = min(int64(b*w+w-1), ts.lastTick)
	}
	models := slices.Clone(ts.models)
	slices.SortFunc(models, func(a, b *modelSpend) int { return cmp.Compare(a.Model, b.Model) })
	t := table{Title: "Token spend by model (from trace.jsonl's model_turn events)",
		Header: []string{"model", "turns", "prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens", "tokens", "cost_usd"}}
	var all modelSpend
	for _, m := range models {
		s := intSeries{Name: m.Model, Data: make([]int64, buckets)}
		for tick, k := range m.tokensAt {
			s.Data[tick/int64(w)] += k
		}
		c.Models = append(c.Models, s)
		t.Rows = append(t.Rows, spendRow(m.Model, m))
		all.Turns += m.Turns
		all.Prompt += m.Prompt
		all.Completion += m.Completion
		all.Read += m.Read
		all.Written += m.Written
		all.Cost.addSum(&m.Cost)
	}
	if len(models) > 1 {
		t.Rows = append(t.Rows, spendRow("all models", &all))
	}
	if len(ts.costAt) > 0 {
		perBucket := make([]decimalSum, buckets)
		for tick, d := range ts.costAt {
			perBucket[tick/int64(w)].addSum(d)
		}
		var run decimalSum
		for b := range perBucket {
			run.addSum(&perBucket[b])
			c.Cost = append(c.Cost, run.float())
		}
	}
	explain := "Prompt plus completion tokens of the live model turns in each tick" + bucketNote(w) + ", stacked by model (left axis)"
	if c.Cost != nil {
		explain += ", and the run's cost so far in US dollars (right axis; the table gives it exactly)"
	}
	p.add(chart{ID: "tokens", Type: "tokens", Title: "Token spend", Data: c, Explain: explain + ". From the trace's model_turn events.", After: &t})
}

// spendRow is one row of the token table.
func spendRow(name string, m *modelSpend) []cell {
	row := []cell{{Text: name}}
	for _, v := range []int64{m.Turns, m.Prompt, m.Completion, m.Read, m.Written, m.Prompt + m.Completion} {
		row = append(row, cell{Text: strconv.FormatInt(v, 10)})
	}
	return append(row, cell{Text: m.Cost.String()})
}
