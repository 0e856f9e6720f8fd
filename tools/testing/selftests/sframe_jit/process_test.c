// SPDX-License-Identifier: GPL-2.0
/*
 * process_sframe_register(2) and process_sframe_unregister(2): this
 * process, as an agent, registers tables for a child it forked, which
 * runs commands sent through a pipe so that it can make its own calls
 * too.  The child has a copy of this program's text and .sframe in
 * anonymous memory, at the same addresses as the agent's copy.
 */
#include <poll.h>
#include <sys/syscall.h>

#include "sframe_test.h"

#ifndef __NR_process_sframe_register
#define __NR_process_sframe_register	475
#endif
#ifndef __NR_process_sframe_unregister
#define __NR_process_sframe_unregister	476
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open			434
#endif

#define MAX_REGS_PATH	"/proc/sys/kernel/sframe_max_registrations"
#define PINNED_PATH	"/proc/sys/kernel/sframe_user_pinned_kb"
#define LOOP_ARG	"--sframe-process-loop"
#define NOBODY		65534

/* A setup of a later version: the known fields, then a tail. */
struct setup_ext {
	struct sframe_process_setup s;
	__u64 tail;
};

static int proc_register(int pidfd, const void *setup, size_t size,
			 unsigned int flags)
{
	long ret = syscall(__NR_process_sframe_register, pidfd, setup, size,
			   flags);

	return ret < 0 ? -errno : 0;
}

static int proc_unregister(int pidfd, const void *setup, size_t size,
			   unsigned int flags)
{
	long ret = syscall(__NR_process_sframe_unregister, pidfd, setup, size,
			   flags);

	return ret < 0 ? -errno : 0;
}

/* The copy's section and text, as the agent registers them. */
static struct sframe_process_setup copy_psetup(const struct sframe_copy *c)
{
	return (struct sframe_process_setup){
		.sframe_start	= (unsigned long)c->sframe,
		.sframe_size	= c->sframe_size,
		.sframe_addr	= (unsigned long)c->sframe,
		.text_start	= c->text_start,
		.text_size	= c->text_end - c->text_start,
	};
}

static int agent_register(int pidfd, const struct sframe_copy *c)
{
	struct sframe_process_setup s = copy_psetup(c);

	return proc_register(pidfd, &s, sizeof(s), 0);
}

static int agent_unregister(int pidfd, unsigned long start, unsigned long end)
{
	struct sframe_process_setup s = {
		.text_start	= start,
		.text_size	= end - start,
	};

	return proc_unregister(pidfd, &s, sizeof(s), 0);
}

/* Commands the child runs; each answers with an int. */
enum {
	CMD_QUIT = 'q',
	CMD_REGISTER = 'r',	/* sframe_register(2) of the copy */
	CMD_UNREGISTER = 'u',	/* sframe_unregister(2) of the copy */
	CMD_FORK = 'f',		/* fork a child that runs commands too */
	CMD_EXEC = 'e',		/* exec this program to run commands */
};

struct child {
	pid_t pid;
	int pidfd;
	int cmd;	/* write end */
	int ack;	/* read end */
};

static void child_loop(struct sframe_copy *c, int cmd, int ack);

/* In a child: answer @op; 1 if the loop goes on. */
static int child_run(struct sframe_copy *c, char op, int cmd, int ack)
{
	char fdarg[2][16];
	int ret = 0;
	pid_t pid;

	switch (op) {
	case CMD_REGISTER:
		ret = copy_elf_register(c);
		break;
	case CMD_UNREGISTER:
		ret = copy_elf_unregister(c);
		break;
	case CMD_FORK:
		/* The grandchild answers on the same pipes, then serves. */
		pid = fork();
		if (pid == 0)
			child_loop(c, cmd, ack);
		ret = pid;
		break;
	case CMD_EXEC:
		snprintf(fdarg[0], sizeof(fdarg[0]), "%d", cmd);
		snprintf(fdarg[1], sizeof(fdarg[1]), "%d", ack);
		execl("/proc/self/exe", "process_test", LOOP_ARG, fdarg[0],
		      fdarg[1], (char *)NULL);
		ret = -errno;
		break;
	default:
		return 0;
	}
	return write(ack, &ret, sizeof(ret)) == sizeof(ret);
}

