// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A perf event's ring buffer, read by the agent: the side-band records
 * of its followers (follow.c) and the samples of its uprobes
 * (uprobe.c).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sframe_agent.h"

/**
 * agent_ring_open() - open an event and map its ring buffer
 * @r: the ring to set up.
 * @attr: the event.
 * @pid: the process it follows, -1 for every process.
 * @cpu: the CPU it counts on.
 * @pages: pages of data, a power of two: what may arrive between two
 *	reads.
 *
 * Return: 0, or a negative errno of perf_event_open(2) or mmap(2).
 */
int agent_ring_open(struct agent_ring *r, struct perf_event_attr *attr,
		    pid_t pid, int cpu, unsigned int pages)
{
	size_t page = sysconf(_SC_PAGESIZE);
	long fd;

	attr->size = sizeof(*attr);
	fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	r->fd = fd;
	r->size = (size_t)pages * page;
	r->page = mmap(NULL, page + r->size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, r->fd, 0);
	if (r->page == MAP_FAILED) {
		close(r->fd);
		return -errno;
	}
	return 0;
}

/**
 * agent_ring_read() - hand every record that arrived to @fn
 * @r: the ring.
 * @fn: called with each record, whole, NUL-terminated after its end.
 * @arg: passed to @fn.
 */
void agent_ring_read(struct agent_ring *r,
		     void (*fn)(const char *rec, void *arg), void *arg)
{
	const char *data = (const char *)r->page + r->page->data_offset;
	__u64 head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = r->page->data_tail;
	const struct perf_event_header *h;
	size_t off, first;

	while (tail < head) {
		off = tail % r->size;
		h = (const void *)(data + off);
		if (h->size < sizeof(*h))
			break;
		/*
		 * Records are 8-byte aligned in a buffer of whole pages, so
		 * a header never wraps; the rest of a record may.
		 */
		if (off + h->size > r->size) {
			first = r->size - off;
			memcpy(r->rec, data + off, first);
			memcpy(r->rec + first, data, h->size - first);
		} else {
			memcpy(r->rec, data + off, h->size);
		}
		r->rec[h->size] = '\0';
		tail += h->size;
		fn(r->rec, arg);
	}
	__atomic_store_n(&r->page->data_tail, head, __ATOMIC_RELEASE);
}

/**
 * agent_ring_close() - unmap a ring and close its event
 * @r: the ring.
 */
void agent_ring_close(struct agent_ring *r)
{
	munmap(r->page, sysconf(_SC_PAGESIZE) + r->size);
	close(r->fd);
}
