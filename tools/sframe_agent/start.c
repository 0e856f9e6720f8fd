// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sframe-agent -- CMD: start a program with tables from its first
 * instruction.  The program is exec'd in the agent's own process, and
 * a helper traces it from its exec until its dynamic loader has mapped
 * the program's libraries, and no longer:
 *
 *  - at the exec stop, before the program runs, the executable, the
 *    loader and the vDSO get their tables;
 *  - a breakpoint on the loader's _dl_debug_state(), the function a
 *    debugger breaks on (r_brk), stops the child each time the loader
 *    changes its list of objects, before it runs their initialisers;
 *    at each stop the new mappings get their tables;
 *  - at the stop that reports the list consistent again (_r_debug's
 *    r_state RT_CONSISTENT) the breakpoint is removed and the child let
 *    go.  What it maps later (dlopen()) is followed by the side-band
 *    records, as for -p.
 *
 * A static executable has no loader: it is let go at the exec stop.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sframe_agent.h"

#define RT_CONSISTENT	0
/* Offset of r_state in struct r_debug on x86-64. */
#define R_STATE_OFF	24

struct loader {
	uint64_t brk;		/* _dl_debug_state() */
	uint64_t r_debug;	/* _r_debug */
	long orig;		/* the word the breakpoint replaced */
};

/* The child's AT_BASE: where its loader is, 0 for a static program. */
static uint64_t child_at_base(pid_t pid)
{
	uint64_t v[2], base = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, v, sizeof(v)) == sizeof(v) && v[0] != AT_NULL)
		if (v[0] == AT_BASE)
			base = v[1];
	close(fd);
	return base;
}

/* The values of two symbols of the loader's .dynsym. */
static int loader_syms(int fd, struct loader *l)
{
	GElf_Shdr sh;
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	GElf_Sym sym;
	const char *name;
	Elf *e;
	size_t i;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -ENOEXEC;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize;
		     i++) {
			if (!gelf_getsym(d, i, &sym))
				break;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "_dl_debug_state"))
				l->brk = sym.st_value;
			else if (name && !strcmp(name, "_r_debug"))
				l->r_debug = sym.st_value;
		}
	}
	elf_end(e);
	return l->brk && l->r_debug ? 0 : -ENOENT;
}

/* Find the loader of the stopped child; -ENOENT for a static program. */
static int loader_find(pid_t pid, struct loader *l)
{
	uint64_t base = child_at_base(pid);
	int fd, err;

	if (!base)
		return -ENOENT;
	/* The loader's first mapping starts at its base. */
	fd = agent_open_mapping(pid, base);
	if (fd < 0)
		return fd;
	err = loader_syms(fd, l);
	close(fd);
	l->brk += base;
	l->r_debug += base;
	return err;
}

static int bp_set(pid_t pid, struct loader *l)
{
	errno = 0;
	l->orig = ptrace(PTRACE_PEEKTEXT, pid, (void *)l->brk, NULL);
	if (errno)
		return -errno;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)l->brk,
		   (void *)((l->orig & ~0xffL) | 0xcc)))
		return -errno;
	return 0;
}

/* Put the loader's word back and the child's PC on it. */
static int bp_undo(pid_t pid, const struct loader *l)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_POKETEXT, pid, (void *)l->brk, (void *)l->orig) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return -errno;
	regs.rip = l->brk;
	return ptrace(PTRACE_SETREGS, pid, NULL, &regs) ? -errno : 0;
}

/* Is the stop at the breakpoint, with the loader's list consistent? */
static bool bp_hit(pid_t pid, const struct loader *l, bool *consistent)
{
	struct user_regs_struct regs;
	long state;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) || regs.rip != l->brk + 1)
		return false;
	errno = 0;
	state = ptrace(PTRACE_PEEKDATA, pid, (void *)(l->r_debug + R_STATE_OFF),
		       NULL);
	*consistent = !errno && (int)state == RT_CONSISTENT;
	return true;
}

/* Step over the breakpoint's instruction and set it again. */
static int bp_step(pid_t pid, struct loader *l)
{
	int status;

	if (bp_undo(pid, l) || ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) ||
	    waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		return -ECHILD;
	return bp_set(pid, l);
}

/*
 * Run the child from the breakpoint's stops to the one that reports
 * the loader's list consistent, giving tables at each.  Signals that
 * meanwhile stop the child are delivered to it.
 */
