// SPDX-License-Identifier: GPL-2.0
/*
 * exprjit: a small expression language compiled to x86-64 machine code,
 * each function of which publishes its unwind rows through libsframe_jit,
 * so that perf --call-graph=sframe walks stacks through it.
 *
 * The compiled code keeps no frame pointer, as JIT code often does not:
 * a function pushes %rbp and the callee-saved registers it needs, takes
 * its spill slots with "sub $N,%rsp", and keeps its first argument in
 * %rbp.  Only its frame rows tell where its caller's frame is.  The C
 * side (main and the native functions) keeps frame pointers and carries
 * .sframe (-Wa,--gsframe), so that either unwinder gets through it and
 * any difference between them lies in the JIT code.
 *
 *	exprjit [-s SECONDS] [-t THREADS] [-e FUNCTION] [FILE]
 *	exprjit --check
 *	exprjit --print
 *
 * Without FILE the built-in demo program (demo_src below) is compiled.
 * main() then calls FUNCTION (default f, one argument) on 0, 1, 2, ...
 * for SECONDS seconds (default 3) and prints a checksum; with THREADS
 * above 1, as many threads do so at once, in the same compiled code and
 * registry, and each prints its own line.  --check
 * compares compiled code against hand-computed values and against an
 * interpreter of the same syntax tree, and walks a stack through JIT
 * frames with the published rows; its last line reads "N passed, N
 * failed".  --print shows the demo program.
 *
 * The language, definitions one after another:
 *
 *	def   := NAME "(" NAME {"," NAME} ")" "=" expr      1 to 4 parameters
 *	expr  := cmp | "if" expr "then" expr "else" expr
 *	cmp   := sum [("<" | "<=" | ">" | ">=" | "==" | "!=") sum]
 *	sum   := term {("+" | "-") term}
 *	term  := unary {("*" | "/" | "%") unary}
 *	unary := "-" unary | NUMBER | NAME | NAME "(" args ")" | "(" expr ")"
 *
 * Values are signed 64-bit integers whose arithmetic wraps; x / 0 and
 * x % 0 are 0; a comparison is 0 or 1; "if" takes the "then" branch on
 * any non-zero value.  "#" starts a comment.  Native functions written
 * in C: spin(x, n), a hash loop of n rounds that stands for the real
 * work a runtime does in C; probe(x), which walks its own stack through
 * the rows (for --check).  Errors in a program are reported as
 * "FILE:LINE: message" with exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <sframe_jit/sframe_jit.h>

#define MAX_PARAMS	4
#define MAX_NAME	32
#define MAX_FUNCS	64
#define MAX_NODES	4096
#define MAX_FIXUPS	1024
#define CODE_SIZE	(1 << 20)
#define FUNC_ALIGN	16
#define MAX_ROWS	24
#define MAX_PROBE	64
#define MAX_THREADS	64

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char demo_src[] =
	"# f is what main calls; spin is C code, the rest is compiled.\n"
	"f(x)       = g(x * 3 + 1) + h(x)\n"
	"g(x)       = walk(x, 3) % 65536\n"
	"h(x)       = burn(x, 24) % 7 + mix(x, 1)\n"
	"walk(x, d) = if d < 1 then mix(x, 2) else walk(x + d, d - 1) * 3 + 1\n"
	"burn(x, n) = if n < 1 then x else burn((x * 7 + n) % 1000003, n - 1)\n"
	"mix(x, k)  = spin(x, 3000 * k) + spin(x + 1, 500)\n";

enum node_kind { N_NUM, N_PARAM, N_NEG, N_BINOP, N_IF, N_CALL };

/* Tokens other than single characters, which stand for themselves. */
enum {
	T_EOF = 256, T_NUM, T_NAME, T_IF, T_THEN, T_ELSE,
	T_LE, T_GE, T_EQ, T_NE,
};

struct node {
	enum node_kind kind;
	int op;				/* N_BINOP: its token */
	int64_t num;			/* N_NUM: value; N_PARAM: index */
	int line;
	char name[MAX_NAME];		/* N_CALL: the callee, as written */
	int callee;			/* N_CALL: >= 0 a function, < 0 a native */
	int nr_kids;
	struct node *kid[MAX_PARAMS];	/* operands, branches or arguments */
};

struct func {
	char name[MAX_NAME];
	char param[MAX_PARAMS][MAX_NAME];
	int nr_params;
	struct node *body;
	/* Filled in by the compiler. */
	uint32_t start;
	uint32_t size;
	struct sframe_jit_x86_64_frame frame;
	struct sframe_jit_x86_64_epilogue exit;
};

struct program {
	struct func funcs[MAX_FUNCS];
	int nr_funcs;
	struct node nodes[MAX_NODES];
	int nr_nodes;
};

typedef int64_t (*native_fn)(int64_t, int64_t);
typedef int64_t (*jit_fn)(int64_t, int64_t, int64_t, int64_t);

struct native {
	const char *name;
	int nr_params;
	native_fn fn;
};

/* A compiled program: its code area and the registry that covers it. */
struct jit {
	struct program *prog;
	uint8_t *code;
	uint32_t len;
	bool overflow;
	struct sframe_jit *reg;
	bool kernel;
	struct { uint32_t at; int callee; } fixup[MAX_FIXUPS];
	int nr_fixups;
};

/* Perf map lines for the demo; --check leaves no files behind. */
static bool want_perf_map = true;

/* The bounds of our own code, from the default linker script. */
extern const char __executable_start[], etext[];

/* The native functions: the hot loop, and the stack walker of --check. */

/*
 * The result goes through a local in memory (the empty asm may read and
 * change it there): a leaf function that does not touch the stack gets no
 * frame from gcc even with -fno-omit-frame-pointer, and the frame pointer
 * walk should fail in the JIT code, not here.
 */
