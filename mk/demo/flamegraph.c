// SPDX-License-Identifier: GPL-2.0
/*
 * flamegraph: draw folded stacks as an SVG flame graph.
 *
 *	flamegraph [-t TITLE] [-w WIDTH] [FILE] > graph.svg
 *
 * Input (FILE or standard input): one line per distinct stack, its frames
 * from the outermost to the innermost separated by ";", a space, and the
 * number of samples with that stack:
 *
 *	main;jit:f;spin 42
 *
 * (mk/demo/fold.awk makes them from "perf script".)  The graph stacks
 * the frames upwards from a root frame "all", merges frames that share
 * their path from the root, orders siblings by name, and gives each the
 * width of its share of all samples: a frame of N samples out of T is
 * N / T of the WIDTH (default 1200) less the 10-pixel margins.  Frames
 * narrower than 0.1 pixel are left out.  Hovering a frame shows its
 * name, samples and share.  Colours: JIT frames ("jit:" names) blue,
 * kernel frames (ending in "_[k]") orange, "[unknown]" grey, others warm.
 *
 * Exit status 2, with "flamegraph: LINE: message" on standard error, for
 * a line that does not end in a positive count, an empty frame name or a
 * count that overflows the total, and with "flamegraph: no samples" for
 * an input without any; 1 when out of memory or output fails.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MARGIN		10.0
#define FRAME_H		16
#define TITLE_H		44
#define FOOT_H		24
#define CHAR_W		7.2	/* 12px monospace */
#define MIN_W		0.1

struct frame {
	char *name;
	uint64_t samples;
	struct frame *child;	/* first child, children sorted by name */
	struct frame *sibling;
};

struct graph {
	struct frame root;
	double width;
	int depth;		/* of the deepest frame drawn */
	uint64_t total;
};

static void __attribute__((noreturn)) oom(void)
{
	fprintf(stderr, "flamegraph: out of memory\n");
	exit(1);
}

static void __attribute__((noreturn)) bad_input(long line, const char *what)
{
	fprintf(stderr, "flamegraph: %ld: %s\n", line, what);
	exit(2);
}

/* The child of @parent named @name[0..len), added in name order if new. */
static struct frame *child(struct frame *parent, const char *name, size_t len)
{
	struct frame **link = &parent->child, *f;
	int cmp = 1;

	for (; *link; link = &(*link)->sibling) {
		cmp = strncmp((*link)->name, name, len);
		if (!cmp && (*link)->name[len])
			cmp = 1;
		if (cmp >= 0)
			break;
	}
	if (*link && !cmp)
		return *link;
	f = calloc(1, sizeof(*f));
	if (!f)
		oom();
	f->name = strndup(name, len);
	if (!f->name)
		oom();
	f->sibling = *link;
	*link = f;
	return f;
}

/* Split "a;b;c 12" into the stack and its count, and add it. */
static void add_line(struct graph *g, char *line, long nr)
{
	char *space = strrchr(line, ' '), *end, *p, *semi;
	struct frame *f = &g->root;
	unsigned long long n;
	size_t len;

	if (!space || space == line)
		bad_input(nr, "expected 'frame;frame;... count'");
	errno = 0;
	n = strtoull(space + 1, &end, 10);
	if (*end || end == space + 1 || space[1] == '-' || !n)
		bad_input(nr, "the count is not a positive integer");
	if (errno || n > UINT64_MAX - g->total)
		bad_input(nr, "the counts overflow");
	*space = '\0';
	g->total += n;
	g->root.samples += n;
	for (p = line; ; p = semi + 1) {
		semi = strchr(p, ';');
		len = semi ? (size_t)(semi - p) : strlen(p);
		if (!len)
			bad_input(nr, "an empty frame name");
		f = child(f, p, len);
		f->samples += n;
		if (!semi)
			break;
	}
}

static void read_folded(struct graph *g, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long nr = 0;

	while ((len = getline(&line, &cap, in)) >= 0) {
		nr++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len)
			add_line(g, line, nr);
	}
	free(line);
	if (!g->total) {
		fprintf(stderr, "flamegraph: no samples\n");
		exit(2);
	}
}

static double frame_width(const struct graph *g, uint64_t samples)
{
	return (double)samples / (double)g->total * (g->width - 2 * MARGIN);
}

static int deepest(const struct graph *g, const struct frame *f, int depth)
{
	int most = depth, d;

	for (f = f->child; f; f = f->sibling) {
		if (frame_width(g, f->samples) < MIN_W)
			continue;
		d = deepest(g, f, depth + 1);
		if (d > most)
			most = d;
	}
	return most;
}

