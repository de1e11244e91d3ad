/* svg.h -- a small SVG emitter for the report's charts (backends/svg.c):
 * a plot area with linear or logarithmic axes, SI-prefixed ticks, line
 * series with markers, stacked horizontal bars and a legend, written with
 * fixed formats so the same numbers give the same bytes.  Every string
 * from an input goes through esc_xml.  It draws what it is given; the
 * numbers come from the passes (docs/report.md). */
#ifndef ORACLEC_BACKENDS_SVG_H
#define ORACLEC_BACKENDS_SVG_H

#include <stdbool.h>
#include <stdio.h>

/* The Okabe-Ito palette and three of Paul Tol's (colour-blind safe), by
 * index modulo 11; a dash pattern per series ("" solid), modulo 11. */
const char *svg_colour(int i);
const char *svg_dash(int i);
/* v with an SI prefix and its unit: "11.5 ms", "3.2 s", "4.1 GB". */
const char *svg_unit(double v, const char *unit, char *buf, size_t n);

typedef struct Axis {
	double lo, hi;      /* the values at the ends (log: both > 0) */
	bool log;           /* logarithmic (decades) */
	const char *label;  /* with the unit, e.g. "epoch time (s)" */
} Axis;

/* A plot area of w x h pixels at (x, y) of the SVG, and its axes. */
typedef struct Plot {
	FILE *f;
	double x, y, w, h;
	Axis ax, ay;
} Plot;

/* An SVG document of w x h pixels with a title (for screen readers and
 * tooltips); svg_end closes it. */
void svg_begin(FILE *f, double w, double h, const char *id, const char *title);
void svg_end(FILE *f);

/* A plot's frame: axes, ticks with SI-prefixed labels, grid lines and the
 * axis labels. */
void plot_frame(const Plot *p);
/* The pixel position of value v on the x (y) axis. */
double plot_x(const Plot *p, double v);
double plot_y(const Plot *p, double v);
/* The lower and upper ends of a log axis holding lo..hi: whole decades. */
void axis_decades(double lo, double hi, double *a, double *b);
/* A linear axis from 0 holding hi: a 1, 2 or 5 times a power of ten. */
double axis_nice(double hi);

/* A line through the n points with a marker at each, in colour and dash
 * c; the group has class `series` and data-name `name`, each marker a
 * tooltip of its values: x a count of xunit ("GPU"), y in yunit. */
void plot_series(const Plot *p, const double *x, const double *y, int n, int c,
		 const char *name, const char *xunit, const char *yunit);
/* A cross at (x, y), class `infeasible`, with the reason as its title. */
void plot_cross(const Plot *p, double x, double y, const char *why);
/* A ring at (x, y), class `recommended`, with a title. */
void plot_ring(const Plot *p, double x, double y, const char *title);
/* A dashed line from (x0, y0) to (x1, y1) in data units, class cls. */
void plot_dashed(const Plot *p, double x0, double y0, double x1, double y1, const char *cls);

/* One stacked horizontal bar in row `row` of `rows` (its label at the
 * left): the n parts v[] in colours 0..n-1, each a rect of class `bar`
 * with its part's name and value in `unit` as its title; cls is added to
 * the row's group (e.g. "recommended"). */
void plot_hbar(const Plot *p, int row, int rows, const char *label, const double *v,
	       const char *const *part, int n, const char *cls, const char *unit);

/* A legend of n entries at (x, y), one row, wrapped at width w. */
void svg_legend(FILE *f, double x, double y, double w, const char *const *name, int n);
/* The same with a line in each entry's colour and dash (plot_series's). */
void svg_legend_lines(FILE *f, double x, double y, double w, const char *const *name,
		      const int *colour, int n);

/* Text at (x, y) with its anchor (start, middle, end) and class. */
void svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *s);

/* v with an SI prefix and up to 3 significant digits, "12.5 G", into buf. */
const char *svg_si(double v, char *buf, size_t n);

#endif