static __attribute__((noinline)) int64_t spin(int64_t x, int64_t n)
{
	uint64_t h = (uint64_t)x, out;
	int64_t i;

	for (i = 0; i < n; i++) {
		h ^= h >> 31;
		h *= 0x9e3779b97f4a7c15ull;
		h += (uint64_t)i;
	}
	out = h >> 48;
	__asm__ __volatile__("" : "+m" (out));
	return (int64_t)out;
}

/* What the last probe() saw: JIT function starts, innermost first. */
static struct {
	struct sframe_jit *reg;
	uint64_t start[MAX_PROBE];
	int nr;
	uint64_t end_pc;
} probe_seen;

/* The row that applies at @off into a function: the last one not past it. */
static const struct sframe_jit_row *row_at(const struct sframe_jit_row *rows,
					   uint32_t nr, uint32_t off)
{
	const struct sframe_jit_row *row = NULL;
	uint32_t i;

	for (i = 0; i < nr && rows[i].start_off <= off; i++)
		row = &rows[i];
	return row;
}

/*
 * Walk the JIT frames above us with the registry's rows, as the kernel's
 * unwinder does, and return how many there were (-1 if a frame could not
 * be unwound).  Built with frame pointers, our own CFA is %rbp + 16.
 */
static __attribute__((noinline)) int64_t probe(int64_t x, int64_t unused)
{
	uint64_t *fp = __builtin_frame_address(0);
	uint64_t cfa = (uint64_t)fp + 16, pc = fp[1];
	struct sframe_jit_row rows[MAX_ROWS];
	const struct sframe_jit_row *row;
	struct sframe_jit_func fn;

	(void)x;
	(void)unused;
	probe_seen.nr = 0;
	while (probe_seen.nr < MAX_PROBE &&
	       !sframe_jit_find(probe_seen.reg, pc - 1, &fn, rows, MAX_ROWS)) {
		/* pc is a return address: the call lies just before it. */
		row = row_at(rows, fn.nr_rows < MAX_ROWS ? fn.nr_rows : MAX_ROWS,
			     pc - 1 - fn.start);
		if (!row || row->cfa_base != SFRAME_JIT_ROW_CFA_SP)
			return -1;
		cfa += row->cfa_off;
		pc = *(uint64_t *)(cfa + row->ra_off);
		probe_seen.start[probe_seen.nr++] = fn.start;
	}
	probe_seen.end_pc = pc;
	return probe_seen.nr;
}

static const struct native natives[] = {
	{ "spin", 2, spin },
	{ "probe", 1, probe },
};

#define NR_NATIVES	((int)ARRAY_SIZE(natives))

/* The parser: recursive descent, one token of lookahead. */

struct parser {
	const char *file;
	const char *p;
	int line;
	int tok;
	int tok_line;
	int64_t num;
	char name[MAX_NAME];
	struct program *prog;
	struct func *fn;
	bool failed;
};

