// SPDX-License-Identifier: GPL-2.0
/*
 * perf samples through code that a JIT no one here wrote generated:
 * libgccjit (GCC 12) compiles five functions with -O2
 * -fomit-frame-pointer, and GNU as describes their frames in .sframe
 * (-Wa,--gsframe).  The test copies the object file's .text into an
 * anonymous executable mapping, resolves its relocations itself (the
 * dynamic loader never sees the code, so the kernel learns of it only
 * through a JIT registry), and imports the object's .sframe into a
 * registry for that mapping with libsframe_jit's sframe_jit_import_elf().
 *
 * The chain, two JIT frames on each side of a C callback:
 *
 *   run (C) -> gj_entry -> gj_walk -> gj_eval -> gj_callback (C, this
 *   file) -> gj_inner -> gj_leaf, which spins on a volatile counter.
 *
 * Each generated function stores __builtin_return_address(0) at entry,
 * and the C functions do the same: those stores, never the tables or an
 * unwinder, give the expected callchain.  The return addresses of the
 * calls from JIT code to JIT code are also checked against the call
 * sites the object's relocations name.
 *
 * The native tests run anywhere: the code runs and computes what a model
 * of it computes; the import finds every generated function at its
 * symbol; single-stepping the chain, each instruction's imported row
 * finds the return address that its function stored.  The sampling
 * tests need the patched kernel: with the registry, every sample whose
 * IP is in gj_leaf must carry exactly the chain above; without it, or
 * with the functions removed, none may.
 */
#include <assert.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <libgccjit.h>

#include "sample_harness.h"
#include "sframe_jit.h"

#ifndef noinline
#define noinline __attribute__((__noinline__))
#endif

/* The generated functions, callers first. */
enum gj_id {
	GJ_ENTRY,	/* gj_entry(x) = gj_walk(2x) + x + 100 */
	GJ_WALK,	/* gj_walk(x) = gj_eval(x, x + 7) ^ x */
	GJ_EVAL,	/* gj_eval(x, y): calls gj_callback(x + y) */
	GJ_INNER,	/* gj_inner(x): called by gj_callback, calls gj_leaf */
	GJ_LEAF,	/* gj_leaf(x): spins *gj_spin times */
	NR_GJ,
};

static const char * const gj_name[NR_GJ] = {
	"gj_entry", "gj_walk", "gj_eval", "gj_inner", "gj_leaf",
};

/*
 * The expected user callchain of a sample in gj_leaf: its IP, then the
 * return addresses into gj_inner, gj_callback, gj_eval, gj_walk,
 * gj_entry, run and run's caller.  Frames beyond run the harness and
 * libc, which carry no tables, and are not compared.
 */
#define NR_FRAMES	8
static_assert(NR_FRAMES <= CHAIN_MAX, "a chain_tally holds the chain");

static const char * const frame_name[NR_FRAMES] = {
	"IP in gj_leaf", "gj_leaf -> gj_inner", "gj_inner -> gj_callback",
	"gj_callback -> gj_eval", "gj_eval -> gj_walk", "gj_walk -> gj_entry",
	"gj_entry -> run", "run -> its caller",
};

#define CODE_AREA_SIZE		(64 * 1024)	/* the JIT code area */
#define MAX_GJ_ROWS		32U		/* rows of one function */
#define SAMPLE_PERIOD_NS	100000		/* 10000 samples a second */
#define MIN_LEAF_SAMPLES	500UL
#define SESSION_SECONDS		20
#define RING_PAGES		64
#define CHAIN_ARG		1000UL

/*
 * What the generated code reads and writes, at addresses baked into it
 * as constants: no relocation refers to them.
 */
static void *gj_ret[NR_GJ];		/* return addresses, stored at entry */
static unsigned long gj_spin = 1;	/* gj_leaf's loop count */
static void *callback_ret;		/* gj_callback's return address */
static void *run_ret;			/* run's */
/* What gj_callback calls: gj_inner once the code is loaded. */
static unsigned long (*gj_inner_fn)(unsigned long x);

/* A function of the loaded object. */
struct gj_sym {
	unsigned long addr;
	unsigned long size;
};

/* The object libgccjit wrote, loaded into a code area. */
struct gj_code {
	char dir[64];			/* the temporary directory */
	char path[96];			/* the object file in it */
	unsigned char *image;		/* its bytes */
	size_t image_size;
	unsigned char *area;		/* the JIT code area */
	size_t text_size;
	struct gj_sym fn[NR_GJ];
	/* Return address of the one call to each function from JIT code. */
	unsigned long call_ret[NR_GJ];
	unsigned int nr_relocs;
	struct sframe_jit *reg;
};

/*
 * gj_callback(x): C between JIT frames, built with -fomit-frame-pointer
 * and -Wa,--gsframe like the rest of this file: the executable's
 * .sframe, which binfmt_elf registered at exec, is the only description
 * of its frame.  Values live across the call keep callee-saved
 * registers on its stack, and an array whose address escapes keeps a
 * stack adjustment below them.
 */
static noinline unsigned long gj_callback(unsigned long x)
{
	unsigned long a = x * 5, b = x ^ 0x55, c = x + 9;
	unsigned long keep[3] = { a, b, c };
	unsigned long r;

	callback_ret = __builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = gj_inner_fn(b);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 2 * b + 3 * c + keep[0] + keep[2];
}

/* The same computation in C, on the same inputs. */
static unsigned long model_leaf(unsigned long x)
{
	unsigned long v = x | 1, i;

	for (i = 0; i < gj_spin; i++) {
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
	}
	return v + i;
}

static unsigned long model_inner(unsigned long x)
{
	unsigned long a = 3 * x + 1, b = x ^ 0x5a5a, c = x + 11;

	return model_leaf(a) + a + 2 * b + 3 * c;
}

