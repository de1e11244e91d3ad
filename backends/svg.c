/* svg.c -- the SVG emitter of the report's charts (svg.h).  Coordinates
 * are written with two decimals and numbers with fixed formats, so the
 * output is byte-identical for the same input. */
#include "backends/svg.h"
#include "util/escape.h"

#include <math.h>
#include <string.h>

/* Okabe and Ito, "Color Universal Design" (2008): distinguishable with
 * every common colour-vision deficiency; then Paul Tol's wine, indigo,
 * olive, teal, rose and cyan, from his colour-blind safe "muted" scheme,
 * so the fourteen strategies (and the ten parts of an iteration) each
 * have their own. */
static const char *const palette[] = { "#0072B2", "#E69F00", "#009E73", "#CC79A7",
				       "#56B4E9", "#D55E00", "#F0E442", "#000000", "#882255",
				       "#332288", "#999933", "#44AA99", "#CC6677", "#88CCEE" };
enum { NPALETTE = sizeof palette / sizeof palette[0] };

/* A dash pattern per series, so lines that cross or whose colours a
 * reader cannot tell apart (print in grey) still differ: solid first. */
static const char *const dashes[] = { "", "8 3", "2 3", "8 3 2 3", "4 4", "12 4",
				      "1 3", "8 3 2 3 2 3", "16 4", "4 2 1 2", "6 6",
				      "2 6", "10 2 2 2", "3 3 8 3" };
enum { NDASHES = sizeof dashes / sizeof dashes[0] };

const char *
svg_colour(int i)
{
	return palette[(i % NPALETTE + NPALETTE) % NPALETTE];
}

const char *
svg_dash(int i)
{
	return dashes[(i % NDASHES + NDASHES) % NDASHES];
}

const char *
svg_unit(double v, const char *unit, char *buf, size_t n)
{
	char si[32];
	size_t len;

	/* seconds from one on as people write them: "25.3 s", "4112 s" */
	if (strcmp(unit, "s") == 0 && v >= 1) {
		snprintf(buf, n, v >= 1000 ? "%.0f s" : "%.3g s", v);
		return buf;
	}
	svg_si(v, si, sizeof si);
	len = strlen(si);
	/* "11.5 m" + "s" -> "11.5 ms"; "3.2" + "s" -> "3.2 s" */
	snprintf(buf, n, "%s%s%s", si, len && si[len - 1] >= '0' && si[len - 1] <= '9' ? " " : "",
		 unit);
	return buf;
}

const char *
svg_si(double v, char *buf, size_t n)
{
	static const char *const prefix[] = {
		"p", "n", "\xc2\xb5", "m", "", "k", "M", "G", "T", "P"
	};
	int e;

	if (v == 0 || !isfinite(v)) {
		snprintf(buf, n, "0");
		return buf;
	}
	e = (int)floor(log10(fabs(v)) / 3 + 1e-9);
	if (e < -4)
		e = -4;
	if (e > 5)
		e = 5;
	snprintf(buf, n, "%.3g%s%s", v / pow(1000, e), e ? " " : "", prefix[e + 4]);
	return buf;
}

void
svg_begin(FILE *f, double w, double h, const char *id, const char *title)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n<title>",
		id, w, h, w, h);
	esc_xml(f, title);
	fputs("</title>\n<style>.chart-title{font-weight:bold;font-size:14px}"
	      ".tick{fill:#444;font-size:11px}.row.recommended .bar-label{font-weight:bold}"
	      "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", f);
}

void
svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void
svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *s)
{
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor,
		cls);
	esc_xml(f, s);
	fputs("</text>\n", f);
}

void
axis_decades(double lo, double hi, double *a, double *b)
{
	*a = pow(10, floor(log10(lo) + 1e-9));
	*b = pow(10, ceil(log10(hi) - 1e-9));
	if (*b <= *a)
		*b = *a * 10;
}

double
axis_nice(double hi)
{
	double e, m;

	if (!(hi > 0))
		return 1;
	e = pow(10, floor(log10(hi)));
	m = hi / e;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * e;
}