static int loader_run(pid_t pid, struct loader *l, struct agent_stats *st,
		      int *status)
{
	bool consistent;
	int sig = 0;

	if (bp_set(pid, l))
		return -EIO;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) ||
		    waitpid(pid, status, 0) != pid)
			return -EIO;
		if (!WIFSTOPPED(*status))
			return -ECHILD;
		sig = WSTOPSIG(*status);
		if (sig != SIGTRAP || !bp_hit(pid, l, &consistent))
			continue;
		sig = 0;
		agent_attach(pid, st);
		if (consistent)
			return bp_undo(pid, l);
		if (bp_step(pid, l))
			return -EIO;
	}
}

/* Read one byte from @fd, or fail. */
static int sync_wait(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -EPIPE;
}

static void sync_post(int fd)
{
	char c = 0;

	/* A peer that is gone has nothing to wait for. */
	if (write(fd, &c, 1) != 1)
		return;
}

/*
 * In the tracer: seize the program's process @pid and wait for its
 * exec, which @go lets it make.
 */
static int tracer_seize(pid_t pid, int go, int *status)
{
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)PTRACE_O_TRACEEXEC))
		return -errno;
	sync_post(go);
	for (;;) {
		if (waitpid(pid, status, __WALL) != pid)
			return -errno;
		if (!WIFSTOPPED(*status))
			return -ECHILD;
		if (*status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return 0;
		/* A signal before the exec: the program's own. */
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(*status));
	}
}

/**
 * agent_exec() - exec a program in this process, traced by a helper
 * @argv: the program and its arguments.
 * @pidp: in the helper, set to the program's pid.
 *
 * The program keeps the agent's pid, its parent and its exit status,
 * as under env(1).  A grandchild, reparented away from it as strace -D
 * does, becomes the agent: it traces the program from its exec until
 * its loader has mapped its libraries.  Yama's ptrace scope is met with
 * PR_SET_PTRACER.
 *
 * Return: only in the helper: 0 with the program stopped at its exec,
 * or a negative errno.  This process becomes the program, or exits 127
 * or 126 if it cannot, as env(1) does.
 */
int agent_exec(char **argv, pid_t *pidp)
{
	int pid_pipe[2], go[2], seized[2], status;
	pid_t prog = getpid(), child, helper;
	struct sigaction old_pipe;

	/* Close-on-exec: the program inherits none of them. */
	if (pipe2(pid_pipe, O_CLOEXEC) || pipe2(go, O_CLOEXEC) ||
	    pipe2(seized, O_CLOEXEC))
		goto exec;
	child = fork();
	if (child < 0)
		goto exec;
	if (child == 0) {
		close(pid_pipe[0]);
		close(go[1]);
		close(seized[0]);
		/* Its parent exits: the program never has it as a child. */
		helper = fork();
		if (helper)
			_exit(helper < 0);
		helper = getpid();
		if (write(pid_pipe[1], &helper, sizeof(helper)) !=
		    sizeof(helper) || sync_wait(go[0]))
			_exit(1);
		*pidp = prog;
		return tracer_seize(prog, seized[1], &status);
	}
	/* Only the helper's ends stay open, so its end is seen as EOF. */
	close(pid_pipe[1]);
	close(go[0]);
	close(seized[1]);
	waitpid(child, NULL, 0);
	/* A helper gone would make the write below kill the program. */
	sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN },
		  &old_pipe);
	if (read(pid_pipe[0], &helper, sizeof(helper)) == sizeof(helper)) {
		prctl(PR_SET_PTRACER, helper, 0, 0, 0);
		sync_post(go[1]);
		/* Seized, or the helper gave up: either way, go on. */
		sync_wait(seized[0]);
	}
	sigaction(SIGPIPE, &old_pipe, NULL);
exec:
	execvp(argv[0], argv);
	fprintf(stderr, "sframe-agent: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/**
 * agent_start_run() - give a program stopped at its exec its tables, let it go
 * @pid: the program's process.
 * @st: what was done, added to.
 *
 * Return: 0 with the program running untraced, 1 if it ended.
 */
int agent_start_run(pid_t pid, struct agent_stats *st)
{
	struct loader l = { 0 };
	int err, status;

	st->procs++;
	agent_attach(pid, st);
	err = loader_find(pid, &l);
	if (!err)
		err = loader_run(pid, &l, st, &status);
	if (err == -ECHILD)
		return 1;
	if (err && err != -ENOENT)
		agent_log(0, "%d: lost the loader's stops; going on untraced\n",
			  (int)pid);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}