static void child_loop(struct sframe_copy *c, int cmd, int ack)
{
	char op;

	while (read(cmd, &op, 1) == 1 && child_run(c, op, cmd, ack))
		;
	_exit(0);
}

static int child_ask(struct child *ch, char op)
{
	int ret;

	if (write(ch->cmd, &op, 1) != 1 ||
	    read(ch->ack, &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return ret;
}

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static int child_start(struct child *ch, struct sframe_copy *c)
{
	int cmd[2], ack[2];

	if (pipe(cmd) || pipe(ack))
		return -1;
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (ch->pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		child_loop(c, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	ch->cmd = cmd[1];
	ch->ack = ack[0];
	ch->pidfd = pidfd_open(ch->pid);
	return ch->pidfd < 0 ? -1 : 0;
}

static void child_stop(struct child *ch)
{
	if (ch->pid <= 0)
		return;
	close(ch->cmd);
	close(ch->ack);
	close(ch->pidfd);
	kill(ch->pid, SIGKILL);
	waitpid(ch->pid, NULL, 0);
	ch->pid = 0;
}

FIXTURE(process) {
	struct self_sframe me;
	struct sframe_copy copy;
	struct child ch;
	char max_regs[32];
	char pinned[32];
};

FIXTURE_SETUP(process)
{
	if (sframe_skip(_metadata))
		return;
	ASSERT_TRUE(self_sframe_find(&self->me));
	ASSERT_EQ(0, sframe_copy_make(&self->me, &self->copy, true));
	ASSERT_EQ(0, sysctl_read(MAX_REGS_PATH, self->max_regs,
				 sizeof(self->max_regs)));
	ASSERT_EQ(0, sysctl_read(PINNED_PATH, self->pinned,
				 sizeof(self->pinned)));
	ASSERT_EQ(0, child_start(&self->ch, &self->copy));
}

FIXTURE_TEARDOWN(process)
{
	child_stop(&self->ch);
	if (self->max_regs[0])
		sysctl_write(MAX_REGS_PATH, self->max_regs);
	if (self->pinned[0])
		sysctl_write(PINNED_PATH, self->pinned);
}

TEST_F(process, registers_and_unregisters_a_range_of_another_process)
{
	struct sframe_copy *c = &self->copy;

	ASSERT_EQ(0, agent_register(self->ch.pidfd, c));
	EXPECT_EQ(-EEXIST, agent_register(self->ch.pidfd, c));
	EXPECT_EQ(0, agent_unregister(self->ch.pidfd, c->text_start,
				      c->text_end));
	EXPECT_EQ(-ENOENT, agent_unregister(self->ch.pidfd, c->text_start,
					    c->text_end));
	/* The agent's own process has no registration of the range. */
	EXPECT_EQ(0, copy_elf_register(c));
	EXPECT_EQ(0, copy_elf_unregister(c));
}

TEST_F(process, arguments_are_checked)
{
	struct sframe_process_setup s = copy_psetup(&self->copy);
	struct setup_ext ext = { .s = s };
	int pidfd = self->ch.pidfd;

	EXPECT_EQ(-EINVAL, proc_register(pidfd, &s, sizeof(s), 1));
	EXPECT_EQ(-EINVAL, proc_register(pidfd, &s, sizeof(s) - 8, 0));
	s.flags = 1;
	EXPECT_EQ(-EINVAL, proc_register(pidfd, &s, sizeof(s), 0));
	s = copy_psetup(&self->copy);
	s.text_size = 0;
	EXPECT_EQ(-EINVAL, proc_register(pidfd, &s, sizeof(s), 0));
	s = copy_psetup(&self->copy);
	s.sframe_size = 4;
	EXPECT_EQ(-EINVAL, proc_register(pidfd, &s, sizeof(s), 0));
	s = copy_psetup(&self->copy);
	s.text_start = -4096UL;
	EXPECT_EQ(-EINVAL, proc_register(pidfd, &s, sizeof(s), 0));
	EXPECT_EQ(-EFAULT, proc_register(pidfd, NULL, sizeof(s), 0));

	/* A later version's structure: its tail must be zero here. */
	ext.tail = 1;
	EXPECT_EQ(-E2BIG, proc_register(pidfd, &ext, sizeof(ext), 0));
	ext.tail = 0;
	EXPECT_EQ(0, proc_register(pidfd, &ext, sizeof(ext), 0));

	/* Unregistration names the range alone. */
	s = copy_psetup(&self->copy);
	EXPECT_EQ(-EINVAL, proc_unregister(pidfd, &s, sizeof(s), 0));
	s.sframe_start = 0;
	s.sframe_size = 0;
	s.sframe_addr = 0;
	EXPECT_EQ(-EINVAL, proc_unregister(pidfd, &s, sizeof(s), 1));
	EXPECT_EQ(0, proc_unregister(pidfd, &s, sizeof(s), 0));
}

TEST_F(process, a_descriptor_that_is_no_pidfd_is_EBADF)
{
	int fd = open("/dev/null", O_RDONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADF, agent_register(-1, &self->copy));
	EXPECT_EQ(-EBADF, agent_register(fd, &self->copy));
	EXPECT_EQ(-EBADF, agent_unregister(fd, self->copy.text_start,
					   self->copy.text_end));
	close(fd);
}

TEST_F(process, a_process_that_is_gone_is_ESRCH)
{
	struct sframe_copy *c = &self->copy;
	int pidfd = self->ch.pidfd;
	siginfo_t info;

	ASSERT_EQ(0, agent_register(pidfd, c));
	ASSERT_EQ(0, kill(self->ch.pid, SIGKILL));
	/* A zombie has no mm left; a reaped process no task. */
	ASSERT_EQ(0, waitid(P_PID, self->ch.pid, &info, WEXITED | WNOWAIT));
	EXPECT_EQ(-ESRCH, agent_register(pidfd, c));
	EXPECT_EQ(-ESRCH, agent_unregister(pidfd, c->text_start, c->text_end));
	ASSERT_EQ(self->ch.pid, waitpid(self->ch.pid, NULL, 0));
	EXPECT_EQ(-ESRCH, agent_register(pidfd, c));
	self->ch.pid = 0;
	close(self->ch.cmd);
	close(self->ch.ack);
	close(pidfd);
}

/* In a child that gave up root: the agent call on @pidfd. */
static int register_as_nobody(int pidfd, const struct sframe_copy *c)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		_exit(-agent_register(pidfd, c));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return -WEXITSTATUS(status);
}

TEST_F(process, a_caller_that_may_not_attach_is_EPERM)
{
	EXPECT_EQ(-EPERM, register_as_nobody(self->ch.pidfd, &self->copy));
	/* Nothing was registered. */
	EXPECT_EQ(-ENOENT, agent_unregister(self->ch.pidfd,
					    self->copy.text_start,
					    self->copy.text_end));
}

TEST_F(process, the_range_must_be_executable_and_the_section_valid)
{
	struct sframe_copy *c = &self->copy;
	struct sframe_process_setup s = copy_psetup(c);
	int pidfd = self->ch.pidfd;

	/* The section's own pages are not executable in the child. */
	s.text_start = page_down((unsigned long)c->sframe);
	s.text_size = page_size();
	EXPECT_EQ(-EACCES, proc_register(pidfd, &s, sizeof(s), 0));

	/* The agent's bytes are read, not the child's. */
	s = copy_psetup(c);
	copy_hdr(c)->magic ^= 0xffff;
	EXPECT_EQ(-ENOEXEC, proc_register(pidfd, &s, sizeof(s), 0));
	sframe_copy_reset(c);

	s.sframe_start = (unsigned long)arena_reserve(1);
	ASSERT_NE((unsigned long)MAP_FAILED, s.sframe_start);
	EXPECT_EQ(-EFAULT, proc_register(pidfd, &s, sizeof(s), 0));
	EXPECT_EQ(-ENOENT, agent_unregister(pidfd, c->text_start,
					    c->text_end));
}

TEST_F(process, the_agents_entry_is_not_the_processs_to_unregister)
{
	ASSERT_EQ(0, agent_register(self->ch.pidfd, &self->copy));
	EXPECT_EQ(-ENOENT, child_ask(&self->ch, CMD_UNREGISTER));
	EXPECT_EQ(0, agent_unregister(self->ch.pidfd, self->copy.text_start,
				      self->copy.text_end));
}

TEST_F(process, the_processs_own_registration_replaces_the_agents)
{
	struct sframe_copy *c = &self->copy;

	ASSERT_EQ(0, agent_register(self->ch.pidfd, c));
	EXPECT_EQ(0, child_ask(&self->ch, CMD_REGISTER));
	/* The entry is the process's now, and the agent's is gone. */
	EXPECT_EQ(-ENOENT, agent_unregister(self->ch.pidfd, c->text_start,
					    c->text_end));
	EXPECT_EQ(-EEXIST, agent_register(self->ch.pidfd, c));
	EXPECT_EQ(0, child_ask(&self->ch, CMD_UNREGISTER));
	EXPECT_EQ(0, agent_register(self->ch.pidfd, c));
}

TEST_F(process, an_agent_never_replaces_an_entry_and_the_process_does)
{
	struct sframe_copy *c = &self->copy;
	struct sframe_process_setup s = copy_psetup(c);

	s.text_size = 1;
	ASSERT_EQ(0, proc_register(self->ch.pidfd, &s, sizeof(s), 0));
	EXPECT_EQ(-EEXIST, agent_register(self->ch.pidfd, c));
	EXPECT_EQ(0, child_ask(&self->ch, CMD_REGISTER));
	EXPECT_EQ(-ENOENT, agent_unregister(self->ch.pidfd, s.text_start,
					    s.text_start + 1));
}

TEST_F(process, a_fork_keeps_the_agents_entry_and_an_exec_drops_it)
{
	struct sframe_copy *c = &self->copy;
	struct child gc = { .cmd = self->ch.cmd, .ack = self->ch.ack };

	ASSERT_EQ(0, agent_register(self->ch.pidfd, c));
	gc.pid = child_ask(&self->ch, CMD_FORK);
	ASSERT_LT(0, gc.pid);
	gc.pidfd = pidfd_open(gc.pid);
	ASSERT_LE(0, gc.pidfd);
	/* The grandchild has its own copy of the entry. */
	EXPECT_EQ(-EEXIST, agent_register(gc.pidfd, c));
	EXPECT_EQ(0, agent_unregister(gc.pidfd, c->text_start, c->text_end));
	EXPECT_EQ(-ENOENT, agent_unregister(gc.pidfd, c->text_start,
					    c->text_end));

	/* Both read the one pipe: stop the grandchild, then exec the child. */
	ASSERT_EQ(0, kill(gc.pid, SIGKILL));
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = gc.pidfd, .events = POLLIN },
			  1, -1));
	close(gc.pidfd);
	ASSERT_EQ(0, child_ask(&self->ch, CMD_EXEC));
	EXPECT_EQ(-ENOENT, agent_unregister(self->ch.pidfd, c->text_start,
					    c->text_end));
}