static void __attribute__((format(printf, 3, 4)))
parse_error(struct parser *ps, int line, const char *fmt, ...)
{
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	fprintf(stderr, "%s:%d: ", ps->file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void skip_space(struct parser *ps)
{
	for (;;) {
		if (*ps->p == '#') {
			while (*ps->p && *ps->p != '\n')
				ps->p++;
		} else if (*ps->p == '\n') {
			ps->line++;
			ps->p++;
		} else if (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r') {
			ps->p++;
		} else {
			return;
		}
	}
}

static void lex_number(struct parser *ps)
{
	uint64_t v = 0;

	while (*ps->p >= '0' && *ps->p <= '9') {
		v = v * 10 + (uint64_t)(*ps->p++ - '0');
		if (v > INT64_MAX) {
			parse_error(ps, ps->line, "number too large");
			v = 0;
		}
	}
	ps->num = (int64_t)v;
	ps->tok = T_NUM;
}

static bool is_name_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

static void lex_name(struct parser *ps)
{
	size_t n = 0;

	while (is_name_char(*ps->p, false)) {
		if (n == MAX_NAME - 1)
			parse_error(ps, ps->line, "name longer than %d characters",
				    MAX_NAME - 1);
		else
			ps->name[n++] = *ps->p;
		ps->p++;
	}
	ps->name[n] = '\0';
	if (!strcmp(ps->name, "if"))
		ps->tok = T_IF;
	else if (!strcmp(ps->name, "then"))
		ps->tok = T_THEN;
	else if (!strcmp(ps->name, "else"))
		ps->tok = T_ELSE;
	else
		ps->tok = T_NAME;
}

/* A one- or two-character operator; 0 for a character we do not know. */
static int lex_operator(struct parser *ps)
{
	static const struct { char s[3]; int tok; } two[] = {
		{ "<=", T_LE }, { ">=", T_GE }, { "==", T_EQ }, { "!=", T_NE },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(two); i++) {
		if (ps->p[0] == two[i].s[0] && ps->p[1] == two[i].s[1]) {
			ps->p += 2;
			return two[i].tok;
		}
	}
	if (*ps->p && strchr("()+-*/%<>=,", *ps->p))
		return *ps->p++;
	return 0;
}

static void next(struct parser *ps)
{
	skip_space(ps);
	ps->tok_line = ps->line;
	if (!*ps->p) {
		ps->tok = T_EOF;
	} else if (*ps->p >= '0' && *ps->p <= '9') {
		lex_number(ps);
	} else if (is_name_char(*ps->p, true)) {
		lex_name(ps);
	} else {
		ps->tok = lex_operator(ps);
		if (!ps->tok) {
			parse_error(ps, ps->line, "unexpected character '%c'",
				    *ps->p);
			ps->tok = T_EOF;
		}
	}
}

static bool expect(struct parser *ps, int tok, const char *what)
{
	if (ps->tok != tok) {
		parse_error(ps, ps->tok_line, "expected %s", what);
		return false;
	}
	next(ps);
	return true;
}

static struct node *new_node(struct parser *ps, enum node_kind kind)
{
	struct program *prog = ps->prog;
	struct node *n;

	if (prog->nr_nodes == MAX_NODES) {
		parse_error(ps, ps->tok_line, "program too large (%d nodes)",
			    MAX_NODES);
		return NULL;
	}
	n = &prog->nodes[prog->nr_nodes++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->line = ps->tok_line;
	return n;
}

static struct node *parse_expr(struct parser *ps);

static struct node *parse_call(struct parser *ps, const char *name)
{
	struct node *n = new_node(ps, N_CALL);

	if (!n)
		return NULL;
	snprintf(n->name, sizeof(n->name), "%s", name);
	next(ps);				/* "(" */
	do {
		if (n->nr_kids == MAX_PARAMS) {
			parse_error(ps, ps->tok_line,
				    "more than %d arguments", MAX_PARAMS);
			return NULL;
		}
		n->kid[n->nr_kids] = parse_expr(ps);
		if (!n->kid[n->nr_kids++])
			return NULL;
	} while (ps->tok == ',' && (next(ps), true));
	return expect(ps, ')', "')' after the arguments") ? n : NULL;
}

static struct node *parse_name(struct parser *ps)
{
	int i, line = ps->tok_line;
	char name[MAX_NAME];
	struct node *n;

	memcpy(name, ps->name, sizeof(name));
	next(ps);
	if (ps->tok == '(')
		return parse_call(ps, name);
	for (i = 0; i < ps->fn->nr_params; i++)
		if (!strcmp(ps->fn->param[i], name))
			break;
	if (i == ps->fn->nr_params) {
		parse_error(ps, line, "unknown name '%s' in %s", name,
			    ps->fn->name);
		return NULL;
	}
	n = new_node(ps, N_PARAM);
	if (n)
		n->num = i;
	return n;
}

static struct node *parse_unary(struct parser *ps)
{
	struct node *n;

	switch (ps->tok) {
	case '-':
		next(ps);
		n = new_node(ps, N_NEG);
		if (n) {
			n->nr_kids = 1;
			n->kid[0] = parse_unary(ps);
		}
		return n && n->kid[0] ? n : NULL;
	case T_NUM:
		n = new_node(ps, N_NUM);
		if (n)
			n->num = ps->num;
		next(ps);
		return n;
	case T_NAME:
		return parse_name(ps);
	case '(':
		next(ps);
		n = parse_expr(ps);
		return n && expect(ps, ')', "')'") ? n : NULL;
	default:
		parse_error(ps, ps->tok_line, ps->tok == T_EOF ?
			    "unexpected end of the program" : "expected a value");
		return NULL;
	}
}

static struct node *binop(struct parser *ps, int op, struct node *l,
			  struct node *r)
{
	struct node *n;

	if (!l || !r)
		return NULL;
	n = new_node(ps, N_BINOP);
	if (!n)
		return NULL;
	n->op = op;
	n->nr_kids = 2;
	n->kid[0] = l;
	n->kid[1] = r;
	return n;
}

static struct node *parse_term(struct parser *ps)
{
	struct node *n = parse_unary(ps);
	int op;

	while (n && (ps->tok == '*' || ps->tok == '/' || ps->tok == '%')) {
		op = ps->tok;
		next(ps);
		n = binop(ps, op, n, parse_unary(ps));
	}
	return n;
}

static struct node *parse_sum(struct parser *ps)
{
	struct node *n = parse_term(ps);
	int op;

	while (n && (ps->tok == '+' || ps->tok == '-')) {
		op = ps->tok;
		next(ps);
		n = binop(ps, op, n, parse_term(ps));
	}
	return n;
}

static bool is_comparison(int tok)
{
	return tok == '<' || tok == '>' || tok == T_LE || tok == T_GE ||
	       tok == T_EQ || tok == T_NE;
}

static struct node *parse_expr(struct parser *ps)
{
	struct node *n;
	int op;

	if (ps->tok == T_IF) {
		next(ps);
		n = new_node(ps, N_IF);
		if (!n)
			return NULL;
		n->nr_kids = 3;
		n->kid[0] = parse_expr(ps);
		if (!n->kid[0] || !expect(ps, T_THEN, "'then'"))
			return NULL;
		n->kid[1] = parse_expr(ps);
		if (!n->kid[1] || !expect(ps, T_ELSE, "'else'"))
			return NULL;
		n->kid[2] = parse_expr(ps);
		return n->kid[2] ? n : NULL;
	}
	n = parse_sum(ps);
	if (n && is_comparison(ps->tok)) {
		op = ps->tok;
		next(ps);
		n = binop(ps, op, n, parse_sum(ps));
	}
	return n;
}

static int find_func(const struct program *prog, const char *name)
{
	int i;

	for (i = 0; i < prog->nr_funcs; i++)
		if (!strcmp(prog->funcs[i].name, name))
			return i;
	return -1;
}

static int find_native(const char *name)
{
	int i;

	for (i = 0; i < NR_NATIVES; i++)
		if (!strcmp(natives[i].name, name))
			return i;
	return -1;
}

static bool parse_params(struct parser *ps, struct func *fn)
{
	int i;

	do {
		next(ps);
		if (ps->tok != T_NAME) {
			parse_error(ps, ps->tok_line, "expected a parameter name");
			return false;
		}
		if (fn->nr_params == MAX_PARAMS) {
			parse_error(ps, ps->tok_line, "%s: more than %d parameters",
				    fn->name, MAX_PARAMS);
			return false;
		}
		for (i = 0; i < fn->nr_params; i++)
			if (!strcmp(fn->param[i], ps->name))
				parse_error(ps, ps->tok_line,
					    "%s: parameter '%s' twice", fn->name,
					    ps->name);
		memcpy(fn->param[fn->nr_params++], ps->name, MAX_NAME);
		next(ps);
	} while (ps->tok == ',');
	return expect(ps, ')', "')' after the parameters") &&
	       expect(ps, '=', "'='");
}

static bool parse_def(struct parser *ps)
{
	struct program *prog = ps->prog;
	struct func *fn;

	if (ps->tok != T_NAME) {
		parse_error(ps, ps->tok_line, "expected a function definition");
		return false;
	}
	if (find_func(prog, ps->name) >= 0 || find_native(ps->name) >= 0) {
		parse_error(ps, ps->tok_line, "'%s' defined twice", ps->name);
		return false;
	}
	if (prog->nr_funcs == MAX_FUNCS) {
		parse_error(ps, ps->tok_line, "more than %d functions", MAX_FUNCS);
		return false;
	}
	fn = &prog->funcs[prog->nr_funcs++];
	memset(fn, 0, sizeof(*fn));
	memcpy(fn->name, ps->name, MAX_NAME);
	ps->fn = fn;
	next(ps);
	if (ps->tok != '(') {
		parse_error(ps, ps->tok_line, "expected '(' after '%s'", fn->name);
		return false;
	}
	if (!parse_params(ps, fn))
		return false;
	fn->body = parse_expr(ps);
	return fn->body;
}

/* Bind each call to its function or native, and check its arity. */
static bool resolve(struct parser *ps)
{
	struct program *prog = ps->prog;
	struct node *n;
	int i, want;

	for (i = 0; i < prog->nr_nodes; i++) {
		n = &prog->nodes[i];
		if (n->kind != N_CALL)
			continue;
		n->callee = find_func(prog, n->name);
		if (n->callee >= 0) {
			want = prog->funcs[n->callee].nr_params;
		} else if (find_native(n->name) >= 0) {
			n->callee = -1 - find_native(n->name);
			want = natives[-1 - n->callee].nr_params;
		} else {
			parse_error(ps, n->line, "no function '%s'", n->name);
			return false;
		}
		if (n->nr_kids != want) {
			parse_error(ps, n->line, "%s takes %d argument%s, not %d",
				    n->name, want, want == 1 ? "" : "s",
				    n->nr_kids);
			return false;
		}
	}
	return true;
}

/**
 * parse_program() - parse a whole program
 * @prog: filled in.
 * @file: name for messages.
 * @src: the source text.
 *
 * Return: true, or false after printing the first error.
 */
static bool parse_program(struct program *prog, const char *file,
			  const char *src)
{
	struct parser ps = {
		.file = file, .p = src, .line = 1, .prog = prog,
	};

	memset(prog, 0, sizeof(*prog));
	next(&ps);
	while (!ps.failed && ps.tok != T_EOF)
		parse_def(&ps);
	if (!ps.failed && !prog->nr_funcs)
		parse_error(&ps, ps.line, "no function defined");
	return !ps.failed && resolve(&ps);
}

/* The interpreter: the reference the compiled code is checked against. */

static int64_t eval(const struct program *prog, const struct node *n,
		    const int64_t *args);

static int64_t eval_call(const struct program *prog, const struct node *n,
			 const int64_t *args)
{
	int64_t a[MAX_PARAMS] = { 0 };
	int i;

	for (i = 0; i < n->nr_kids; i++)
		a[i] = eval(prog, n->kid[i], args);
	if (n->callee < 0)
		return natives[-1 - n->callee].fn(a[0], a[1]);
	return eval(prog, prog->funcs[n->callee].body, a);
}

static int64_t arith(int op, int64_t a, int64_t b)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;

	switch (op) {
	case '+':
		return (int64_t)(ua + ub);
	case '-':
		return (int64_t)(ua - ub);
	case '*':
		return (int64_t)(ua * ub);
	case '/':
		return !b ? 0 : b == -1 ? (int64_t)-ua : a / b;
	case '%':
		return !b || b == -1 ? 0 : a % b;
	case '<':
		return a < b;
	case '>':
		return a > b;
	case T_LE:
		return a <= b;
	case T_GE:
		return a >= b;
	case T_EQ:
		return a == b;
	default:
		return a != b;
	}
}

static int64_t eval(const struct program *prog, const struct node *n,
		    const int64_t *args)
{
	switch (n->kind) {
	case N_NUM:
		return n->num;
	case N_PARAM:
		return args[n->num];
	case N_NEG:
		return (int64_t)-(uint64_t)eval(prog, n->kid[0], args);
	case N_BINOP:
		return arith(n->op, eval(prog, n->kid[0], args),
			     eval(prog, n->kid[1], args));
	case N_IF:
		return eval(prog, n->kid[eval(prog, n->kid[0], args) ? 1 : 2],
			    args);
	default:
		return eval_call(prog, n, args);
	}
}

/*
 * The compiler.  An expression leaves its value in %rax.  A value that
 * must survive the evaluation of another (a left operand, an argument)
 * goes to a spill slot at 8 * depth(%rsp); the frame is fixed for the
 * whole body, so the only frame rows are those of prologue and epilogue.
 * Parameters live in callee-saved registers, the first one in %rbp.
 */

enum {
	RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	R8, R9, R10, R11, R12, R13, R14, R15,
};

static const int param_reg[MAX_PARAMS] = { RBP, RBX, R12, R13 };
static const int arg_reg[MAX_PARAMS] = { RDI, RSI, RDX, RCX };

static void emit(struct jit *j, const void *bytes, uint32_t n)
{
	if (j->len + n > CODE_SIZE) {
		j->overflow = true;
		return;
	}
	memcpy(j->code + j->len, bytes, n);
	j->len += n;
}

#define EMIT(j, ...) \
	emit(j, (const uint8_t[]){ __VA_ARGS__ }, \
	     sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void emit32(struct jit *j, uint32_t v)
{
	emit(j, &v, 4);
}

static void emit64(struct jit *j, uint64_t v)
{
	emit(j, &v, 8);
}

static void patch32(struct jit *j, uint32_t at, uint32_t v)
{
	if (!j->overflow)
		memcpy(j->code + at, &v, 4);
}

/* A short forward jump: its displacement is filled in by bind8(). */
static uint32_t jump8(struct jit *j, uint8_t opcode)
{
	EMIT(j, opcode, 0);
	return j->len - 1;
}

static void bind8(struct jit *j, uint32_t at)
{
	if (!j->overflow)
		j->code[at] = (uint8_t)(j->len - at - 1);
}

static uint8_t rex_w(int reg, int rm)
{
	return 0x48 | (reg >= R8 ? 4 : 0) | (rm >= R8 ? 1 : 0);
}

/* mov %src,%dst */
static void mov_rr(struct jit *j, int dst, int src)
{
	EMIT(j, rex_w(src, dst), 0x89, 0xc0 | (src & 7) << 3 | (dst & 7));
}

/* mov %reg,slot(%rsp) with store, or mov slot(%rsp),%reg */
static void slot_op(struct jit *j, bool store, int reg, int slot)
{
	EMIT(j, rex_w(reg, RSP), store ? 0x89 : 0x8b, 0x84 | (reg & 7) << 3,
	     0x24);
	emit32(j, 8 * slot);
}

static void push_reg(struct jit *j, int reg)
{
	if (reg >= R8)
		EMIT(j, 0x41);
	EMIT(j, 0x50 + (reg & 7));
}

static void pop_reg(struct jit *j, int reg)
{
	if (reg >= R8)
		EMIT(j, 0x41);
	EMIT(j, 0x58 + (reg & 7));
}

/*
 * The spill slots an expression needs: a binary operator keeps its left
 * operand in one while it computes the right, and a call keeps its
 * first arguments while it computes the next.
 */
static int slots(const struct node *n)
{
	bool call = n->kind == N_CALL, binop = n->kind == N_BINOP;
	int i, s, most = call ? n->nr_kids : 0;

	for (i = 0; i < n->nr_kids; i++) {
		s = (call || binop ? i : 0) + slots(n->kid[i]);
		if (s > most)
			most = s;
	}
	return most;
}

static void gen(struct jit *j, const struct node *n, int depth);

/* %rax / %rcx or %rax % %rcx, with the language's 0 and -1 divisors. */
static void gen_divide(struct jit *j, bool mod)
{
	uint32_t zero, minus_one, done1, done2;

	EMIT(j, 0x48, 0x85, 0xc9);			/* test %rcx,%rcx */
	zero = jump8(j, 0x74);				/* jz */
	EMIT(j, 0x48, 0x83, 0xf9, 0xff);		/* cmp $-1,%rcx */
	minus_one = jump8(j, 0x74);			/* je */
	EMIT(j, 0x48, 0x99, 0x48, 0xf7, 0xf9);		/* cqo; idiv %rcx */
	if (mod)
		mov_rr(j, RAX, RDX);
	done1 = jump8(j, 0xeb);
	bind8(j, minus_one);
	if (mod)
		EMIT(j, 0x31, 0xc0);			/* xor %eax,%eax */
	else
		EMIT(j, 0x48, 0xf7, 0xd8);		/* neg %rax */
	done2 = jump8(j, 0xeb);
	bind8(j, zero);
	EMIT(j, 0x31, 0xc0);
	bind8(j, done1);
	bind8(j, done2);
}

static uint8_t setcc(int op)
{
	switch (op) {
	case '<':
		return 0x9c;
	case '>':
		return 0x9f;
	case T_LE:
		return 0x9e;
	case T_GE:
		return 0x9d;
	case T_EQ:
		return 0x94;
	default:
		return 0x95;
	}
}

static void gen_binop(struct jit *j, const struct node *n, int depth)
{
	gen(j, n->kid[0], depth);
	slot_op(j, true, RAX, depth);
	gen(j, n->kid[1], depth + 1);
	mov_rr(j, RCX, RAX);
	slot_op(j, false, RAX, depth);
	switch (n->op) {
	case '+':
		EMIT(j, 0x48, 0x01, 0xc8);		/* add %rcx,%rax */
		break;
	case '-':
		EMIT(j, 0x48, 0x29, 0xc8);		/* sub %rcx,%rax */
		break;
	case '*':
		EMIT(j, 0x48, 0x0f, 0xaf, 0xc1);	/* imul %rcx,%rax */
		break;
	case '/':
	case '%':
		gen_divide(j, n->op == '%');
		break;
	default:
		EMIT(j, 0x48, 0x39, 0xc8,		/* cmp %rcx,%rax */
		     0x0f, setcc(n->op), 0xc0,		/* setcc %al */
		     0x0f, 0xb6, 0xc0);			/* movzbl %al,%eax */
	}
}

static void gen_if(struct jit *j, const struct node *n, int depth)
{
	uint32_t to_else, to_end;

	gen(j, n->kid[0], depth);
	EMIT(j, 0x48, 0x85, 0xc0, 0x0f, 0x84);		/* test; jz rel32 */
	to_else = j->len;
	emit32(j, 0);
	gen(j, n->kid[1], depth);
	EMIT(j, 0xe9);					/* jmp rel32 */
	to_end = j->len;
	emit32(j, 0);
	patch32(j, to_else, j->len - to_else - 4);
	gen(j, n->kid[2], depth);
	patch32(j, to_end, j->len - to_end - 4);
}

static void gen_call(struct jit *j, const struct node *n, int depth)
{
	int i;

	for (i = 0; i < n->nr_kids; i++) {
		gen(j, n->kid[i], depth + i);
		slot_op(j, true, RAX, depth + i);
	}
	for (i = 0; i < n->nr_kids; i++)
		slot_op(j, false, arg_reg[i], depth + i);
	if (n->callee < 0) {
		/* C code may lie more than 2 GiB away. */
		EMIT(j, 0x48, 0xb8);			/* movabs $fn,%rax */
		emit64(j, (uint64_t)(uintptr_t)natives[-1 - n->callee].fn);
		EMIT(j, 0xff, 0xd0);			/* call *%rax */
		return;
	}
	EMIT(j, 0xe8);					/* call rel32 */
	if (j->nr_fixups == MAX_FIXUPS) {
		j->overflow = true;
		return;
	}
	j->fixup[j->nr_fixups].at = j->len;
	j->fixup[j->nr_fixups++].callee = n->callee;
	emit32(j, 0);
}

static void gen(struct jit *j, const struct node *n, int depth)
{
	switch (n->kind) {
	case N_NUM:
		if (n->num >= INT32_MIN && n->num <= INT32_MAX) {
			EMIT(j, 0x48, 0xc7, 0xc0);	/* mov $imm32,%rax */
			emit32(j, (uint32_t)n->num);
		} else {
			EMIT(j, 0x48, 0xb8);		/* movabs $imm64,%rax */
			emit64(j, (uint64_t)n->num);
		}
		break;
	case N_PARAM:
		mov_rr(j, RAX, param_reg[n->num]);
		break;
	case N_NEG:
		gen(j, n->kid[0], depth);
		EMIT(j, 0x48, 0xf7, 0xd8);		/* neg %rax */
		break;
	case N_BINOP:
		gen_binop(j, n, depth);
		break;
	case N_IF:
		gen_if(j, n, depth);
		break;
	case N_CALL:
		gen_call(j, n, depth);
		break;
	}
}

/*
 * push %rbp; push the other parameter registers; sub $N,%rsp; move the
 * arguments in; the body; and the epilogue that undoes it, recording
 * where each frame-changing instruction ends for the frame rows.
 */
static void compile_func(struct jit *j, struct func *fn)
{
	struct sframe_jit_x86_64_frame *fr = &fn->frame;
	struct sframe_jit_x86_64_epilogue *ex = &fn->exit;
	uint32_t start = j->len, pushes, frame_bytes;
	int i;

	fn->start = start;
	memset(fr, 0, sizeof(*fr));
	memset(ex, 0, sizeof(*ex));
	push_reg(j, RBP);
	fr->push_rbp = j->len - start;
	fr->nr_saves = fn->nr_params - 1;
	for (i = 1; i < fn->nr_params; i++) {
		push_reg(j, param_reg[i]);
		fr->save[i - 1] = j->len - start;
	}
	/* Keep %rsp 16-byte aligned at calls, as the ABI wants. */
	pushes = 1 + fr->nr_saves;
	frame_bytes = 8 * (uint32_t)slots(fn->body);
	if ((8 + 8 * pushes + frame_bytes) % 16)
		frame_bytes += 8;
	fr->stack_size = frame_bytes;
	if (frame_bytes) {
		EMIT(j, 0x48, 0x81, 0xec);		/* sub $N,%rsp */
		emit32(j, frame_bytes);
		fr->sub_rsp = j->len - start;
	}
	for (i = 0; i < fn->nr_params; i++)
		mov_rr(j, param_reg[i], arg_reg[i]);

	gen(j, fn->body, 0);

	if (frame_bytes) {
		EMIT(j, 0x48, 0x81, 0xc4);		/* add $N,%rsp */
		emit32(j, frame_bytes);
		ex->add_rsp = j->len - start;
	}
	for (i = fn->nr_params - 1; i >= 1; i--) {
		pop_reg(j, param_reg[i]);
		ex->pop[fn->nr_params - 1 - i] = j->len - start;
	}
	pop_reg(j, RBP);
	ex->pop_rbp = j->len - start;
	EMIT(j, 0xc3);					/* ret */
	ex->ret = j->len - start;
	fn->size = j->len - start;
	fr->nr_epilogues = 1;
	fr->epilogue = ex;
	while (j->len % FUNC_ALIGN && !j->overflow)
		EMIT(j, 0xcc);				/* int3 padding */
}

/* Create the code area and the registry that covers it. */
static int jit_open(struct jit *j, struct program *prog)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.flags = want_perf_map ? SFRAME_JIT_F_PERF_MAP : 0);
	uint64_t lo, hi;
	int err;

	memset(j, 0, sizeof(*j));
	j->prog = prog;
	j->code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (j->code == MAP_FAILED)
		return -errno;
	lo = (uint64_t)(uintptr_t)j->code;
	hi = lo + CODE_SIZE;
	err = sframe_jit_create(lo, hi, &opts, &j->reg);
	if (err == -ENOSYS) {
		/* Same code path, but the kernel cannot see the rows. */
		opts.flags |= SFRAME_JIT_F_NO_KERNEL;
		err = sframe_jit_create(lo, hi, &opts, &j->reg);
	} else if (!err) {
		j->kernel = true;
	}
	if (err) {
		munmap(j->code, CODE_SIZE);
		return err;
	}
	return 0;
}

static void jit_close(struct jit *j)
{
	sframe_jit_destroy(j->reg);
	munmap(j->code, CODE_SIZE);
}

/*
 * Compile every function, link the calls between them, publish each
 * function's rows (and its perf map line), and only then make the code
 * executable.
 */
static int jit_compile(struct jit *j)
{
	struct program *prog = j->prog;
	char name[MAX_NAME + 8];
	struct func *fn;
	int i, err;

	for (i = 0; i < prog->nr_funcs; i++)
		compile_func(j, &prog->funcs[i]);
	if (j->overflow)
		return -E2BIG;
	for (i = 0; i < j->nr_fixups; i++)
		patch32(j, j->fixup[i].at,
			prog->funcs[j->fixup[i].callee].start -
			(j->fixup[i].at + 4));
	for (i = 0; i < prog->nr_funcs; i++) {
		fn = &prog->funcs[i];
		snprintf(name, sizeof(name), "jit:%s", fn->name);
		err = sframe_jit_add_x86_64(j->reg,
					    (uint64_t)(uintptr_t)j->code + fn->start,
					    fn->size, &fn->frame, name);
		if (err)
			return err;
	}
	if (mprotect(j->code, CODE_SIZE, PROT_READ | PROT_EXEC))
		return -errno;
	return 0;
}

static jit_fn jit_entry(const struct jit *j, int func)
{
	return (jit_fn)(uintptr_t)(j->code + j->prog->funcs[func].start);
}

static int64_t jit_call(const struct jit *j, int func, const int64_t *a)
{
	return jit_entry(j, func)(a[0], a[1], a[2], a[3]);
}

/* --check: compiled code against hand-computed values and the interpreter. */

static const char check_src[] =
	"sq(x) = x * x\n"
	"tri(n) = if n < 1 then 0 else n + tri(n - 1)\n"
	"fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2)\n"
	"pick(a, b, c, d) = if a then b - c * d else (b + c) % d\n"
	"quot(a, b) = a / b\n"
	"rem(a, b) = a % b\n"
	"cmps(a, b) = (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b) + 32 * (a != b)\n"
	"neg(x) = -x - -(-3)\n"
	"big(x) = x + 5000000000 * 2\n"
	"nest(a, b, c) = pick(a, sq(b), tri(c), 5) + quot(b, c) * rem(c, 3)\n";

struct expected {
	const char *func;
	int64_t arg[MAX_PARAMS];
	int64_t want;
};

static const struct expected check_values[] = {
	{ "sq", { -7 }, 49 },
	{ "tri", { 100 }, 5050 },
	{ "tri", { -5 }, 0 },
	{ "fib", { 20 }, 6765 },
	{ "pick", { 1, 10, 3, 2 }, 4 },
	{ "pick", { 0, 10, 3, 4 }, 1 },
	{ "quot", { -7, 2 }, -3 },
	{ "rem", { -7, 2 }, -1 },
	{ "quot", { 7, 0 }, 0 },
	{ "rem", { 7, 0 }, 0 },
	{ "quot", { INT64_MIN, -1 }, INT64_MIN },
	{ "rem", { INT64_MIN, -1 }, 0 },
	{ "cmps", { 3, 5 }, 35 },
	{ "cmps", { 5, 5 }, 26 },
	{ "cmps", { 6, 5 }, 44 },
	{ "neg", { 4 }, -7 },
	{ "big", { 1 }, 10000000001 },
	{ "nest", { 1, 4, 3 }, 16 - 6 * 5 + 1 * 0 },
	{ "nest", { 0, 9, 4 }, (81 + 10) % 5 + 2 * 1 },
};

/* The stack walked from probe() must be exactly these frames. */
static const char probe_src[] =
	"top(x) = chain(x, 3) + 0\n"
	"chain(x, n) = if n < 1 then probe(x) else chain(x, n - 1) * 1\n";

struct results {
	int passed;
	int failed;
};

static void __attribute__((format(printf, 3, 4)))
report(struct results *r, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		r->passed++;
		return;
	}
	r->failed++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static bool build(struct program *prog, struct jit *j, const char *file,
		  const char *src)
{
	int err;

	if (!parse_program(prog, file, src))
		return false;
	err = jit_open(j, prog);
	if (err) {
		fprintf(stderr, "%s: %s\n", file, strerror(-err));
		return false;
	}
	err = jit_compile(j);
	if (err) {
		fprintf(stderr, "%s: %s\n", file, strerror(-err));
		jit_close(j);
		return false;
	}
	return true;
}

static void check_values_hand(struct results *r, struct program *prog,
			      struct jit *j)
{
	const struct expected *e;
	size_t i;
	int64_t got;
	int f;

	for (i = 0; i < ARRAY_SIZE(check_values); i++) {
		e = &check_values[i];
		f = find_func(prog, e->func);
		got = f < 0 ? 0 : jit_call(j, f, e->arg);
		report(r, f >= 0 && got == e->want,
		       "%s(%" PRId64 ", ...) = %" PRId64 ", want %" PRId64,
		       e->func, e->arg[0], got, e->want);
	}
}

/* Every function of @prog on a grid of arguments, compiled vs interpreted. */
static void check_against_interpreter(struct results *r, struct program *prog,
				      struct jit *j, int64_t lo, int64_t hi)
{
	int64_t a[MAX_PARAMS], want, got;
	int f, k, bad;

	for (f = 0; f < prog->nr_funcs; f++) {
		bad = 0;
		for (k = 0; k <= hi - lo && bad == 0; k++) {
			a[0] = lo + k;
			a[1] = hi - k;
			a[2] = (lo + 3 * k) % 11;
			a[3] = k % 5 + 1;
			want = eval(prog, prog->funcs[f].body, a);
			got = jit_call(j, f, a);
			bad = got != want;
		}
		report(r, !bad, "%s(%" PRId64 ", %" PRId64 ", ...) = %" PRId64
		       " compiled, %" PRId64 " interpreted",
		       prog->funcs[f].name, a[0], a[1], got, want);
	}
}

static void check_probe(struct results *r)
{
	static struct program prog;
	uint64_t top, chain, pc;
	struct jit j;
	int64_t a[MAX_PARAMS] = { 0 }, n;
	bool ok;
	int i;

	if (!build(&prog, &j, "probe", probe_src)) {
		report(r, false, "the probe program does not build");
		return;
	}
	probe_seen.reg = j.reg;
	n = jit_call(&j, find_func(&prog, "top"), a);
	top = (uint64_t)(uintptr_t)jit_entry(&j, find_func(&prog, "top"));
	chain = (uint64_t)(uintptr_t)jit_entry(&j, find_func(&prog, "chain"));
	/* chain(x, 0) called probe; chain 3, 2, 1 and top are above it. */
	ok = n == 5 && probe_seen.nr == 5 && probe_seen.start[4] == top;
	for (i = 0; ok && i < 4; i++)
		ok = probe_seen.start[i] == chain;
	report(r, ok, "probe() walked %" PRId64 " JIT frames, want chain x4, top",
	       n);
	pc = probe_seen.end_pc;
	report(r, pc >= (uint64_t)(uintptr_t)__executable_start &&
	       pc < (uint64_t)(uintptr_t)etext,
	       "the walk left the JIT code at %#" PRIx64 ", not in our text",
	       pc);
	jit_close(&j);
}

static int run_check(void)
{
	static struct program prog, demo;
	struct results r = { 0 };
	struct jit j;

	if (build(&prog, &j, "check", check_src)) {
		check_values_hand(&r, &prog, &j);
		check_against_interpreter(&r, &prog, &j, -20, 20);
		jit_close(&j);
	} else {
		report(&r, false, "the check program does not build");
	}
	if (build(&demo, &j, "demo", demo_src)) {
		check_against_interpreter(&r, &demo, &j, 0, 12);
		jit_close(&j);
	} else {
		report(&r, false, "the demo program does not build");
	}
	check_probe(&r);
	printf("%d passed, %d failed\n", r.passed, r.failed);
	return r.failed ? 1 : 0;
}

/* The demo: call the entry function in a loop for a few seconds. */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *read_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = 2 * cap + 4096 + 1;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n);
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* One thread of the demo and what it did. */
struct demo_thread {
	const struct jit *j;
	int func;
	double seconds;
	pthread_t thread;
	int64_t calls, sum;
	double elapsed;
};

