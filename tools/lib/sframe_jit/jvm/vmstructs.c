// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What HotSpot says of itself: libjvm exports gHotSpotVMStructs, the
 * table of field names and offsets its serviceability agent reads, with
 * the stride and the offsets of the table's own columns beside it.  The
 * agent takes from it the code cache's bounds (its registry's range)
 * and where a code blob keeps its frame size, to check the frames it
 * decodes against the compiler's own figure.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sframe_jvm.h"

struct table {
	const char *base;
	uint64_t stride;
	uint64_t type_off, field_off, static_off, offset_off, address_off;
};

static int sym_u64(const char *name, uint64_t *val)
{
	const uint64_t *p = dlsym(RTLD_DEFAULT, name);

	if (!p)
		return -ENOENT;
	*val = *p;
	return 0;
}

static int table_open(struct table *t)
{
	const char *const *base = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");

	if (!base || !*base)
		return -ENOENT;
	t->base = *base;
	if (sym_u64("gHotSpotVMStructEntryArrayStride", &t->stride) ||
	    sym_u64("gHotSpotVMStructEntryTypeNameOffset", &t->type_off) ||
	    sym_u64("gHotSpotVMStructEntryFieldNameOffset", &t->field_off) ||
	    sym_u64("gHotSpotVMStructEntryIsStaticOffset", &t->static_off) ||
	    sym_u64("gHotSpotVMStructEntryOffsetOffset", &t->offset_off) ||
	    sym_u64("gHotSpotVMStructEntryAddressOffset", &t->address_off))
		return -ENOENT;
	return t->stride ? 0 : -ENOENT;
}

/* The entry of @type's @field: its offset, or its address if static. */
static const char *table_find(const struct table *t, const char *type,
			      const char *field)
{
	const char *e;

	for (e = t->base; ; e += t->stride) {
		const char *tn = *(const char *const *)(e + t->type_off);
		const char *fn = *(const char *const *)(e + t->field_off);

		if (!tn)
			return NULL;
		if (fn && !strcmp(tn, type) && !strcmp(fn, field))
			return e;
	}
}

static long field_offset(const struct table *t, const char *type,
			 const char *field)
{
	const char *e = table_find(t, type, field);

	if (!e || *(const int32_t *)(e + t->static_off))
		return -1;
	return (long)*(const uint64_t *)(e + t->offset_off);
}

static int static_u64(const struct table *t, const char *type,
		      const char *field, uint64_t *val)
{
	const char *e = table_find(t, type, field);
	const uint64_t *p;

	if (!e || !*(const int32_t *)(e + t->static_off))
		return -ENOENT;
	p = *(const uint64_t *const *)(e + t->address_off);
	if (!p)
		return -ENOENT;
	*val = *p;
	return 0;
}

/**
 * sframe_jvm_vm_read() - read what the agent needs of HotSpot's VMStructs
 * @vm: filled in.
 *
 * Return: 0; -ENOENT when the process has no HotSpot or its table lacks
 * the code cache's bounds.  Missing CodeBlob offsets only turn off the
 * frame size check (-1).
 */
int sframe_jvm_vm_read(struct sframe_jvm_vm *vm)
{
	struct table t;
	int err;

	memset(vm, 0, sizeof(*vm));
	err = table_open(&t);
	if (err)
		return err;
	if (static_u64(&t, "CodeCache", "_low_bound", &vm->code_low) ||
	    static_u64(&t, "CodeCache", "_high_bound", &vm->code_high) ||
	    vm->code_low >= vm->code_high)
		return -ENOENT;
	vm->blob_size_off = field_offset(&t, "CodeBlob", "_size");
	vm->blob_header_size_off = field_offset(&t, "CodeBlob", "_header_size");
	vm->blob_frame_size_off = field_offset(&t, "CodeBlob", "_frame_size");
	vm->blob_code_begin_off = field_offset(&t, "CodeBlob", "_code_begin");
	vm->blob_code_end_off = field_offset(&t, "CodeBlob", "_code_end");
	vm->nm_osr_entry_off = field_offset(&t, "nmethod", "_osr_entry_point");
	return 0;
}

#define SCAN_BYTES	(64 << 10)
#define SCAN_PAGE	4096

/* Our own memory, read without faulting where it is not mapped. */
static size_t read_self(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)addr, .iov_len = len };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	return n < 0 ? 0 : (size_t)n;
}