static unsigned long model_callback(unsigned long x)
{
	unsigned long a = x * 5, b = x ^ 0x55, c = x + 9;

	return model_inner(b) + a + 2 * b + 3 * c + a + c;
}

static unsigned long model_eval(unsigned long x, unsigned long y)
{
	unsigned long a = x * y, b = x - y, c = x | y;

	return model_callback(x + y) + a + 3 * b + 5 * c;
}

static unsigned long model_entry(unsigned long x)
{
	unsigned long w = 2 * x;

	return (model_eval(w, w + 7) ^ w) + x + 100;
}

/* Code generation with libgccjit. */

struct gj_gen {
	gcc_jit_context *ctx;
	gcc_jit_type *ulong;
	gcc_jit_type *vptr;
	struct gcc_jit_function *fn[NR_GJ];
	struct gcc_jit_param *x[NR_GJ], *y;
	struct gcc_jit_block *body[NR_GJ];
};

static gcc_jit_rvalue *gj_u(struct gj_gen *g, unsigned long v)
{
	return gcc_jit_context_new_rvalue_from_long(g->ctx, g->ulong, v);
}

static gcc_jit_rvalue *gj_op(struct gj_gen *g, enum gcc_jit_binary_op op,
			     gcc_jit_rvalue *a, gcc_jit_rvalue *b)
{
	return gcc_jit_context_new_binary_op(g->ctx, NULL, op, g->ulong, a, b);
}

/* *(type *)addr, an lvalue at an address baked into the code. */
static gcc_jit_lvalue *gj_at(struct gj_gen *g, gcc_jit_type *type, void *addr)
{
	gcc_jit_type *ptr = gcc_jit_type_get_pointer(type);

	return gcc_jit_rvalue_dereference(gcc_jit_context_new_rvalue_from_ptr(g->ctx,
									   ptr, addr),
					  NULL);
}

/* The function's first statement: gj_ret[id] = __builtin_return_address(0). */
static void gj_store_ret(struct gj_gen *g, enum gj_id id)
{
	gcc_jit_function *ra = gcc_jit_context_get_builtin_function(g->ctx,
								     "__builtin_return_address");
	gcc_jit_type *uint = gcc_jit_context_get_type(g->ctx,
						      GCC_JIT_TYPE_UNSIGNED_INT);
	gcc_jit_rvalue *level = gcc_jit_context_new_rvalue_from_int(g->ctx,
								    uint, 0);

	gcc_jit_block_add_assignment(g->body[id], NULL,
				     gj_at(g, g->vptr, &gj_ret[id]),
				     gcc_jit_context_new_call(g->ctx, NULL, ra,
							      1, &level));
}

/* Declare every function, exported, so that calls go through relocations. */
static void gj_declare(struct gj_gen *g)
{
	unsigned int i;

	for (i = 0; i < NR_GJ; i++) {
		struct gcc_jit_param *p[2];
		int n = 1;

		g->x[i] = gcc_jit_context_new_param(g->ctx, NULL, g->ulong, "x");
		p[0] = g->x[i];
		if (i == GJ_EVAL) {
			g->y = gcc_jit_context_new_param(g->ctx, NULL, g->ulong,
							 "y");
			p[n++] = g->y;
		}
		g->fn[i] = gcc_jit_context_new_function(g->ctx, NULL,
							GCC_JIT_FUNCTION_EXPORTED,
							g->ulong, gj_name[i],
							n, p, 0);
		g->body[i] = gcc_jit_function_new_block(g->fn[i], "entry");
		gj_store_ret(g, i);
	}
}

/* v ^= v << 13, v ^= v >> 7, v ^= v << 17: xorshift64 */
static gcc_jit_rvalue *gj_xorshift(struct gj_gen *g, gcc_jit_block *b,
				   gcc_jit_lvalue *v)
{
	static const struct {
		enum gcc_jit_binary_op op;
		unsigned long n;
	} step[] = {
		{ GCC_JIT_BINARY_OP_LSHIFT, 13 },
		{ GCC_JIT_BINARY_OP_RSHIFT, 7 },
		{ GCC_JIT_BINARY_OP_LSHIFT, 17 },
	};
	unsigned int k;

	for (k = 0; k < 3; k++) {
		gcc_jit_rvalue *t = gj_op(g, step[k].op,
					  gcc_jit_lvalue_as_rvalue(v),
					  gj_u(g, step[k].n));

		gcc_jit_block_add_assignment_op(b, NULL, v,
						GCC_JIT_BINARY_OP_BITWISE_XOR, t);
	}
	return gcc_jit_lvalue_as_rvalue(v);
}

/*
 * gj_leaf(x): v = x | 1; for (i = 0; i < *gj_spin; i++) v = xorshift(v);
 * return v + i.  A recurrence the compiler cannot put in closed form:
 * the loop stays, and it is where samples land.  (A counter made
 * volatile with gcc_jit_type_get_volatile(), as a local or through a
 * pointer, was folded away by libgccjit 12 at -O2.)
 */
