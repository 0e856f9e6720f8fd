// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's calls: pidfd_open(2), process_vm_readv(2),
 * process_sframe_register(2) and process_sframe_unregister(2).  The numbers of the last two are
 * provisional, so they are used only where the kernel shows that it
 * has the sframe calls (kernel.sframe_max_registrations exists): on
 * another kernel they may name other calls.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/sframe.h>

#include "sframe_agent.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open			434
#endif
#ifndef __NR_process_sframe_register
#define __NR_process_sframe_register	475
#endif
#ifndef __NR_process_sframe_unregister
#define __NR_process_sframe_unregister	476
#endif

#define MAX_REGS_SYSCTL	"/proc/sys/kernel/sframe_max_registrations"

/**
 * agent_kernel_has_calls() - does the kernel have the agent's calls?
 *
 * Asked with an unregistration that any kernel with the call refuses
 * for its arguments, before it looks at the pidfd.
 *
 * Return: true if it does.
 */
bool agent_kernel_has_calls(void)
{
	struct sframe_process_setup s = { 0 };

	if (access(MAX_REGS_SYSCTL, F_OK))
		return false;
	return !syscall(__NR_process_sframe_unregister, -1, &s, sizeof(s), 0) ||
	       errno == EINVAL;
}

/**
 * agent_pidfd_open() - a pidfd for a process
 * @pid: the process.
 *
 * Return: the descriptor, or a negative errno.
 */
int agent_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

/**
 * agent_read() - read a process's memory
 * @pid: the process.
 * @addr: the first byte, in the process.
 * @buf: where the bytes go.
 * @size: how many to read at most.
 *
 * A read that meets memory the process has not mapped stops there.
 *
 * Return: the bytes read, or a negative errno of process_vm_readv(2).
 */
ssize_t agent_read(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	struct iovec local = { .iov_base = buf, .iov_len = size };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = size };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : n;
}

/**
 * agent_peek() - read a process's memory, all of it
 * @pid: the process.
 * @addr: the first byte, in the process.
 * @buf: where the bytes go.
 * @size: how many.
 *
 * Return: 0, or -EFAULT when not all @size bytes could be read.
 */
int agent_peek(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	return agent_read(pid, addr, buf, size) == (ssize_t)size ? 0 : -EFAULT;
}

/**
 * agent_register() - register a file's table for a range of a process
 * @pidfd: the process.
 * @t: the table, with a section.
 * @bias: where the process loaded the file, less its own layout.
 * @start: first byte of the code, in the process.
 * @end: end of the code.
 *
 * Return: 0, or the kernel's negative errno.
 */
int agent_register(int pidfd, const struct agent_table *t, uint64_t bias,
		   uint64_t start, uint64_t end)
{
	struct sframe_process_setup s = {
		.sframe_start	= (uintptr_t)t->sframe,
		.sframe_size	= t->sframe_size,
		.sframe_addr	= t->sframe_vaddr + bias,
		.text_start	= start,
		.text_size	= end - start,
	};

	if (syscall(__NR_process_sframe_register, pidfd, &s, sizeof(s), 0))
		return -errno;
	return 0;
}

/**
 * agent_unregister() - remove the agent's registration of a range
 * @pidfd: the process.
 * @start: the range's first byte.
 * @end: its end.
 *
 * Return: 0, or the kernel's negative errno.
 */
int agent_unregister(int pidfd, uint64_t start, uint64_t end)
{
	struct sframe_process_setup s = {
		.text_start	= start,
		.text_size	= end - start,
	};

	if (syscall(__NR_process_sframe_unregister, pidfd, &s, sizeof(s), 0))
		return -errno;
	return 0;
}
