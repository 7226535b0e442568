package ui

import (
	"math"
	"strconv"
)

// The chart is a horizontal bar chart drawn as inline SVG by the template from
// the geometry computed here: no library, no script, nothing fetched.
const (
	chartWidth   = 640
	chartLabelW  = 130 // room for the labels left of the bars
	chartValueW  = 60  // room for the values right of the bars
	chartBarH    = 26
	chartGap     = 12
	chartPadding = 8
)

// barInput is one bar's label and value.
type barInput struct {
	Label string
	Value int64
	// Class names the bar's colour in the stylesheet.
	Class string
}

// bar is one bar placed on the chart.
type bar struct {
	barInput
	Y, Width, TextY int
	ValueX          int
}

// barChart is what the template draws: its size, its title for assistive
// technology, the bars and the axis ticks.
type barChart struct {
	Title         string
	Width, Height int
	BarX          int
	Bars          []bar
	Ticks         []tick
}

// tick is one vertical grid line with its value.
type tick struct {
	X     int
	Label string
}

// drawBars lays the bars out on a scale from 0 to a round maximum, so the grid
// lines fall on whole numbers people can read.
func drawBars(title string, rows []barInput) barChart {
	var top int64
	for _, r := range rows {
		top = max(top, r.Value)
	}
	scale := niceMax(top)
	plotW := chartWidth - chartLabelW - chartValueW
	c := barChart{Title: title, Width: chartWidth, BarX: chartLabelW,
		Height: chartPadding*2 + len(rows)*(chartBarH+chartGap) + 14}
	for i, r := range rows {
		y := chartPadding + i*(chartBarH+chartGap)
		w := int(math.Round(float64(r.Value) / float64(scale) * float64(plotW)))
		if r.Value > 0 && w < 2 {
			w = 2 // a non-zero count is never drawn as nothing
		}
		c.Bars = append(c.Bars, bar{barInput: r, Y: y, Width: w, TextY: y + chartBarH/2 + 5, ValueX: chartLabelW + w + 6})
	}
	const ticks = 4
	for i := 0; i <= ticks; i++ {
		v := scale * int64(i) / ticks
		c.Ticks = append(c.Ticks, tick{X: chartLabelW + int(float64(plotW)*float64(i)/ticks), Label: strconv.FormatInt(v, 10)})
	}
	return c
}

// niceMax is the smallest of 4, 8, 20, 40, 80, 200, … (four even steps of 1, 2
// or 5 times a power of ten) that is at least v.
func niceMax(v int64) int64 {
	if v <= 4 {
		return 4
	}
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if top := 4 * m * p; top >= v {
				return top
			}
		}
	}
}