static void *demo_run(void *arg)
{
	struct demo_thread *d = arg;
	int64_t a[MAX_PARAMS] = { 0 }, i;
	double t0, t;

	t0 = now();
	for (i = 0; (t = now()) - t0 < d->seconds; i++) {
		a[0] = i;
		d->sum += jit_call(d->j, d->func, a);
	}
	d->calls = i;
	d->elapsed = t - t0;
	return NULL;
}

static int run_demo(const char *file, const char *src, const char *entry,
		    double seconds, int threads)
{
	static struct demo_thread demo[MAX_THREADS];
	static struct program prog;
	struct jit j;
	int f, i, err;

	if (!build(&prog, &j, file, src))
		return 2;
	f = find_func(&prog, entry);
	if (f < 0 || prog.funcs[f].nr_params != 1) {
		fprintf(stderr, "%s: no function %s(x) to run\n", file, entry);
		jit_close(&j);
		return 2;
	}
	printf("exprjit: %d functions, %u bytes of x86-64 at %p, rows %s\n",
	       prog.nr_funcs, j.len, (void *)j.code,
	       j.kernel ? "in a kernel registry" :
	       "in a private table (no sframe_jit_open(2) here)");
	for (i = 0; i < threads; i++)
		demo[i] = (struct demo_thread){
			.j = &j, .func = f, .seconds = seconds,
		};
	/* The main thread is the first: one thread runs as it always did. */
	for (i = 1; i < threads; i++) {
		err = pthread_create(&demo[i].thread, NULL, demo_run, &demo[i]);
		if (err) {
			fprintf(stderr, "exprjit: pthread_create: %s\n",
				strerror(err));
			exit(1);
		}
	}
	demo_run(&demo[0]);
	for (i = 1; i < threads; i++)
		pthread_join(demo[i].thread, NULL);
	for (i = 0; i < threads; i++) {
		if (threads > 1)
			printf("exprjit: thread %d: ", i);
		else
			printf("exprjit: ");
		printf("%s(0..%" PRId64 ") in %.1f s, checksum %" PRId64 "\n",
		       entry, demo[i].calls - 1, demo[i].elapsed, demo[i].sum);
	}
	jit_close(&j);
	return 0;
}

