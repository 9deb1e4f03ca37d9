package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/xuri/excelize/v2"

	"reconcile"
)

// TrendDays is how many business dates the Trend sheet covers at most,
// the run's own included.
const TrendDays = 14

// riskCategories are the rows of the Summary sheet's money-at-risk table:
// every category of the run but those that never carry money at risk.
func riskCategories(res *reconcile.Result) []reconcile.Category {
	return slices.DeleteFunc(slices.Clone(res.Categories()), func(c reconcile.Category) bool {
		return c == reconcile.Matched || c == reconcile.Pending
	})
}

// Chart sizes, in pixels, and the rows a chart takes up (20 pixels a row)
// with one row to spare below it.
const (
	moneyChartWidth, moneyChartHeight = 640, 320
	moneyChartRows                    = moneyChartHeight/20 + 1
	trendChartWidth, trendChartHeight = 860, 380
)

// writeMoneyByCategory writes, from row on, the Summary sheet's table of
// money at risk per category, one column per currency, and under it a
// column chart of each currency's column. The amounts are money cells
// like every other in the workbook, so the charts draw exact decimals and
// no amount passes through a float64. One chart per currency rather than
// one series per currency on one chart: yen and dinars on one axis would
// make the smaller currency's bars look like nothing.
func writeMoneyByCategory(s *sheet, res *reconcile.Result, totals map[reconcile.Category]map[string]*categoryTotal, row int) {
	s.text(1, row, "Money at risk by category")
	s.style(1, row, 1, row, s.st.bold)
	row++
	currencies := sortedCurrencies(res.AtRisk())
	if len(currencies) == 0 {
		s.text(1, row, "No money at risk.")
		return
	}
	header := row
	s.header(header, slices.Concat([]string{"Category"}, currencies))
	first := header + 1
	risky := riskCategories(res)
	for i, c := range risky {
		r := first + i
		s.text(1, r, string(c))
		for k, cur := range currencies {
			var risk int64
			if t := totals[c][cur]; t != nil {
				risk = t.risk
			}
			s.money(k+2, r, risk, cur)
		}
	}
	last := first + len(risky) - 1
	for k, cur := range currencies {
		col := k + 2
		s.chart(1, last+2+k*moneyChartRows, &excelize.Chart{
			Type: excelize.Col,
			Series: []excelize.ChartSeries{{
				Name:       s.ref(col, header, col, header),
				Categories: s.ref(1, first, 1, last),
				Values:     s.ref(col, first, col, last),
			}},
			Title:      chartTitle("Money at risk by category (" + cur + ")"),
			Legend:     excelize.ChartLegend{Position: "none"},
			VaryColors: new(bool),
			YAxis: excelize.ChartAxis{
				MajorGridLines: true,
				NumFmt:         excelize.ChartNumFmt{CustomNumFmt: moneyFormat(cur)},
			},
			Dimension: excelize.ChartDimension{Width: moneyChartWidth, Height: moneyChartHeight},
			Format:    excelize.GraphicOptions{AltText: "Money at risk by category in " + cur},
		})
	}
}

// writeTrendSheet writes the Trend sheet: the findings of each category,
// one row per business date, of the earlier days in trend (oldest first;
// those not before the run's day are left out, the run's own counts being
// the ones in res) and then of the run's own day, and a line chart of
// every category but matched, which would dwarf the others. A nil trend
// means it was not read; the sheet then holds the run's day and says so.
func writeTrendSheet(s *sheet, res *reconcile.Result, trend []reconcile.TrendDay) error {
	var earlier []reconcile.TrendDay
	for _, d := range trend {
		if d.Day.Date.Before(res.Run.Day.Date) {
			earlier = append(earlier, d)
		}
	}
	earlier = earlier[max(0, len(earlier)-(TrendDays-1)):]
	days := append(slices.Clone(earlier), reconcile.TrendDay{Day: res.Run.Day, Counts: res.Counts})

	s.header(1, slices.Concat([]string{"Business Date"}, categoryNames(res)))
	for i, d := range days {
		r := i + 2
		s.text(1, r, d.Day.String())
		for k, c := range res.Categories() {
			s.int(k+2, r, d.Counts[c])
		}
	}
	last := len(days) + 1
	s.text(1, last+2, trendNote(res, trend, len(earlier)))

	var series []excelize.ChartSeries
	for k, c := range res.Categories() {
		if c == reconcile.Matched {
			continue
		}
		col := k + 2
		series = append(series, excelize.ChartSeries{
			Name:       s.ref(col, 1, col, 1),
			Categories: s.ref(1, 2, 1, last),
			Values:     s.ref(col, 2, col, last),
			Marker:     excelize.ChartMarker{Symbol: "circle", Size: 5},
		})
	}
	s.chart(1, last+4, &excelize.Chart{
		Type:       excelize.Line,
		Series:     series,
		Title:      chartTitle("Findings per business date (" + res.Run.Channel + ")"),
		Legend:     excelize.ChartLegend{Position: "right"},
		VaryColors: new(bool),
		YAxis:      excelize.ChartAxis{MajorGridLines: true, NumFmt: excelize.ChartNumFmt{CustomNumFmt: "0"}},
		Dimension:  excelize.ChartDimension{Width: trendChartWidth, Height: trendChartHeight},
		Format:     excelize.GraphicOptions{AltText: "Findings per category and business date"},
	})
	s.widths(slices.Concat([]float64{14}, slices.Repeat([]float64{18}, len(res.Categories()))))
	return s.err
}

// trendNote says in one line what the Trend sheet covers.
func trendNote(res *reconcile.Result, trend []reconcile.TrendDay, earlier int) string {
	var b strings.Builder
	switch {
	case trend == nil:
		b.WriteString("Only this run's business date: earlier dates were not read.")
	case earlier == 0:
		fmt.Fprintf(&b, "Only this run's business date: no earlier date of %s has a successful run.", res.Run.Channel)
	default:
		fmt.Fprintf(&b, "This run's business date and the %d before it with a successful run of %s (at most %d dates in all), "+
			"as their current runs counted them: superseded runs left out, the shards of a split date added up.",
			earlier, res.Run.Channel, TrendDays)
	}
	if !res.Run.Shard.Whole() {
		fmt.Fprintf(&b, " The last line is shard %s of this date only.", res.Run.Shard)
	}
	return b.String()
}

func categoryNames(res *reconcile.Result) []string {
	out := make([]string, len(res.Categories()))
	for i, c := range res.Categories() {
		out[i] = string(c)
	}
	return out
}

func chartTitle(text string) excelize.ChartTitle {
	return excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: text}}}
}