static void gj_gen_leaf(struct gj_gen *g)
{
	gcc_jit_function *f = g->fn[GJ_LEAF];
	gcc_jit_lvalue *i = gcc_jit_function_new_local(f, NULL, g->ulong, "i");
	gcc_jit_lvalue *v = gcc_jit_function_new_local(f, NULL, g->ulong, "v");
	gcc_jit_block *loop = gcc_jit_function_new_block(f, "loop");
	gcc_jit_block *step = gcc_jit_function_new_block(f, "step");
	gcc_jit_block *done = gcc_jit_function_new_block(f, "done");
	gcc_jit_rvalue *spin = gcc_jit_lvalue_as_rvalue(gj_at(g, g->ulong,
							      &gj_spin));
	gcc_jit_rvalue *iv = gcc_jit_lvalue_as_rvalue(i);
	gcc_jit_rvalue *x = gcc_jit_param_as_rvalue(g->x[GJ_LEAF]);
	gcc_jit_block *b = g->body[GJ_LEAF];

	gcc_jit_rvalue *more = gcc_jit_context_new_comparison(g->ctx, NULL,
							      GCC_JIT_COMPARISON_LT,
							      iv, spin);
	gcc_jit_rvalue *odd = gj_op(g, GCC_JIT_BINARY_OP_BITWISE_OR, x,
				    gj_u(g, 1));

	gcc_jit_block_add_assignment(b, NULL, i, gj_u(g, 0));
	gcc_jit_block_add_assignment(b, NULL, v, odd);
	gcc_jit_block_end_with_jump(b, NULL, loop);
	gcc_jit_block_end_with_conditional(loop, NULL, more, step, done);
	gj_xorshift(g, step, v);
	gcc_jit_block_add_assignment_op(step, NULL, i, GCC_JIT_BINARY_OP_PLUS,
					gj_u(g, 1));
	gcc_jit_block_end_with_jump(step, NULL, loop);
	gcc_jit_block_end_with_return(done, NULL,
				      gj_op(g, GCC_JIT_BINARY_OP_PLUS,
					    gcc_jit_lvalue_as_rvalue(v), iv));
}

/*
 * r = callee(arg), then r + a + k2 * b + k3 * c: three values computed
 * before the call and used after it, which the compiler keeps in
 * callee-saved registers, %rbp among them, saved on the stack.
 */
static void gj_gen_call_keep(struct gj_gen *g, enum gj_id id,
			     gcc_jit_rvalue *call, gcc_jit_rvalue *a,
			     gcc_jit_rvalue *b, unsigned long k2,
			     gcc_jit_rvalue *c, unsigned long k3)
{
	gcc_jit_function *f = g->fn[id];
	gcc_jit_lvalue *la = gcc_jit_function_new_local(f, NULL, g->ulong, "a");
	gcc_jit_lvalue *lb = gcc_jit_function_new_local(f, NULL, g->ulong, "b");
	gcc_jit_lvalue *lc = gcc_jit_function_new_local(f, NULL, g->ulong, "c");
	gcc_jit_lvalue *r = gcc_jit_function_new_local(f, NULL, g->ulong, "r");
	gcc_jit_rvalue *sum;

	gcc_jit_block_add_assignment(g->body[id], NULL, la, a);
	gcc_jit_block_add_assignment(g->body[id], NULL, lb, b);
	gcc_jit_block_add_assignment(g->body[id], NULL, lc, c);
	gcc_jit_block_add_assignment(g->body[id], NULL, r, call);
	sum = gj_op(g, GCC_JIT_BINARY_OP_PLUS, gcc_jit_lvalue_as_rvalue(r),
		    gcc_jit_lvalue_as_rvalue(la));
	sum = gj_op(g, GCC_JIT_BINARY_OP_PLUS, sum,
		    gj_op(g, GCC_JIT_BINARY_OP_MULT, gj_u(g, k2),
			  gcc_jit_lvalue_as_rvalue(lb)));
	sum = gj_op(g, GCC_JIT_BINARY_OP_PLUS, sum,
		    gj_op(g, GCC_JIT_BINARY_OP_MULT, gj_u(g, k3),
			  gcc_jit_lvalue_as_rvalue(lc)));
	gcc_jit_block_end_with_return(g->body[id], NULL, sum);
}

static gcc_jit_rvalue *gj_call(struct gj_gen *g, enum gj_id callee,
			       gcc_jit_rvalue *arg)
{
	return gcc_jit_context_new_call(g->ctx, NULL, g->fn[callee], 1, &arg);
}

/* gj_inner(x) = gj_leaf(3x + 1) + (3x + 1) + 2 (x ^ 0x5a5a) + 3 (x + 11) */
static void gj_gen_inner(struct gj_gen *g)
{
	gcc_jit_rvalue *x = gcc_jit_param_as_rvalue(g->x[GJ_INNER]);
	gcc_jit_rvalue *a = gj_op(g, GCC_JIT_BINARY_OP_PLUS,
				  gj_op(g, GCC_JIT_BINARY_OP_MULT, gj_u(g, 3), x),
				  gj_u(g, 1));

	gj_gen_call_keep(g, GJ_INNER, gj_call(g, GJ_LEAF, a), a,
			 gj_op(g, GCC_JIT_BINARY_OP_BITWISE_XOR, x,
			       gj_u(g, 0x5a5a)), 2,
			 gj_op(g, GCC_JIT_BINARY_OP_PLUS, x, gj_u(g, 11)), 3);
}

/*
 * gj_eval(x, y) = gj_callback(x + y) + xy + 3 (x - y) + 5 (x | y); the
 * callback's address is a constant in the code, called through a
 * register.
 */
static void gj_gen_eval(struct gj_gen *g)
{
	gcc_jit_rvalue *x = gcc_jit_param_as_rvalue(g->x[GJ_EVAL]);
	gcc_jit_rvalue *y = gcc_jit_param_as_rvalue(g->y);
	gcc_jit_type *fptr = gcc_jit_context_new_function_ptr_type(g->ctx, NULL,
								   g->ulong, 1,
								   &g->ulong, 0);
	gcc_jit_rvalue *cb = gcc_jit_context_new_rvalue_from_ptr(g->ctx, fptr,
								 (void *)gj_callback);
	gcc_jit_rvalue *arg = gj_op(g, GCC_JIT_BINARY_OP_PLUS, x, y);

	gj_gen_call_keep(g, GJ_EVAL,
			 gcc_jit_context_new_call_through_ptr(g->ctx, NULL, cb,
							      1, &arg),
			 gj_op(g, GCC_JIT_BINARY_OP_MULT, x, y),
			 gj_op(g, GCC_JIT_BINARY_OP_MINUS, x, y), 3,
			 gj_op(g, GCC_JIT_BINARY_OP_BITWISE_OR, x, y), 5);
}

