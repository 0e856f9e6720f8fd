// SPDX-License-Identifier: GPL-2.0
/*
 * Raw .eh_frame read by the library (eh_raw.c), as an agent reads it:
 * a copy of a JIT's entries taken out of its process, at an address
 * other than theirs, converted to the rows the entries have where they
 * are; the extent of entries found from a part of them without reading
 * past the part.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit_image.h"
#include "test.h"

TEST(eh_frame_extent_ends_at_the_terminator, T_MEM)
{
	struct jit_image im;
	size_t extent = 0;

	jit_image_fixture(&im);
	EXPECT_EQ(sframe_jit_eh_frame_extent(im.eh_frame,
					     im.eh_frame_size + 4, &extent), 0);
	EXPECT_EQ(extent, im.eh_frame_size);
	jit_image_free(&im);
}

/*
 * Each prefix short of the terminator asks for more, and is read up to
 * its last byte only: it is copied to the end of a page whose next one
 * is not mapped.
 */
TEST(eh_frame_extent_of_a_part_asks_for_more_and_reads_only_the_part, T_MEM)
{
	long page = sysconf(_SC_PAGESIZE);
	struct jit_image im;
	size_t cut, extent;
	char *map;

	jit_image_fixture(&im);
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(map != MAP_FAILED);
	ASSERT_EQ(munmap(map + page, page), 0);
	for (cut = 0; cut < im.eh_frame_size + 4; cut++) {
		memcpy(map + page - cut, im.eh_frame, cut);
		EXPECT_EQ(sframe_jit_eh_frame_extent(map + page - cut, cut,
						     &extent), -EAGAIN);
	}
	munmap(map, page);
	jit_image_free(&im);
}

TEST(eh_frame_extent_refuses_what_libgcc_cannot_read, T_MEM)
{
	static const uint32_t terminator[1];
	static const uint32_t dwarf64[4] = { 0xffffffff };
	size_t extent = 7;

	EXPECT_EQ(sframe_jit_eh_frame_extent(terminator, 4, &extent), -ENOENT);
	EXPECT_EQ(sframe_jit_eh_frame_extent(dwarf64, 16, &extent),
		  -EOPNOTSUPP);
	EXPECT_EQ(sframe_jit_eh_frame_extent(NULL, 16, &extent), -EINVAL);
	EXPECT_EQ(sframe_jit_eh_frame_extent(dwarf64, 16, NULL), -EINVAL);
	EXPECT_EQ(extent, 7);
}

/*
 * A copy converts to the code where the entries say it is, given where
 * the entries were: the FDE's PC-relative start is decoded from there.
 */
TEST(eh_frame_copy_converts_at_the_address_it_was_copied_from, T_MEM)
{
	const struct sframe_jit_row *rows;
	struct sframe_jit_cfi *cfi = NULL;
	struct sframe_jit_func f;
	struct jit_image im;
	void *copy;
	uint32_t i;

	jit_image_fixture(&im);
	copy = malloc(im.eh_frame_size);
	ASSERT(copy);
	memcpy(copy, im.eh_frame, im.eh_frame_size);
	/* The entries where they were are not read: not readable now. */
	ASSERT_EQ(mprotect(im.map, im.map_size, PROT_NONE), 0);
	ASSERT_EQ(sframe_jit_cfi_convert_eh_frame(copy, im.eh_frame_size,
						  (uintptr_t)im.eh_frame,
						  &cfi), 1);
	ASSERT_EQ(sframe_jit_cfi_func(cfi, 0, &f, &rows), 0);
	EXPECT_EQ(f.start, im.text);
	EXPECT_EQ(f.size, JIT_CALL_SIZE);
	ASSERT_EQ(f.nr_rows, JIT_CALL_NR_ROWS);
	for (i = 0; i < f.nr_rows; i++) {
		EXPECT_EQ(rows[i].start_off, jit_call_row_offs[i]);
		EXPECT_EQ(rows[i].cfa_off, jit_call_row_cfas[i]);
	}
	sframe_jit_cfi_free(cfi);
	/* Elsewhere, the same bytes put the code elsewhere by as much. */
	ASSERT_EQ(sframe_jit_cfi_convert_eh_frame(copy, im.eh_frame_size,
						  (uintptr_t)im.eh_frame +
						  0x10000, &cfi), 1);
	ASSERT_EQ(sframe_jit_cfi_func(cfi, 0, &f, NULL), 0);
	EXPECT_EQ(f.start, im.text + 0x10000);
	sframe_jit_cfi_free(cfi);
	free(copy);
	ASSERT_EQ(mprotect(im.map, im.map_size, PROT_READ), 0);
	jit_image_free(&im);
}

TEST(eh_frame_convert_refuses_bad_arguments, T_MEM)
{
	static const uint32_t word[2] = { 4 };
	struct sframe_jit_cfi *cfi = NULL;

	EXPECT_EQ(sframe_jit_cfi_convert_eh_frame(NULL, 8, 0x1000, &cfi),
		  -EINVAL);
	EXPECT_EQ(sframe_jit_cfi_convert_eh_frame(word, 0, 0x1000, &cfi),
		  -EINVAL);
	EXPECT_EQ(sframe_jit_cfi_convert_eh_frame(word, 8, 0x1000, NULL),
		  -EINVAL);
	EXPECT(!cfi);
}
