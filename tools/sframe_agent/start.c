// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sframe-agent -- CMD: start a program with tables from its first
 * instruction.  The child is traced from its exec until its dynamic
 * loader has mapped the program's libraries, and no longer:
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

static void child_exec(char **argv)
{
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(126);
	execvp(argv[0], argv);
	fprintf(stderr, "sframe-agent: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/**
 * agent_start_child() - start a program, stopped at its exec
 * @argv: the program and its arguments.
 * @pidp: set to the child's pid.
 * @status: set to the child's wait status if it ended instead.
 *
 * Return: 0 with the child stopped at its exec; 1 if it ended instead,
 * exec failing included; a negative errno if it could not be started.
 */
int agent_start_child(char **argv, pid_t *pidp, int *status)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_exec(argv);
	*pidp = pid;
	if (waitpid(pid, status, 0) != pid)
		return -errno;
	return WIFSTOPPED(*status) ? 0 : 1;
}

/**
 * agent_start_run() - give a child stopped at its exec its tables, let it go
 * @pid: the child.
 * @st: what was done, added to.
 * @status: set to the child's wait status if it ended meanwhile.
 *
 * Return: 0 with the child running untraced, 1 if it ended.
 */
int agent_start_run(pid_t pid, struct agent_stats *st, int *status)
{
	struct loader l = { 0 };
	int err;

	st->procs++;
	agent_attach(pid, st);
	err = loader_find(pid, &l);
	if (!err)
		err = loader_run(pid, &l, st, status);
	if (err == -ECHILD)
		return 1;
	if (err && err != -ENOENT)
		agent_log(0, "%d: lost the loader's stops; going on untraced\n",
			  (int)pid);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}