/* gj_walk(x) = gj_eval(x, x + 7) ^ x */
static void gj_gen_walk(struct gj_gen *g)
{
	gcc_jit_rvalue *x = gcc_jit_param_as_rvalue(g->x[GJ_WALK]);
	gcc_jit_rvalue *args[2] = {
		x, gj_op(g, GCC_JIT_BINARY_OP_PLUS, x, gj_u(g, 7)),
	};
	gcc_jit_rvalue *r = gcc_jit_context_new_call(g->ctx, NULL,
						     g->fn[GJ_EVAL], 2, args);

	r = gj_op(g, GCC_JIT_BINARY_OP_BITWISE_XOR, r, x);
	gcc_jit_block_end_with_return(g->body[GJ_WALK], NULL, r);
}

/* gj_entry(x) = gj_walk(2x) + x + 100 */
static void gj_gen_entry(struct gj_gen *g)
{
	gcc_jit_rvalue *x = gcc_jit_param_as_rvalue(g->x[GJ_ENTRY]);
	gcc_jit_rvalue *r = gj_call(g, GJ_WALK,
				    gj_op(g, GCC_JIT_BINARY_OP_MULT,
					  gj_u(g, 2), x));

	r = gj_op(g, GCC_JIT_BINARY_OP_PLUS, r,
		  gj_op(g, GCC_JIT_BINARY_OP_PLUS, x, gj_u(g, 100)));
	gcc_jit_block_end_with_return(g->body[GJ_ENTRY], NULL, r);
}

/*
 * The options a JIT that wants its frames described would pass: no
 * frame pointer, .sframe from the assembler.  No inlining, so that each
 * function keeps its frame; no tail calls, so that each stays on the
 * stack; no hot/cold split, so that each function is one range of .text.
 */
static void gj_options(gcc_jit_context *ctx)
{
	gcc_jit_context_set_int_option(ctx,
				       GCC_JIT_INT_OPTION_OPTIMIZATION_LEVEL, 2);
	gcc_jit_context_add_command_line_option(ctx, "-fomit-frame-pointer");
	gcc_jit_context_add_command_line_option(ctx, "-fno-inline");
	gcc_jit_context_add_command_line_option(ctx,
						"-fno-optimize-sibling-calls");
	gcc_jit_context_add_command_line_option(ctx,
						"-fno-reorder-blocks-and-partition");
	gcc_jit_context_add_driver_option(ctx, "-Wa,--gsframe");
}

/* Generate the functions and compile them to @path; NULL or libgccjit's error. */
static const char *gj_compile(const char *path, char *err, size_t err_size)
{
	struct gj_gen g = { 0 };
	const char *e;

	g.ctx = gcc_jit_context_acquire();
	if (!g.ctx)
		return "gcc_jit_context_acquire failed";
	gj_options(g.ctx);
	g.ulong = gcc_jit_context_get_type(g.ctx, GCC_JIT_TYPE_UNSIGNED_LONG);
	g.vptr = gcc_jit_context_get_type(g.ctx, GCC_JIT_TYPE_VOID_PTR);
	gj_declare(&g);
	gj_gen_leaf(&g);
	gj_gen_inner(&g);
	gj_gen_eval(&g);
	gj_gen_walk(&g);
	gj_gen_entry(&g);
	gcc_jit_context_compile_to_file(g.ctx, GCC_JIT_OUTPUT_KIND_OBJECT_FILE,
					path);
	e = gcc_jit_context_get_first_error(g.ctx);
	if (e)
		snprintf(err, err_size, "%s", e);
	gcc_jit_context_release(g.ctx);
	return e ? err : NULL;
}

/* Loading the object: its .text into the code area, relocated. */

struct elf_obj {
	const unsigned char *image;
	size_t size;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	unsigned int text;		/* section index of .text */
	const Elf64_Shdr *symtab;
	const char *strtab;
	size_t strtab_size;
};

static bool obj_in(const struct elf_obj *o, Elf64_Off off, Elf64_Xword len)
{
	return off <= o->size && len <= o->size - off;
}

static const char *obj_sec_name(const struct elf_obj *o, unsigned int i)
{
	const Elf64_Shdr *str = &o->sh[o->eh->e_shstrndx];

	if (o->sh[i].sh_name >= str->sh_size)
		return "";
	return (const char *)o->image + str->sh_offset + o->sh[i].sh_name;
}

/* Check the headers and find .text and the symbol table; 0 or -ENOEXEC. */
static int obj_parse(struct elf_obj *o, const unsigned char *image,
		     size_t size)
{
	unsigned int i;

	memset(o, 0, sizeof(*o));
	o->image = image;
	o->size = size;
	o->eh = (const Elf64_Ehdr *)image;
	if (size < sizeof(*o->eh) || memcmp(image, ELFMAG, SELFMAG) ||
	    o->eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    o->eh->e_type != ET_REL || o->eh->e_machine != EM_X86_64 ||
	    o->eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !obj_in(o, o->eh->e_shoff,
		    (Elf64_Xword)o->eh->e_shnum * sizeof(Elf64_Shdr)) ||
	    o->eh->e_shstrndx >= o->eh->e_shnum)
		return -ENOEXEC;
	o->sh = (const Elf64_Shdr *)(image + o->eh->e_shoff);
	for (i = 0; i < o->eh->e_shnum; i++) {
		const Elf64_Shdr *s = &o->sh[i];

		if (s->sh_type != SHT_NOBITS && !obj_in(o, s->sh_offset, s->sh_size))
			return -ENOEXEC;
		if (s->sh_type == SHT_SYMTAB && s->sh_link < o->eh->e_shnum) {
			o->symtab = s;
			o->strtab = (const char *)image +
				    o->sh[s->sh_link].sh_offset;
			o->strtab_size = o->sh[s->sh_link].sh_size;
		}
		if (!strcmp(obj_sec_name(o, i), ".text"))
			o->text = i;
	}
	return o->text && o->symtab ? 0 : -ENOEXEC;
}