static void usage_exit(void)
{
	fprintf(stderr,
		"usage: exprjit [-s SECONDS] [-t THREADS] [-e FUNCTION] [FILE]\n"
		"       exprjit --check\n"
		"       exprjit --print\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "print", no_argument, NULL, 'p' },
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "entry", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	const char *entry = "f", *file = "demo", *src = demo_src;
	double seconds = 3;
	char *end, *text;
	int c, rc, threads = 1;

	while ((c = getopt_long(argc, argv, "s:t:e:", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			want_perf_map = false;
			return run_check();
		case 'p':
			fputs(demo_src, stdout);
			return 0;
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds >= 0))
				usage_exit();
			break;
		case 't':
			threads = strtol(optarg, &end, 10);
			if (*end || threads < 1 || threads > MAX_THREADS)
				usage_exit();
			break;
		case 'e':
			entry = optarg;
			break;
		default:
			usage_exit();
		}
	}
	if (argc - optind > 1)
		usage_exit();
	if (argc - optind == 1) {
		file = argv[optind];
		text = read_file(file);
		if (!text) {
			fprintf(stderr, "%s: %s\n", file, strerror(errno));
			return 2;
		}
		rc = run_demo(file, text, entry, seconds, threads);
		free(text);
		return rc;
	}
	return run_demo(file, src, entry, seconds, threads);
}