static double
frac(const Axis *a, double v)
{
	if (a->log)
		return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

double
plot_x(const Plot *p, double v)
{
	return p->x + p->w * frac(&p->ax, v);
}

double
plot_y(const Plot *p, double v)
{
	return p->y + p->h * (1 - frac(&p->ay, v));
}

/* The ticks of an axis into t[] (at most 64): decades, with 2 and 5
 * between them when there are at most two decades; linear: five steps of
 * a round size. */
static int
ticks(const Axis *a, double *t)
{
	int n = 0;

	if (a->log) {
		int decades = (int)lround(log10(a->hi / a->lo));
		for (double d = a->lo; d <= a->hi * 1.0001 && n < 60; d *= 10) {
			t[n++] = d;
			if (decades <= 2 && d * 2 < a->hi * 1.0001)
				t[n++] = d * 2, t[n++] = d * 5;
		}
		while (n && t[n - 1] > a->hi * 1.0001)
			n--;
		return n;
	}
	double step = axis_nice((a->hi - a->lo) / 5);
	for (double v = a->lo; v <= a->hi * 1.0001 && n < 60; v += step)
		t[n++] = v;
	return n;
}

void
plot_frame(const Plot *p)
{
	double t[64];
	char buf[32];
	int n;

	fprintf(p->f, "<g class=\"frame\">\n");
	n = ticks(&p->ax, t);
	for (int i = 0; i < n; i++) {
		double x = plot_x(p, t[i]);
		fprintf(p->f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			      "stroke=\"#ddd\"/>\n", x, p->y, x, p->y + p->h);
		svg_text(p->f, x, p->y + p->h + 16, "middle", "tick x",
			 svg_si(t[i], buf, sizeof buf));
	}
	n = ticks(&p->ay, t);
	for (int i = 0; i < n; i++) {
		double y = plot_y(p, t[i]);
		fprintf(p->f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			      "stroke=\"#ddd\"/>\n", p->x, y, p->x + p->w, y);
		svg_text(p->f, p->x - 6, y + 4, "end", "tick y", svg_si(t[i], buf, sizeof buf));
	}
	fprintf(p->f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
		      "stroke=\"#444\"/>\n", p->x, p->y, p->w, p->h);
	svg_text(p->f, p->x + p->w / 2, p->y + p->h + 36, "middle", "axis-label", p->ax.label);
	fprintf(p->f, "<g transform=\"translate(%.2f %.2f) rotate(-90)\">", p->x - 52,
		p->y + p->h / 2);
	svg_text(p->f, 0, 0, "middle", "axis-label", p->ay.label);
	fputs("</g>\n</g>\n", p->f);
}

void
plot_series(const Plot *p, const double *x, const double *y, int n, int c, const char *name,
	    const char *xunit, const char *yunit)
{
	char bx[32], by[32];

	fputs("<g class=\"series\" data-name=\"", p->f);
	esc_xml(p->f, name);
	fprintf(p->f, "\" stroke=\"%s\" fill=\"%s\">\n", svg_colour(c), svg_colour(c));
	if (n > 1) {
		fputs("<path fill=\"none\" stroke-width=\"2\"", p->f);
		if (*svg_dash(c))
			fprintf(p->f, " stroke-dasharray=\"%s\"", svg_dash(c));
		fputs(" d=\"", p->f);
		for (int i = 0; i < n; i++)
			fprintf(p->f, "%s%.2f %.2f", i ? " L" : "M", plot_x(p, x[i]),
				plot_y(p, y[i]));
		fputs("\"/>\n", p->f);
	}
	for (int i = 0; i < n; i++) {
		fprintf(p->f, "<circle class=\"point\" cx=\"%.2f\" cy=\"%.2f\" r=\"3\"><title>",
			plot_x(p, x[i]), plot_y(p, y[i]));
		esc_xml(p->f, name);
		/* a count: "1 GPU", "64 GPUs" */
		snprintf(bx, sizeof bx, "%.0f %s%s", x[i], xunit, x[i] == 1 ? "" : "s");
		fprintf(p->f, ": %s, %s</title></circle>\n", bx,
			svg_unit(y[i], yunit, by, sizeof by));
	}
	fputs("</g>\n", p->f);
}

void
plot_cross(const Plot *p, double x, double y, const char *why)
{
	double cx = plot_x(p, x), cy = plot_y(p, y);

	fprintf(p->f, "<g class=\"infeasible\" stroke=\"#D55E00\" stroke-width=\"2\"><title>");
	esc_xml(p->f, why);
	fprintf(p->f, "</title><path d=\"M%.2f %.2f L%.2f %.2f M%.2f %.2f L%.2f %.2f\"/></g>\n",
		cx - 4, cy - 4, cx + 4, cy + 4, cx - 4, cy + 4, cx + 4, cy - 4);
}

void
plot_ring(const Plot *p, double x, double y, const char *title)
{
	fputs("<g class=\"recommended\"><title>", p->f);
	esc_xml(p->f, title);
	fprintf(p->f, "</title><circle cx=\"%.2f\" cy=\"%.2f\" r=\"8\" fill=\"none\" "
		      "stroke=\"#000\" stroke-width=\"2.5\"/></g>\n", plot_x(p, x), plot_y(p, y));
}

void
plot_dashed(const Plot *p, double x0, double y0, double x1, double y1, const char *cls)
{
	fprintf(p->f, "<line class=\"%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
		      "stroke=\"#666\" stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>\n",
		cls, plot_x(p, x0), plot_y(p, y0), plot_x(p, x1), plot_y(p, y1));
}

void
plot_hbar(const Plot *p, int row, int rows, const char *label, const double *v,
	  const char *const *part, int n, const char *cls, const char *unit)
{
	double band = p->h / rows, y = p->y + band * row + band * 0.2, x = p->x, h = band * 0.6;
	char buf[32];

	fprintf(p->f, "<g class=\"row %s\">\n", cls ? cls : "");
	svg_text(p->f, p->x - 6, y + h / 2 + 4, "end", "bar-label", label);
	for (int i = 0; i < n; i++) {
		double w = plot_x(p, p->ax.lo + v[i]) - p->x;
		if (!(v[i] > 0))
			continue;
		fprintf(p->f, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			      "height=\"%.2f\" fill=\"%s\"><title>", x, y, w, h, svg_colour(i));
		esc_xml(p->f, part[i]);
		fprintf(p->f, ": %s</title></rect>\n", svg_unit(v[i], unit, buf, sizeof buf));
		x += w;
	}
	fputs("</g>\n", p->f);
}

/* A legend of swatches (lines: a short stroke in each entry's colour and
 * dash, as plot_series draws it; else a square). */
static void
legend(FILE *f, double x, double y, double w, const char *const *name, const int *colour, int n,
       bool lines)
{
	double cx = x;

	fputs("<g class=\"legend\">\n", f);
	for (int e = 0; e < n; e++) {
		int i = colour ? colour[e] : e;
		double len = (lines ? 34 : 22) + 7.0 * (double)strlen(name[e]) + 16;
		if (cx + len > x + w && cx > x)
			cx = x, y += 18;
		if (lines) {
			fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
				   "stroke=\"%s\" stroke-width=\"2\"", cx, y - 4, cx + 24, y - 4,
				svg_colour(i));
			if (*svg_dash(i))
				fprintf(f, " stroke-dasharray=\"%s\"", svg_dash(i));
			fputs("/>\n", f);
		} else
			fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"12\" "
				   "fill=\"%s\"/>\n", cx, y - 10, svg_colour(i));
		svg_text(f, cx + (lines ? 30 : 18), y, "start", "legend-entry", name[e]);
		cx += len;
	}
	fputs("</g>\n", f);
}

void
svg_legend(FILE *f, double x, double y, double w, const char *const *name, int n)
{
	legend(f, x, y, w, name, NULL, n, false);
}

void
svg_legend_lines(FILE *f, double x, double y, double w, const char *const *name,
		 const int *colour, int n)
{
	legend(f, x, y, w, name, colour, n, true);
}