static const Elf64_Sym *obj_sym(const struct elf_obj *o, Elf64_Xword i)
{
	if (i >= o->symtab->sh_size / sizeof(Elf64_Sym))
		return NULL;
	return (const Elf64_Sym *)(o->image + o->symtab->sh_offset) + i;
}

static const char *obj_sym_name(const struct elf_obj *o, const Elf64_Sym *s)
{
	return s->st_name < o->strtab_size ? o->strtab + s->st_name : "";
}

/* Which generated function a symbol is, or NR_GJ. */
static unsigned int gj_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_GJ; i++)
		if (!strcmp(name, gj_name[i]))
			break;
	return i;
}

/* Each generated function's address and size, from the symbol table. */
static int obj_find_functions(const struct elf_obj *o, struct gj_code *c)
{
	Elf64_Xword i, n = o->symtab->sh_size / sizeof(Elf64_Sym);
	unsigned int found = 0;

	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = obj_sym(o, i);
		unsigned int id;

		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC ||
		    s->st_shndx != o->text)
			continue;
		id = gj_by_name(obj_sym_name(o, s));
		if (id == NR_GJ || c->fn[id].addr ||
		    s->st_value + s->st_size > c->text_size)
			return -ENOEXEC;
		c->fn[id].addr = (unsigned long)c->area + s->st_value;
		c->fn[id].size = s->st_size;
		found++;
	}
	return found == NR_GJ ? 0 : -ENOENT;
}

/*
 * One relocation of .text.  The object refers only to its own functions
 * (everything else is a constant in the code), so only PC-relative
 * references into .text are expected; anything else is an error.
 */
static int obj_relocate_one(const struct elf_obj *o, struct gj_code *c,
			    const Elf64_Rela *r)
{
	const Elf64_Sym *s = obj_sym(o, ELF64_R_SYM(r->r_info));
	unsigned long place = (unsigned long)c->area + r->r_offset;
	unsigned int type = ELF64_R_TYPE(r->r_info);
	long value;
	__s32 field;

	if (!s || s->st_shndx != o->text || r->r_offset + 4 > c->text_size)
		return -ENOEXEC;
	if (type != R_X86_64_PC32 && type != R_X86_64_PLT32)
		return -EOPNOTSUPP;
	value = (long)((unsigned long)c->area + s->st_value + r->r_addend - place);
	field = value;
	if (field != value)
		return -ERANGE;
	memcpy(c->area + r->r_offset, &field, sizeof(field));
	/* A call rel32 ends with its displacement: it returns past it. */
	if (ELF64_ST_TYPE(s->st_info) == STT_FUNC) {
		unsigned int id = gj_by_name(obj_sym_name(o, s));

		if (id < NR_GJ)
			c->call_ret[id] = place + 4;
	}
	c->nr_relocs++;
	return 0;
}

static int obj_relocate(const struct elf_obj *o, struct gj_code *c)
{
	unsigned int i;
	Elf64_Xword k;
	int err;

	for (i = 0; i < o->eh->e_shnum; i++) {
		const Elf64_Shdr *s = &o->sh[i];
		const Elf64_Rela *r;

		if (s->sh_info != o->text)
			continue;
		if (s->sh_type == SHT_REL)
			return -EOPNOTSUPP;
		if (s->sh_type != SHT_RELA)
			continue;
		r = (const Elf64_Rela *)(o->image + s->sh_offset);
		for (k = 0; k < s->sh_size / sizeof(*r); k++) {
			err = obj_relocate_one(o, c, &r[k]);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Copy .text into a fresh code area, relocate it, make it executable. */
static int gj_load(struct gj_code *c)
{
	const Elf64_Shdr *text;
	struct elf_obj o;
	int err;

	err = obj_parse(&o, c->image, c->image_size);
	if (err)
		return err;
	text = &o.sh[o.text];
	if (text->sh_size > CODE_AREA_SIZE)
		return -EFBIG;
	c->area = mmap(NULL, CODE_AREA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->area == MAP_FAILED) {
		c->area = NULL;
		return -ENOMEM;
	}
	/* Fill with int3: a jump out of the copied bytes traps at once. */
	memset(c->area, 0xcc, CODE_AREA_SIZE);
	memcpy(c->area, c->image + text->sh_offset, text->sh_size);
	c->text_size = text->sh_size;
	err = obj_find_functions(&o, c);
	if (!err)
		err = obj_relocate(&o, c);
	if (!err && mprotect(c->area, CODE_AREA_SIZE, PROT_READ | PROT_EXEC))
		err = -errno;
	return err;
}

static int file_read(const char *path, unsigned char **buf, size_t *size)
{
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
	} else {
		*buf = malloc(st.st_size ?: 1);
		*size = st.st_size;
		n = *buf ? read(fd, *buf, st.st_size) : -1;
		if (n != st.st_size)
			err = -EIO;
	}
	close(fd);
	return err;
}

static void gj_setup(struct __test_metadata *_metadata, struct gj_code *c)
{
	char err[512];
	const char *e;
	int ret;

	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "/tmp/gccjit_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(c->dir));
	snprintf(c->path, sizeof(c->path), "%s/gj.o", c->dir);
	e = gj_compile(c->path, err, sizeof(err));
	ASSERT_EQ(NULL, e) TH_LOG("libgccjit: %s", e);
	ASSERT_EQ(0, file_read(c->path, &c->image, &c->image_size));
	ret = gj_load(c);
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", c->path, strerror(-ret));
	gj_inner_fn = (unsigned long (*)(unsigned long))c->fn[GJ_INNER].addr;
	if (getenv("SFRAME_GCCJIT_KEEP"))
		TH_LOG("the object: %s", c->path);
}

/* SFRAME_GCCJIT_KEEP=1 keeps the object, for objdump -d and readelf --sframe. */
static void gj_teardown(struct gj_code *c)
{
	sframe_jit_destroy(c->reg);
	if (c->area)
		munmap(c->area, CODE_AREA_SIZE);
	free(c->image);
	if (getenv("SFRAME_GCCJIT_KEEP"))
		return;
	if (c->path[0])
		unlink(c->path);
	if (c->dir[0])
		rmdir(c->dir);
}

/* A registry for the code area, with the object's .sframe imported. */
static int gj_register(struct gj_code *c, unsigned int flags)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = flags);
	SFRAME_JIT_OPTS(sframe_jit_import_opts, iopts,
			.text_addr = (unsigned long)c->area);
	unsigned long area = (unsigned long)c->area;
	int ret;

	ret = sframe_jit_create(area, area + CODE_AREA_SIZE, &opts, &c->reg);
	if (ret)
		return ret;
	return sframe_jit_import_elf(c->reg, c->image, c->image_size, &iopts);
}

