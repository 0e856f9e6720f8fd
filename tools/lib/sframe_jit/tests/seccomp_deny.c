// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_deny [--errno] NR[,NR...] CMD [ARGS...]: run CMD under a
 * seccomp filter that kills the process at any of the system calls NR
 * (or, with --errno, fails them with EPERM, as a container's profile
 * does) and lets every other through: an allow-list that does not name
 * those calls, as systemd's SystemCallFilter= makes one, seen from the
 * calls it leaves out.  For sframe_run_vm.sh.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_NRS		8

/* A jump to the deny at @deny if the number is @nr. */
#define NR_IS(nr, deny) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), (deny), 0)

static int filter_install(const unsigned int *nrs, int n, unsigned int deny)
{
	struct sock_filter f[4 + MAX_NRS + 2];
	struct sock_fprog prog = { .filter = f };
	int i, k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, nr));
	/* Each jump lands on the deny, past the allow. */
	for (i = 0; i < n; i++)
		f[k++] = (struct sock_filter)NR_IS(nrs[i], n - i);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	prog.len = k;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int nrs[MAX_NRS], deny = SECCOMP_RET_KILL_PROCESS;
	char *p, *end;
	int n = 0, a = 1, err;

	if (argc > a && !strcmp(argv[a], "--errno")) {
		deny = SECCOMP_RET_ERRNO | EPERM;
		a++;
	}
	if (argc < a + 2) {
		fprintf(stderr, "usage: %s [--errno] NR[,NR...] CMD [ARGS...]\n",
			argv[0]);
		return 2;
	}
	for (p = argv[a]; *p && n < MAX_NRS; p = *end ? end + 1 : end) {
		nrs[n++] = strtoul(p, &end, 10);
		if (end == p || (*end && *end != ','))
			return 2;
	}
	err = filter_install(nrs, n, deny);
	if (err) {
		fprintf(stderr, "seccomp_deny: %s\n", strerror(-err));
		return 1;
	}
	execvp(argv[a + 1], argv + a + 1);
	fprintf(stderr, "seccomp_deny: %s: %s\n", argv[a + 1], strerror(errno));
	return 127;
}