/* At most @max characters of @s, as XML text. */
static void put_escaped(FILE *out, const char *s, size_t max)
{
	static const char *const entity[256] = {
		['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;",
		['"'] = "&quot;",
	};

	for (; *s && max; s++, max--) {
		if (entity[(uint8_t)*s])
			fputs(entity[(uint8_t)*s], out);
		else
			fputc(*s, out);
	}
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A stable colour per name, from the family of its kind of code. */
static void colour(const char *name, int rgb[3])
{
	uint32_t h = 2166136261u;
	const char *p;
	int a, b;

	for (p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	a = h % 64;
	b = (h >> 8) % 64;
	if (!strncmp(name, "jit:", 4)) {
		rgb[0] = 40 + a / 2; rgb[1] = 140 + b; rgb[2] = 215 + a / 3;
	} else if (ends_with(name, "_[k]")) {
		rgb[0] = 230; rgb[1] = 120 + b; rgb[2] = 40 + a / 2;
	} else if (!strcmp(name, "[unknown]") || !strcmp(name, "all")) {
		rgb[0] = 180 + a / 2;
		rgb[1] = rgb[0];
		rgb[2] = rgb[0];
	} else {
		rgb[0] = 205 + a * 50 / 64; rgb[1] = 60 + b * 2; rgb[2] = 40;
	}
}

/* One frame as a group: hover title, rectangle, and the name if it fits. */
static void draw_frame(FILE *out, const struct graph *g, const struct frame *f,
		       double x, int depth, int height)
{
	double w = frame_width(g, f->samples);
	int y = height - FOOT_H - (depth + 1) * FRAME_H, rgb[3];
	size_t fit = (size_t)((w - 6) / CHAR_W), len = strlen(f->name);

	colour(f->name, rgb);
	fputs("<g><title>", out);
	put_escaped(out, f->name, SIZE_MAX);
	fprintf(out, " (%llu samples, %.2f%%)</title>",
		(unsigned long long)f->samples, 100.0 * f->samples / g->total);
	fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>", x, y, w, FRAME_H - 1,
		rgb[0], rgb[1], rgb[2]);
	if (fit >= 3) {
		fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3,
			y + FRAME_H - 4);
		if (len <= fit) {
			put_escaped(out, f->name, len);
		} else {
			put_escaped(out, f->name, fit - 2);
			fputs("..", out);
		}
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

static void draw(FILE *out, const struct graph *g, const struct frame *f,
		 double x, int depth, int height)
{
	if (frame_width(g, f->samples) < MIN_W)
		return;
	draw_frame(out, g, f, x, depth, height);
	for (f = f->child; f; f = f->sibling) {
		draw(out, g, f, x, depth + 1, height);
		x += frame_width(g, f->samples);
	}
}

static void write_svg(FILE *out, const struct graph *g, const char *title)
{
	int height = TITLE_H + (g->depth + 1) * FRAME_H + FOOT_H;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%d\" "
		"viewBox=\"0 0 %.0f %d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 12px; } "
		"rect:hover { stroke: black; stroke-width: 0.7; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
		"fill=\"rgb(248,248,240)\"/>\n"
		"<text x=\"%.0f\" y=\"26\" text-anchor=\"middle\" "
		"style=\"font-size: 17px\">", g->width, height, g->width, height,
		g->width / 2);
	put_escaped(out, title, SIZE_MAX);
	fprintf(out, "</text>\n<text x=\"%.0f\" y=\"%d\">%llu samples; "
		"a frame's width is its share of them; hover for numbers"
		"</text>\n", MARGIN, height - 6, (unsigned long long)g->total);
	draw(out, g, &g->root, MARGIN, 0, height);
	fputs("</svg>\n", out);
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: flamegraph [-t TITLE] [-w WIDTH] [FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct graph g = { .root.name = "all", .width = 1200 };
	const char *title = "Flame graph";
	FILE *in = stdin;
	char *end;
	int c;

	while ((c = getopt(argc, argv, "t:w:")) != -1) {
		switch (c) {
		case 't':
			title = optarg;
			break;
		case 'w':
			g.width = strtod(optarg, &end);
			if (*end || !(g.width >= 100 && g.width <= 100000))
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind > 1)
		usage();
	if (argc - optind == 1) {
		in = fopen(argv[optind], "r");
		if (!in) {
			fprintf(stderr, "flamegraph: %s: %s\n", argv[optind],
				strerror(errno));
			return 2;
		}
	}
	read_folded(&g, in);
	g.depth = deepest(&g, &g.root, 0);
	write_svg(stdout, &g, title);
	return fflush(stdout) ? 1 : 0;
}