/* Run the chain once; stores run_ret and, through it, every other. */
static noinline unsigned long run(const struct gj_code *c, unsigned long x)
{
	unsigned long (*entry)(unsigned long) =
		(unsigned long (*)(unsigned long))c->fn[GJ_ENTRY].addr;
	unsigned long r;

	run_ret = __builtin_return_address(0);
	r = entry(x);
	/* A use after the call: no tail call, this frame stays. */
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* Through a pointer the compiler cannot follow: no inlining, no clone. */
static unsigned long run_chain(const struct gj_code *c, unsigned long x)
{
	unsigned long (*fn)(const struct gj_code *c, unsigned long x) = run;

	__asm__ volatile("" : "+r"(fn));
	return fn(c, x);
}

/* The expected chain but for entry 0, the sampled IP. */
static void expected_chain(__u64 *want)
{
	want[0] = 0;
	want[1] = (unsigned long)gj_ret[GJ_LEAF];
	want[2] = (unsigned long)gj_ret[GJ_INNER];
	want[3] = (unsigned long)callback_ret;
	want[4] = (unsigned long)gj_ret[GJ_EVAL];
	want[5] = (unsigned long)gj_ret[GJ_WALK];
	want[6] = (unsigned long)gj_ret[GJ_ENTRY];
	want[7] = (unsigned long)run_ret;
}

static bool in_fn(const struct gj_sym *f, unsigned long pc)
{
	return pc >= f->addr && pc < f->addr + f->size;
}

/*
 * Where the stored return addresses must point: into the function that
 * made each call, at the call sites the relocations named for the calls
 * from JIT code to JIT code.
 */
static void check_stored(struct __test_metadata *_metadata,
			 const struct gj_code *c)
{
	unsigned long cb = (unsigned long)gj_callback;
	unsigned long r = (unsigned long)run;

	ASSERT_EQ(c->call_ret[GJ_WALK], (unsigned long)gj_ret[GJ_WALK]);
	ASSERT_EQ(c->call_ret[GJ_EVAL], (unsigned long)gj_ret[GJ_EVAL]);
	ASSERT_EQ(c->call_ret[GJ_LEAF], (unsigned long)gj_ret[GJ_LEAF]);
	ASSERT_TRUE(in_fn(&c->fn[GJ_ENTRY], c->call_ret[GJ_WALK]));
	ASSERT_TRUE(in_fn(&c->fn[GJ_WALK], c->call_ret[GJ_EVAL]));
	ASSERT_TRUE(in_fn(&c->fn[GJ_INNER], c->call_ret[GJ_LEAF]));
	ASSERT_TRUE(in_fn(&c->fn[GJ_EVAL], (unsigned long)callback_ret));
	ASSERT_TRUE((unsigned long)gj_ret[GJ_INNER] > cb &&
		    (unsigned long)gj_ret[GJ_INNER] < cb + 4096);
	ASSERT_TRUE((unsigned long)gj_ret[GJ_ENTRY] > r &&
		    (unsigned long)gj_ret[GJ_ENTRY] < r + 4096);
}

static void gj_log_layout(struct __test_metadata *_metadata,
			  const struct gj_code *c)
{
	unsigned int i;

	TH_LOG("%zu bytes of .text at %p, %u relocations resolved",
	       c->text_size, c->area, c->nr_relocs);
	for (i = 0; i < NR_GJ; i++)
		TH_LOG("%-8s at +%-4lu size %lu", gj_name[i],
		       c->fn[i].addr - (unsigned long)c->area, c->fn[i].size);
}

/* Tests that need neither the system call nor perf. */

FIXTURE(native) {
	struct gj_code code;
};

FIXTURE_SETUP(native)
{
	gj_setup(_metadata, &self->code);
}

FIXTURE_TEARDOWN(native)
{
	gj_teardown(&self->code);
}

TEST_F(native, generated_code_runs_and_stores_return_addresses_at_its_call_sites)
{
	unsigned long x;

	gj_log_layout(_metadata, &self->code);
	for (x = 0; x < 5; x++) {
		gj_spin = 1 + 1000 * x;
		memset(gj_ret, 0, sizeof(gj_ret));
		ASSERT_EQ(model_entry(CHAIN_ARG + x),
			  run_chain(&self->code, CHAIN_ARG + x));
		check_stored(_metadata, &self->code);
	}
}

TEST_F(native, import_adds_every_generated_function_at_its_symbol)
{
	struct sframe_jit_row rows[MAX_GJ_ROWS];
	struct sframe_jit_func f;
	unsigned int i;

	ASSERT_EQ(NR_GJ, gj_register(&self->code, SFRAME_JIT_F_NO_KERNEL));
	for (i = 0; i < NR_GJ; i++) {
		const struct gj_sym *s = &self->code.fn[i];

		ASSERT_EQ(0, sframe_jit_find(self->code.reg, s->addr, &f, rows,
					     MAX_GJ_ROWS)) TH_LOG("%s", gj_name[i]);
		EXPECT_EQ(s->addr, f.start) TH_LOG("%s", gj_name[i]);
		EXPECT_EQ(s->size, f.size) TH_LOG("%s", gj_name[i]);
		EXPECT_EQ(0U, f.stub_size);
		ASSERT_LE(1U, f.nr_rows);
		ASSERT_GE(MAX_GJ_ROWS, f.nr_rows);
		TH_LOG("%-8s %u rows", gj_name[i], f.nr_rows);
	}
	/* The callers keep values across their calls: they push. */
	for (i = GJ_ENTRY; i < GJ_LEAF; i++) {
		ASSERT_EQ(0, sframe_jit_find(self->code.reg,
					     self->code.fn[i].addr, &f, NULL, 0));
		EXPECT_LE(2U, f.nr_rows) TH_LOG("%s", gj_name[i]);
	}
}

/*
 * Single-step the chain and, at every instruction of the generated code,
 * evaluate the row that the import gave it against the real registers:
 * the CFA must hold, at ra_off, the return address that its function
 * stored at entry, and the caller's frame pointer must be where the row
 * says.  The rows are copied out of the registry first: the handler
 * calls nothing.
 */
static struct {
	struct gj_sym fn[NR_GJ];
	struct sframe_jit_row rows[NR_GJ][MAX_GJ_ROWS];
	unsigned int nr_rows[NR_GJ];
	unsigned long entry_fp[NR_GJ];
	unsigned long steps[NR_GJ];
	char error[200];
} trace;

static void trace_fail(unsigned long pc, const char *what)
{
	if (!trace.error[0])
		snprintf(trace.error, sizeof(trace.error), "at %#lx: %s", pc,
			 what);
}

static const struct sframe_jit_row *trace_row(unsigned int id, __u32 off)
{
	unsigned int i = trace.nr_rows[id];

	while (i > 1 && trace.rows[id][i - 1].start_off > off)
		i--;
	return &trace.rows[id][i - 1];
}

static int trace_fn(unsigned long pc)
{
	unsigned int i;

	for (i = 0; i < NR_GJ; i++)
		if (in_fn(&trace.fn[i], pc))
			return i;
	return -1;
}

static void trace_step(const struct step_regs *regs)
{
	const struct sframe_jit_row *row;
	struct row_rule rule;
	const char *wrong;
	int id = trace_fn(regs->pc);

	if (id < 0)
		return;
	trace.steps[id]++;
	if (regs->pc == trace.fn[id].addr)
		trace.entry_fp[id] = regs->fp;
	row = trace_row(id, regs->pc - trace.fn[id].addr);
	rule = (struct row_rule){
		.cfa_fp = row->cfa_base == SFRAME_JIT_ROW_CFA_FP,
		.fp_saved = row->flags & SFRAME_JIT_ROW_FP_SAVED,
		.cfa_off = row->cfa_off,
		.ra_off = row->ra_off,
		.fp_off = row->fp_off,
	};
	wrong = row_check(&rule, regs, trace.entry_fp[id],
			  (unsigned long)gj_ret[id]);
	if (wrong)
		trace_fail(regs->pc, wrong);
}

/* What single_step() runs. */
static long run_chain_arg(void *arg)
{
	return run_chain(arg, CHAIN_ARG);
}

TEST_F(native, each_generated_instruction_has_an_imported_row_that_finds_its_ra)
{
	struct sframe_jit_func f;
	unsigned long expect;
	unsigned int i;
	long r;

	ASSERT_EQ(NR_GJ, gj_register(&self->code, SFRAME_JIT_F_NO_KERNEL));
	memset(&trace, 0, sizeof(trace));
	for (i = 0; i < NR_GJ; i++) {
		trace.fn[i] = self->code.fn[i];
		ASSERT_EQ(0, sframe_jit_find(self->code.reg, trace.fn[i].addr,
					     &f, trace.rows[i], MAX_GJ_ROWS));
		ASSERT_GE(MAX_GJ_ROWS, f.nr_rows);
		trace.nr_rows[i] = f.nr_rows;
	}
	gj_spin = 3;
	expect = model_entry(CHAIN_ARG);
	/* A first run stores the return addresses the rows must find. */
	ASSERT_EQ(expect, run_chain(&self->code, CHAIN_ARG));
	ASSERT_EQ(0, single_step(trace_step, run_chain_arg, &self->code, &r));
	ASSERT_EQ(expect, (unsigned long)r);
	ASSERT_STREQ("", trace.error);
	for (i = 0; i < NR_GJ; i++) {
		TH_LOG("%-8s %lu instructions checked", gj_name[i],
		       trace.steps[i]);
		EXPECT_LT(0UL, trace.steps[i]);
	}
}

/* Tests that sample: the patched kernel, under QEMU. */

/* What a session saw.  Chains are compared for samples in gj_leaf. */
struct tally {
	unsigned long calls;
	struct ring_counts ring;
	unsigned long leaf;		/* with the IP in gj_leaf */
	unsigned long in_jit;		/* elsewhere in the code area */
	unsigned long not_user;
	struct chain_tally chains;	/* of the gj_leaf samples */
};

struct tally_ctx {
	struct tally *t;
	const struct gj_code *c;
	const __u64 *want;
};

static void tally_chain(void *arg, __u64 ip, const __u64 *chain, __u64 nr)
{
	struct tally_ctx *ctx = arg;
	struct tally *t = ctx->t;
	__u64 want[NR_FRAMES];

	if (!in_fn(&ctx->c->fn[GJ_LEAF], ip)) {
		if (ip >= (unsigned long)ctx->c->area &&
		    ip < (unsigned long)ctx->c->area + ctx->c->text_size)
			t->in_jit++;
		return;
	}
	t->leaf++;
	memcpy(want, ctx->want, sizeof(want));
	want[0] = ip;
	chain_tally_add(&t->chains, NR_FRAMES, chain, nr, want);
}

/*
 * Sample runs of the chain until MIN_LEAF_SAMPLES samples landed in
 * gj_leaf, or SESSION_SECONDS passed; each run's result and stored
 * return addresses are checked, and its samples read right after it.
 */
static void sample_session(struct __test_metadata *_metadata,
			   const struct gj_code *c, struct tally *t)
{
	struct timespec start, run_start;
	struct perf_event_attr attr;
	__u64 want[NR_FRAMES];
	struct tally_ctx ctx = { .t = t, .c = c, .want = want };
	struct sampler s;

	memset(t, 0, sizeof(*t));
	sampler_attr(&attr, SAMPLE_PERIOD_NS, true);
	sampler_start(_metadata, &s, &attr, RING_PAGES);
	gj_spin = 1000;
	clock_gettime(CLOCK_MONOTONIC, &start);
	ASSERT_EQ(0, sampler_enable(&s, true));
	while (t->leaf < MIN_LEAF_SAMPLES &&
	       elapsed(CLOCK_MONOTONIC, &start) < SESSION_SECONDS) {
		unsigned long expect = model_entry(CHAIN_ARG);
		double took;

		t->calls++;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &run_start);
		ASSERT_EQ(expect, run_chain(c, CHAIN_ARG));
		took = elapsed(CLOCK_THREAD_CPUTIME_ID, &run_start);
		check_stored(_metadata, c);
		expected_chain(want);
		sampler_drain_chains(&s, tally_chain, &ctx, &t->not_user,
				     &t->ring);
		spin_tune(&gj_spin, took);
	}
	ASSERT_EQ(0, sampler_enable(&s, false));
	sampler_drain_chains(&s, tally_chain, &ctx, &t->not_user,
			     &t->ring);
	sampler_close(&s);
}