TEST_F(process, past_the_registrations_limit_ENOSPC)
{
	/* The child has the entries of its exec at least. */
	ASSERT_EQ(0, sysctl_write(MAX_REGS_PATH, "1"));
	EXPECT_EQ(-ENOSPC, agent_register(self->ch.pidfd, &self->copy));
}

/* In a child without CAP_IPC_LOCK: the agent call on @pidfd. */
static int register_uncapped(int pidfd, const struct sframe_process_setup *s)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (drop_cap_ipc_lock(true))
			_exit(100);
		_exit(-proc_register(pidfd, s, sizeof(*s), 0));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return -WEXITSTATUS(status);
}

TEST_F(process, past_the_callers_pinned_limit_ENOMEM)
{
	struct sframe_process_setup s = copy_psetup(&self->copy);

	ASSERT_EQ(0, sysctl_write(PINNED_PATH, "0"));
	EXPECT_EQ(-ENOMEM, register_uncapped(self->ch.pidfd, &s));
	ASSERT_EQ(0, sysctl_write(PINNED_PATH, self->pinned));
	EXPECT_EQ(0, register_uncapped(self->ch.pidfd, &s));
}

/*
 * Where this program's text is in its file: its address less its file
 * offset.
 */
static bool text_file_delta(unsigned long addr, unsigned long *delta)
{
	struct maps_entry e;

	if (!maps_lookup(addr, &e))
		return false;
	*delta = e.start - e.offset;
	return true;
}