static int32_t get32(const uint8_t *h, long off)
{
	int32_t v;

	memcpy(&v, h + off, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *h, long off)
{
	uint64_t v;

	memcpy(&v, h + off, sizeof(v));
	return v;
}

/*
 * A blob header at @h, at address @at, that owns the code?  The
 * method's own header holds the code's address in more than one field
 * (its entry points), so every field that places the code must agree.
 */
static bool blob_owns(const struct sframe_jvm_vm *vm, const uint8_t *h,
		      uint64_t at, uint64_t code_addr, uint32_t code_size)
{
	int32_t size = get32(h, vm->blob_size_off);
	int32_t header = get32(h, vm->blob_header_size_off);

	return get64(h, vm->blob_code_begin_off) == code_addr &&
	       get64(h, vm->blob_code_end_off) == code_addr + code_size &&
	       header > 0 && at + (uint64_t)header <= code_addr &&
	       size > 0 && at + (uint64_t)size >= code_addr + code_size &&
	       get32(h, vm->blob_frame_size_off) >= 0;
}

static long header_bytes(const struct sframe_jvm_vm *vm)
{
	const long offs[] = {
		vm->blob_size_off, vm->blob_header_size_off,
		vm->blob_frame_size_off, vm->blob_code_begin_off,
		vm->blob_code_end_off,
	};
	long need = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		if (offs[i] < 0)
			return -1;
		if (offs[i] > need)
			need = offs[i];
	}
	if (vm->nm_osr_entry_off > need)
		need = vm->nm_osr_entry_off;
	return need + 8;
}

static void blob_read(const struct sframe_jvm_vm *vm, const uint8_t *h,
		      uint64_t code_addr, uint32_t code_size,
		      struct sframe_jvm_blob *blob)
{
	uint64_t osr = 0;

	blob->frame_size = (uint32_t)get32(h, vm->blob_frame_size_off) * 8;
	if (vm->nm_osr_entry_off >= 0)
		osr = get64(h, vm->nm_osr_entry_off);
	blob->osr_entry = -1;
	if (osr > code_addr && osr < code_addr + code_size)
		blob->osr_entry = (int64_t)(osr - code_addr);
}

static int scan(const struct sframe_jvm_vm *vm, uint8_t *buf, long need,
		uint64_t code_addr, uint32_t code_size,
		struct sframe_jvm_blob *blob)
{
	uint64_t hi = code_addr & ~(uint64_t)7, base, lo, at;

	base = hi > SCAN_BYTES ? hi - SCAN_BYTES : 0;
	if (base < vm->code_low)
		base = vm->code_low;
	/*
	 * A page at a time, scanned as it comes: the header is most often
	 * within the first, and each read is a system call.
	 */
	for (lo = hi, at = hi - need; lo > base; ) {
		uint64_t from = (lo - 1) & ~(uint64_t)(SCAN_PAGE - 1);

		if (from < base)
			from = base;
		if (read_self(from, buf + (from - base), lo - from) != lo - from)
			break;
		lo = from;
		for (at &= ~(uint64_t)7; at >= lo && at + need <= hi; at -= 8) {
			if (blob_owns(vm, buf + (at - base), at, code_addr,
				      code_size)) {
				blob_read(vm, buf + (at - base), code_addr,
					  code_size, blob);
				return 0;
			}
			if (at < 8)
				break;
		}
	}
	return -ENOENT;
}

/**
 * sframe_jvm_vm_blob() - what HotSpot's header says of a compiled method
 * @vm: from sframe_jvm_vm_read().
 * @code_addr: the method's code, as JVMTI gives it.
 * @code_size: its size.
 * @blob: its frame size and OSR entry, filled in.
 *
 * Finds the CodeBlob that holds the code (its header sits below the code,
 * at most 64 KiB below it, and names the code's bounds).  The memory
 * below the code is read page by page with process_vm_readv(), which
 * stops where it ends instead of faulting.
 *
 * Return: 0; -ENOENT when no header is found or the offsets are not
 * known.
 */
int sframe_jvm_vm_blob(const struct sframe_jvm_vm *vm, uint64_t code_addr,
		       uint32_t code_size, struct sframe_jvm_blob *blob)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint8_t buf[SCAN_BYTES];	/* under @lock */
	long need = header_bytes(vm);
	int err;

	if (need < 0)
		return -ENOENT;
	/* The service thread and an attach's GenerateEvents may race. */
	pthread_mutex_lock(&lock);
	err = scan(vm, buf, need, code_addr, code_size, blob);
	pthread_mutex_unlock(&lock);
	return err;
}