static void tally_log(struct __test_metadata *_metadata, const struct tally *t)
{
	TH_LOG("%lu runs, %lu samples: %lu in gj_leaf, %lu elsewhere in the code area",
	       t->calls, t->ring.samples, t->leaf, t->in_jit);
	TH_LOG("%lu without a user context, %lu bad records, %lu lost, %lu throttles",
	       t->not_user, t->ring.bad_records, t->ring.lost,
	       t->ring.throttled);
	chain_tally_log(_metadata, &t->chains, NR_FRAMES, "gj_leaf samples",
			frame_name, 24);
}

/* How the code area is known to the kernel. */
enum gj_reg_mode {
	GJ_REGISTERED,		/* a registry with the imported functions */
	GJ_NOT_REGISTERED,	/* no registry at all */
	GJ_REMOVED,		/* a registry whose functions were removed */
};

FIXTURE(sample) {
	struct gj_code code;
};

FIXTURE_VARIANT(sample) {
	enum gj_reg_mode mode;
	/* The first frame that differs in every gj_leaf sample. */
	unsigned int first_bad;
};

/* Every frame exact. */
FIXTURE_VARIANT_ADD(sample, registered) {
	.mode = GJ_REGISTERED,
	.first_bad = NR_FRAMES,
};

/*
 * gj_leaf gets the frame-pointer fallback, and %rbp is not its frame
 * pointer: the chain is wrong from its caller's return address on.
 */