/*
 * This program's file mapped whole, executable: the code of @me at the
 * offsets the file has it.
 */
static char *map_self(size_t *size)
{
	struct stat st;
	char *map;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return MAP_FAILED;
	*size = st.st_size;
	map = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	return map;
}

/* @me's text in a whole mapping of the file at @map. */
static struct sframe_process_setup file_psetup(const struct self_sframe *me,
					       unsigned long delta, char *map)
{
	unsigned long m = (unsigned long)map;

	return (struct sframe_process_setup){
		.sframe_start	= me->sframe_start,
		.sframe_size	= me->sframe_size,
		.sframe_addr	= m + me->sframe_start - delta,
		.text_start	= m + me->text_start - delta,
		.text_size	= me->text_end - me->text_start,
	};
}

TEST_F(process, processes_that_map_one_file_share_one_copy)
{
	struct sframe_process_setup s1, s2;
	struct child other = { 0 };
	unsigned long delta;
	char *map1, *map2;
	size_t size;

	ASSERT_TRUE(text_file_delta(self->me.text_start, &delta));
	/* Two mappings of the file, each child with both. */
	child_stop(&self->ch);
	map1 = map_self(&size);
	map2 = map_self(&size);
	ASSERT_NE(MAP_FAILED, map1);
	ASSERT_NE(MAP_FAILED, map2);
	ASSERT_EQ(0, child_start(&self->ch, &self->copy));
	ASSERT_EQ(0, child_start(&other, &self->copy));
	s1 = file_psetup(&self->me, delta, map1);
	s2 = file_psetup(&self->me, delta, map2);

	ASSERT_EQ(0, proc_register(self->ch.pidfd, &s1, sizeof(s1), 0));
	ASSERT_EQ(0, sysctl_write(PINNED_PATH, "0"));
	/* Same file, offset and bytes at another address: no new charge. */
	EXPECT_EQ(0, register_uncapped(other.pidfd, &s2));
	/* The anonymous copy of the same code is no file's: a charge. */
	EXPECT_EQ(-ENOMEM, register_uncapped(other.pidfd, &(struct
		  sframe_process_setup){ .sframe_start = s1.sframe_start,
		  .sframe_size = s1.sframe_size,
		  .sframe_addr = (unsigned long)self->copy.sframe,
		  .text_start = self->copy.text_start,
		  .text_size = s1.text_size }));
	child_stop(&other);
	munmap(map1, size);
	munmap(map2, size);
}

int main(int argc, char **argv)
{
	struct self_sframe me;
	struct sframe_copy c;

	/*
	 * An exec'd child answers the exec, then goes on serving commands
	 * with a copy of its own.
	 */
	if (argc == 4 && !strcmp(argv[1], LOOP_ARG)) {
		int ok = 0;

		if (!self_sframe_find(&me) || sframe_copy_make(&me, &c, true))
			_exit(1);
		if (write(atoi(argv[3]), &ok, sizeof(ok)) != sizeof(ok))
			_exit(1);
		child_loop(&c, atoi(argv[2]), atoi(argv[3]));
	}
	return test_harness_run(argc, argv);
}
