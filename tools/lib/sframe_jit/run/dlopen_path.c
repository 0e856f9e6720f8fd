// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlopen() on behalf of its caller.  The loader searches a bare file
 * name ("libplugin.so") in the run paths of the object that called
 * dlopen(), which it learns from the return address.  Interposed, the
 * loader's dlopen() is called from libsframe_run.so, whose run path is
 * empty: a library that loads its plugins through its own DT_RUNPATH
 * (or DT_RPATH) found none under sframe-run.
 *
 * So where the caller has a run path, its search is made here, in the
 * loader's order (ld.so(8)), and the loader is given the path found:
 *
 *  - an object already loaded under that name is the loader's answer
 *    (RTLD_NOLOAD), as it would be before any search;
 *  - with DT_RUNPATH: LD_LIBRARY_PATH, then DT_RUNPATH;
 *  - with DT_RPATH alone: DT_RPATH;
 *  - then the loader's own search of the name (the executable's
 *    DT_RPATH, LD_LIBRARY_PATH, the cache, the default directories).
 *
 * An entry with a token other than $ORIGIN ($LIB, $PLATFORM) is left to
 * that last search.  LD_LIBRARY_PATH is the value the program started
 * with, as the loader keeps it, whatever the program set since.  A
 * caller without a run path, a name with a slash, and dlopen(NULL) go
 * to the loader unchanged.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "sframe_run.h"

typedef void *(*dlopen_fn)(const char *file, int mode);

/* LD_LIBRARY_PATH at start, unless the process runs set-user-ID. */
static const char *start_llp;

__attribute__((constructor)) static void start_llp_save(void)
{
	const char *v = getenv("LD_LIBRARY_PATH");

	if (v && *v && !getauxval(AT_SECURE))
		start_llp = strdup(v);
}

/* The caller's DT_RUNPATH, or its DT_RPATH with *@runpath false. */
static const char *run_path(const struct link_map *lm, bool *runpath)
{
	bool has_rpath = false, has_runpath = false;
	uint64_t rpath = 0, rnpath = 0;
	const char *strtab = NULL;
	const Elf64_Dyn *d;

	for (d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB) {
			strtab = (const char *)d->d_un.d_ptr;
		} else if (d->d_tag == DT_RPATH) {
			has_rpath = true;
			rpath = d->d_un.d_val;
		} else if (d->d_tag == DT_RUNPATH) {
			has_runpath = true;
			rnpath = d->d_un.d_val;
		}
	}
	*runpath = has_runpath;
	if (!strtab || (!has_runpath && !has_rpath))
		return NULL;
	return strtab + (has_runpath ? rnpath : rpath);
}

/* The directory of the caller's file, for $ORIGIN. */
static bool origin_of(const struct link_map *lm, char *buf, size_t size)
{
	char *slash;
	ssize_t n;

	if (lm->l_name && lm->l_name[0]) {
		if ((size_t)snprintf(buf, size, "%s", lm->l_name) >= size)
			return false;
	} else {
		/* The executable, whose l_name is empty. */
		n = readlink("/proc/self/exe", buf, size - 1);
		if (n <= 0)
			return false;
		buf[n] = '\0';
	}
	slash = strrchr(buf, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

/*
 * @dir with $ORIGIN (or ${ORIGIN}) replaced, then "/" @file, into @out;
 * false for any other token, or if it does not fit.
 */
static bool expand(const char *dir, size_t len, const char *origin,
		   const char *file, char *out, size_t size)
{
	size_t o = 0, tok, n;
	const char *v;

	while (len) {
		tok = 0;
		if (len >= 7 && !strncmp(dir, "$ORIGIN", 7))
			tok = 7;
		else if (len >= 9 && !strncmp(dir, "${ORIGIN}", 9))
			tok = 9;
		if ((*dir == '$' && !tok) || (tok && !origin))
			return false;
		v = tok ? origin : dir;
		n = tok ? strlen(origin) : 1;
		if (o + n >= size)
			return false;
		memcpy(out + o, v, n);
		o += n;
		dir += tok ? tok : 1;
		len -= tok ? tok : 1;
	}
	return (size_t)snprintf(out + o, size - o, "/%s", file) < size - o;
}

/*
 * The first directory of @path (separated by ':' or ';', as ld.so takes
 * them) that holds @file, loaded.  A failed attempt's error is cleared,
 * so that dlerror() after a dlopen() that succeeds says nothing.
 */
static void *search(const char *path, const char *origin, const char *file,
		    int mode, dlopen_fn real)
{
	char name[PATH_MAX];
	const char *end;
	size_t len;
	void *h;

	for (; path && *path; path = *end ? end + 1 : end) {
		len = strcspn(path, ":;");
		end = path + len;
		/* An empty entry is the working directory, as for ld.so. */
		if (!len) {
			if (snprintf(name, sizeof(name), "./%s", file) >=
			    (int)sizeof(name))
				continue;
		} else if (!expand(path, len, origin, file, name,
				   sizeof(name))) {
			continue;
		}
		if (access(name, F_OK))
			continue;
		/* A file the loader rejects (another class) is passed over. */
		h = real(name, mode);
		if (h)
			return h;
		dlerror();
	}
	return NULL;
}

/**
 * sframe_run__dlopen_as() - dlopen() as if called from @caller
 * @caller: the return address of the program's call to dlopen().
 * @file: as for dlopen().
 * @mode: likewise.
 * @real: the loader's dlopen().
 *
 * Return: what the loader's dlopen() returned to the caller's search.
 */
void *sframe_run__dlopen_as(const void *caller, const char *file, int mode,
			    void *(*real)(const char *file, int mode))
{
	char origin[PATH_MAX] = "";
	struct link_map *lm = NULL;
	const char *rp;
	bool runpath;
	Dl_info info;
	void *h;

	if (!file || strchr(file, '/') ||
	    !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return real(file, mode);
	rp = run_path(lm, &runpath);
	if (!rp)
		return real(file, mode);
	h = real(file, mode | RTLD_NOLOAD);
	if (h)
		return h;
	dlerror();
	if (!origin_of(lm, origin, sizeof(origin)))
		origin[0] = '\0';
	h = NULL;
	if (runpath)
		h = search(start_llp, NULL, file, mode, real);
	if (!h)
		h = search(rp, origin[0] ? origin : NULL, file, mode, real);
	return h ? h : real(file, mode);
}