FIXTURE_VARIANT_ADD(sample, not_registered) {
	.mode = GJ_NOT_REGISTERED,
	.first_bad = 1,
};

/* Tombstones get the same fallback. */
FIXTURE_VARIANT_ADD(sample, removed) {
	.mode = GJ_REMOVED,
	.first_bad = 1,
};

FIXTURE_SETUP(sample)
{
	int ret;

	if (sampling_skip(_metadata))
		return;
	gj_setup(_metadata, &self->code);
	if (variant->mode == GJ_NOT_REGISTERED)
		return;
	ret = gj_register(&self->code, 0);
	ASSERT_EQ(NR_GJ, ret) TH_LOG("import: %s", strerror(-ret));
	if (variant->mode == GJ_REMOVED) {
		unsigned long area = (unsigned long)self->code.area;

		ASSERT_EQ(NR_GJ, sframe_jit_remove_range(self->code.reg, area,
							 area + CODE_AREA_SIZE));
	}
}

FIXTURE_TEARDOWN(sample)
{
	gj_teardown(&self->code);
}

TEST_F_TIMEOUT(sample, callchains_in_the_leaf_are_exact_only_through_the_registry,
	       90)
{
	struct tally t;

	gj_log_layout(_metadata, &self->code);
	sample_session(_metadata, &self->code, &t);
	tally_log(_metadata, &t);
	EXPECT_EQ(0UL, t.not_user);
	EXPECT_EQ(0UL, t.ring.bad_records);
	ASSERT_LE(MIN_LEAF_SAMPLES, t.leaf) TH_LOG("too few samples in gj_leaf");
	EXPECT_EQ(t.leaf, t.chains.first_bad[variant->first_bad]);
}

TEST_HARNESS_MAIN
