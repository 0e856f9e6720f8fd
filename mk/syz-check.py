#!/usr/bin/env python3
"""Check the syzkaller description of sframe_jit_open(2),
sframe_register(2), sframe_unregister(2), process_sframe_register(2) and
process_sframe_unregister(2) against the uapi headers, so that the two
cannot drift apart.

    mk/syz-check.py [--header H] [--jit-header J] [--desc D] [--const C]
                    [--sframe-h S]
    mk/syz-check.py --write-const     # regenerate the .const file
    mk/syz-check.py --self-test       # the check, then mutated copies

The headers' facts come from the compiler: a small C program built
against include/uapi/linux/sframe.h and sframe_jit.h prints the value of
every constant they define (macros and enumerators) and sizeof/offsetof
of every struct and field.  The system calls come from the x86_64 table
of patches/sframe-syscall.patch.  The description is parsed here.  The
check fails on:
  - a system call of the table (sframe_*) without its plain call in the
    description, or an sframe_* call the table lacks;
  - a flag set (enum E -> set E; "/* struct X.field */" macros, or
    macros after a comment that starts "struct X.field:" -> set
    X_field) with a missing or extra value;
  - a versioned structure whose size is not its SIZE_VER0 constant;
  - a header constant the description never names, or an SFRAME_* name
    the header does not define;
  - a .const value that differs from the compiler's, a constant the
    description uses that the .const file lacks, or one it has in excess;
  - a struct of the header whose description misses a field, has an
    extra one, orders them differently, or gives one a different size or
    offset, or the struct a different size;
  - the layout of the one-function registry image and of the SFrame
    section header not matching the kernel's.
Every failure is printed; the exit status is 1 if there is any.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
HEADER = os.path.join(TOP, "include/uapi/linux/sframe.h")
JIT_HEADER = os.path.join(TOP, "include/uapi/linux/sframe_jit.h")
DESC = os.path.join(TOP, "syzkaller/sys/linux/sframe.txt")
CONST = DESC + ".const"
SFRAME_H = os.path.join(TOP, "kernel/unwind/sframe_sec.h")
SYSCALL_PATCH = os.path.join(TOP, "patches/sframe-syscall.patch")

# The x86_64 kernel's page size and SMP_CACHE_BYTES, which place the
# descriptor and frame-row areas of a registry (sframe_jit_alloc()).
PAGE_SIZE = 4096
SMP_CACHE_BYTES = 64

# Constants the description uses that are not the header's, with where
# their value comes from (host headers of the amd64 build machine).
HOST_CONSTS = {
    "AT_FDCWD": "<fcntl.h>",
    "O_RDWR": "<fcntl.h>",
    "SEEK_END": "<stdio.h>",
    "MAP_SHARED": "<sys/mman.h>",
    "MAP_PRIVATE": "<sys/mman.h>",
    "MAP_FIXED": "<sys/mman.h>",
}

# The structures whose first published size a constant names.
VERSIONED = {
    "sframe_setup": "SFRAME_SETUP_SIZE_VER0",
    "sframe_jit_args": "SFRAME_JIT_ARGS_SIZE_VER0",
}


class Failures:
    def __init__(self):
        self.items = []

    def add(self, msg):
        self.items.append(msg)


# ---- the header ---------------------------------------------------------

def strip_c_comments(text):
    return re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)


def parse_header(paths):
    """Enums, macro groups, macros and structs of the uapi headers."""
    raw = "\n".join(open(p).read() for p in paths)
    enums = {}
    for m in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\}\s*;",
                         strip_c_comments(raw), re.S):
        names = re.findall(r"^\s*([A-Z][A-Z0-9_]*)\s*(?:=[^,\n]*)?,?\s*$",
                           m.group(2), re.M)
        enums[m.group(1)] = names
    macros = []
    groups = {}
    group = None
    for line in raw.splitlines():
        g = re.match(r"/\* struct (\w+)\.(\w+) \*/$", line.strip()) or \
            re.match(r"/?\*\s*struct (\w+)\.(\w+):", line.strip())
        if g:
            group = "%s_%s" % (g.group(1), g.group(2))
            groups.setdefault(group, [])
            continue
        if not line.strip():
            group = None
            continue
        d = re.match(r"#define\s+([A-Z][A-Z0-9_]*)\s+\S", line)
        if d:
            macros.append(d.group(1))
            if group:
                groups[group].append(d.group(1))
    structs = {}
    for m in re.finditer(r"struct\s+(\w+)\s*\{(.*?)\}\s*;",
                         strip_c_comments(raw), re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            f = re.match(r"(.*?)(\w+)\s*(\[[^\]]*\])?$", decl, re.S)
            fields.append(f.group(2))
        structs[m.group(1)] = fields
    groups = dict((g, m) for g, m in groups.items() if m)
    return enums, groups, macros, structs


def compile_facts(headers, enums, macros, structs, sframe_h):
    """Values, sizes and offsets, as the compiler sees them."""
    names = [n for e in enums.values() for n in e] + macros
    lines = ["#include <stdio.h>", "#include <stddef.h>",
             "#include <fcntl.h>", "#include <sys/mman.h>",
             "#include <sys/syscall.h>"]
    lines += ['#include "%s"' % h for h in headers]
    lines += ["int main(void)", "{"]
    for n in names:
        lines.append('\tprintf("const %s %%llu\\n", '
                     '(unsigned long long)(%s));' % (n, n))
    for n in HOST_CONSTS:
        lines.append('\tprintf("const %s %%llu\\n", '
                     '(unsigned long long)(%s));' % (n, n))
    for s, fields in structs.items():
        lines.append('\tprintf("size %s %%zu\\n", sizeof(struct %s));'
                     % (s, s))
        for f in fields:
            lines.append('\tprintf("field %s %s %%zu %%zu\\n", '
                         'offsetof(struct %s, %s), '
                         'sizeof(((struct %s *)0)->%s));'
                         % (s, f, s, f, s, f))
    lines += ["\treturn 0;", "}"]
    tmp = tempfile.mkdtemp(prefix="syz-check.")
    try:
        src = os.path.join(tmp, "facts.c")
        exe = os.path.join(tmp, "facts")
        with open(src, "w") as fp:
            fp.write("\n".join(lines) + "\n")
        r = subprocess.run(["gcc", "-Wall", "-Werror", "-o", exe, src],
                           capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write(r.stderr)
            raise SystemExit("syz-check: the C program over %s does not "
                             "build" % " and ".join(headers))
        out = subprocess.run([exe], capture_output=True, text=True,
                             check=True).stdout
    finally:
        shutil.rmtree(tmp)
    values, sizes, fields = {}, {}, {}
    for line in out.splitlines():
        w = line.split()
        if w[0] == "const":
            values[w[1]] = int(w[2])
        elif w[0] == "size":
            sizes[w[1]] = int(w[2])
        else:
            fields.setdefault(w[1], []).append((w[2], int(w[3]), int(w[4])))
    values.update(syscall_numbers())
    kernel_defs = {}
    for m in re.finditer(r"^#define\s+(SFRAME_\w+)\s+(0x[0-9a-fA-F]+|\d+)\s*$",
                         open(sframe_h).read(), re.M):
        kernel_defs[m.group(1)] = int(m.group(2), 0)
    return values, sizes, fields, kernel_defs


def our_syscalls():
    """The sframe_* system calls of the patched x86_64 table: name -> nr."""
    patch = open(SYSCALL_PATCH).read()
    # The x86_64 table's hunk: other tables give other numbers (alpha's).
    x86 = re.search(r"^diff --git a/arch/x86/entry/syscalls/syscall_64\.tbl"
                    r".*?(?=^diff --git |\Z)", patch, re.M | re.S)
    calls = dict((m.group(2), int(m.group(1))) for m in re.finditer(
        r"^\+(\d+)\s+common\s+((?:process_)?sframe_\w+)\s",
        x86.group(0) if x86 else "",
        re.M))
    if not calls:
        raise SystemExit("syz-check: no sframe_* line in the x86_64 table "
                         "of %s" % SYSCALL_PATCH)
    return calls


def syscall_numbers():
    """__NR_* of x86_64: ours from the patched table, the rest the host's."""
    nr = dict(("__NR_" + n, v) for n, v in our_syscalls().items())
    names = ["openat", "pwrite64", "munmap", "mremap", "mprotect", "madvise",
             "mmap", "lseek"]
    prog = "#include <sys/syscall.h>\n" + "".join(
        "N_%s=__NR_%s\n" % (n, n) for n in names)
    out = subprocess.run(["gcc", "-E", "-P", "-"], input=prog,
                         capture_output=True, text=True, check=True).stdout
    for m in re.finditer(r"N_(\w+)=(\d+)", out):
        nr["__NR_" + m.group(1)] = int(m.group(2))
    return nr


# ---- the description -----------------------------------------------------

INT_SIZE = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "intptr": 8,
            "vma": 8, "vma64": 8, "ptr64": 8, "fileoff": 8, "fd": 4,
            # syzkaller's own resource, made by pidfd_open() and clone3()
            # in its sys/linux/ descriptions.
            "fd_pidfd": 4}

# Resources of the description: name -> the type they are made of.
RESOURCES = {}


def parse_desc(path):
    text = open(path).read()
    body = "\n".join(re.sub(r"#.*", "", line) for line in text.splitlines())
    structs, attrs, sets, calls = {}, {}, {}, []
    for m in re.finditer(r"^resource\s+(\w+)\[(\w+)\]", body, re.M):
        RESOURCES[m.group(1)] = m.group(2)
    for m in re.finditer(r"^(\w+)\s*\{\n(.*?)^\}\s*(\[[^\]]*\])?", body,
                         re.S | re.M):
        fields = []
        for line in m.group(2).splitlines():
            w = line.split(None, 1)
            if w:
                fields.append((w[0], w[1].strip()))
        structs[m.group(1)] = fields
        attrs[m.group(1)] = m.group(3) or ""
    for m in re.finditer(r"^(\w+)\s*=\s*(.+)$", body, re.M):
        sets[m.group(1)] = [v.strip() for v in m.group(2).split(",")]
    for m in re.finditer(r"^(\w+)(\$\w+)?\((.*)\)", body, re.M):
        calls.append((m.group(1), (m.group(2) or "")[1:], m.group(3)))
    # Names after "$" are call variants, not constants.
    idents = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b",
                            re.sub(r"\$\w+", "", body)))
    return structs, attrs, sets, calls, idents


def split_args(s):
    """Split "a, b[c, d], e" at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def type_layout(t, structs, attrs):
    """(size, align) of a description type; size None if variable."""
    m = re.match(r"(\w+)(?:\[(.*)\])?$", t)
    name, args = m.group(1), split_args(m.group(2) or "")
    while name in RESOURCES:
        name = RESOURCES[name]
    if name in INT_SIZE:
        return INT_SIZE[name], INT_SIZE[name]
    if name in ("const", "flags", "len", "bytesize", "bitsize"):
        base = args[1] if len(args) > 1 else "intptr"
        return INT_SIZE[base], INT_SIZE[base]
    if name == "array":
        size, align = type_layout(args[0], structs, attrs)
        if len(args) < 2 or ":" in args[1] or size is None:
            return None, align
        return size * int(args[1], 0), align
    if name in structs:
        return struct_layout(name, structs, attrs)[:2]
    raise ValueError("unknown type %s" % t)


def struct_layout(name, structs, attrs):
    """(size, align, [(field, offset, size)]) with syzkaller's padding."""
    packed = "packed" in attrs.get(name, "")
    off, align, out = 0, 1, []
    for fname, ftype in structs[name]:
        size, falign = type_layout(ftype, structs, attrs)
        if packed:
            falign = 1
        if off is not None:
            off = (off + falign - 1) // falign * falign
        out.append((fname, off, size))
        align = max(align, falign)
        off = None if size is None or off is None else off + size
    if off is not None:
        off = (off + align - 1) // align * align
    return off, align, out


def parse_const(path):
    vals = {}
    for line in open(path).read().splitlines():
        if line.startswith("#") or line.startswith("arches") or not line:
            continue
        k, v = [x.strip() for x in line.split("=", 1)]
        vals[k] = int(v.split(",")[0].split(":")[-1])
    return vals


# ---- the checks -------------------------------------------------------------

def check(headers, desc, const, sframe_h, fail):
    enums, groups, macros, hstructs = parse_header(headers)
    values, sizes, cfields, kdefs = compile_facts(headers, enums, macros,
                                                  hstructs, sframe_h)
    dstructs, dattrs, sets, calls, idents = parse_desc(desc)
    header_consts = set(n for e in enums.values() for n in e) | \
        set(m for m in macros if not m.startswith("_"))

    # System calls: each of the table's has its plain call, described
    # with no variant, and no sframe_* call is one the table lacks.
    table = our_syscalls()
    plain = set(name for name, variant, _ in calls if not variant)
    for name in sorted(table):
        if name not in plain:
            fail.add("system call %s has no plain %s call in the "
                     "description" % (name, name))
    for name in sorted(set(n for n, _, _ in calls if n.startswith("sframe_"))):
        if name not in table:
            fail.add("call %s is not a system call of the kernel's table"
                     % name)

    # Versioned structures: the size constant names the structure's size.
    for s, c in sorted(VERSIONED.items()):
        if s in sizes and c in values and sizes[s] != values[c]:
            fail.add("struct %s: %d bytes, %s is %d"
                     % (s, sizes[s], c, values[c]))
        elif s not in sizes or c not in values:
            fail.add("header: no struct %s or no %s" % (s, c))

    # Flag sets: enums and "/* struct X.field */" macro groups.
    wanted = dict(enums)
    wanted.update(groups)
    for setname, members in sorted(wanted.items()):
        if setname not in sets:
            fail.add("flag set %s (from the header) is missing" % setname)
            continue
        have = set(sets[setname])
        for v in sorted(set(members) - have):
            fail.add("flag set %s lacks %s" % (setname, v))
        for v in sorted(have - set(members)):
            fail.add("flag set %s has %s, which is not in the header's %s"
                     % (setname, v, setname))

    # Every header constant named; no SFRAME_* name the header lacks.
    for n in sorted(header_consts - idents):
        fail.add("constant %s of the header is not in the description" % n)
    for n in sorted(i for i in idents if i.startswith("SFRAME_")):
        if n not in header_consts:
            fail.add("constant %s is not defined by the header" % n)

    # The .const file: exactly the constants used, with the right values.
    used = set(i for i in idents
               if i in header_consts or i in HOST_CONSTS)
    used |= set("__NR_" + name for name, _, _ in calls)
    have = parse_const(const)
    for n in sorted(used):
        if n not in have:
            fail.add("%s: %s is missing" % (os.path.basename(const), n))
        elif n not in values:
            fail.add("%s: no reference value for %s" % (os.path.basename(const), n))
        elif have[n] != values[n]:
            fail.add("%s: %s = %d, the header says %d"
                     % (os.path.basename(const), n, have[n], values[n]))
    for n in sorted(set(have) - used):
        fail.add("%s: %s is not used by the description"
                 % (os.path.basename(const), n))

    # Structs of the header: fields, order, sizes, offsets, total size.
    for s, hf in sorted(hstructs.items()):
        if s not in dstructs:
            fail.add("struct %s is missing from the description" % s)
            continue
        dnames = [f for f, _ in dstructs[s]]
        for f in hf:
            if f not in dnames:
                fail.add("struct %s: field %s is missing" % (s, f))
        for f in dnames:
            if f not in hf:
                fail.add("struct %s: field %s is not in the header" % (s, f))
        common = [f for f in dnames if f in hf]
        if common != [f for f in hf if f in dnames]:
            fail.add("struct %s: fields in another order than the header's "
                     "(%s)" % (s, ", ".join(common)))
        try:
            dsize, _, dlay = struct_layout(s, dstructs, dattrs)
        except ValueError as e:
            fail.add("struct %s: %s" % (s, e))
            continue
        dmap = dict((f, (o, z)) for f, o, z in dlay)
        for f, off, size in cfields.get(s, []):
            if f not in dmap:
                continue
            if dmap[f][1] != size:
                fail.add("struct %s: field %s has size %s, the header's %d"
                         % (s, f, dmap[f][1], size))
            elif dmap[f][0] != off:
                fail.add("struct %s: field %s at offset %s, the header's "
                         "at %d" % (s, f, dmap[f][0], off))
        if dsize != sizes[s]:
            fail.add("struct %s: size %s, the header's %d"
                     % (s, dsize, sizes[s]))

    check_image(dstructs, dattrs, sizes, fail)
    check_section(dstructs, dattrs, kdefs, fail)


def check_image(dstructs, dattrs, sizes, fail):
    """The one-function registry image places the areas as the kernel."""
    if "sframe_jit_image1" not in dstructs:
        fail.add("struct sframe_jit_image1 is missing")
        return
    _, _, lay = struct_layout("sframe_jit_image1", dstructs, dattrs)
    off = dict((f, o) for f, o, _ in lay)
    fde = PAGE_SIZE
    fre = (PAGE_SIZE + sizes["sframe_jit_fde"] + SMP_CACHE_BYTES - 1) \
        // SMP_CACHE_BYTES * SMP_CACHE_BYTES
    for f, want in (("header", 0), ("fde", fde), ("fres", fre)):
        if off.get(f) != want:
            fail.add("struct sframe_jit_image1: %s at offset %s, the "
                     "registry's at %d" % (f, off.get(f), want))
    check_cimage(dstructs, dattrs, sizes, fail)


def cache_align(x):
    return (x + SMP_CACHE_BYTES - 1) // SMP_CACHE_BYTES * SMP_CACHE_BYTES


def check_cimage(dstructs, dattrs, sizes, fail):
    """The compact one-function image: 16 rows, then the rule area."""
    if "sframe_jit_cimage1" not in dstructs:
        fail.add("struct sframe_jit_cimage1 is missing")
        return
    _, _, lay = struct_layout("sframe_jit_cimage1", dstructs, dattrs)
    off = dict((f, o) for f, o, _ in lay)
    fre = cache_align(PAGE_SIZE + sizes["sframe_jit_cfde"])
    rules = cache_align(fre + 16 * sizes["sframe_jit_cfre"])
    for f, want in (("header", 0), ("fde", PAGE_SIZE), ("fres", fre),
                    ("rules", rules)):
        if off.get(f) != want:
            fail.add("struct sframe_jit_cimage1: %s at offset %s, the "
                     "registry's at %d" % (f, off.get(f), want))


def check_section(dstructs, dattrs, kdefs, fail):
    """The ELF SFrame header and descriptor sizes of kernel/unwind/sframe_sec.h."""
    if "sframe_section" not in dstructs:
        fail.add("struct sframe_section is missing")
        return
    _, _, lay = struct_layout("sframe_section", dstructs, dattrs)
    off = dict((f, o) for f, o, _ in lay)
    if off.get("fdes") != kdefs.get("SFRAME_HDR_SIZE"):
        fail.add("struct sframe_section: header of %s bytes, the kernel's "
                 "SFRAME_HDR_SIZE is %s" % (off.get("fdes"),
                                            kdefs.get("SFRAME_HDR_SIZE")))
    size = struct_layout("sframe_section_fde", dstructs, dattrs)[0]
    if size != kdefs.get("SFRAME_V2_FDE_SIZE"):
        fail.add("struct sframe_section_fde: %s bytes, the kernel's "
                 "SFRAME_V2_FDE_SIZE is %s"
                 % (size, kdefs.get("SFRAME_V2_FDE_SIZE")))
    fields = dict(dstructs["sframe_section"])
    for f, k in (("magic", "SFRAME_MAGIC"),
                 ("abi_arch", "SFRAME_ABI_AMD64_ENDIAN_LITTLE")):
        m = re.match(r"const\[(\w+)", fields.get(f, ""))
        if not m or int(m.group(1), 0) != kdefs.get(k):
            fail.add("struct sframe_section: %s is not const %s (%s)"
                     % (f, k, kdefs.get(k)))


def write_const(headers, desc, const, sframe_h):
    enums, groups, macros, hstructs = parse_header(headers)
    values = compile_facts(headers, enums, macros, hstructs, sframe_h)[0]
    _, _, _, calls, idents = parse_desc(desc)
    header_consts = set(n for e in enums.values() for n in e) | set(macros)
    used = set(i for i in idents if i in header_consts or i in HOST_CONSTS)
    used |= set("__NR_" + name for name, _, _ in calls)
    with open(const, "w") as fp:
        fp.write("# Generated by mk/syz-check.py --write-const from "
                 "include/uapi/linux/sframe.h and sframe_jit.h.\n")
        fp.write("arches = amd64\n")
        for n in sorted(used):
            fp.write("%s = %d\n" % (n, values[n]))
    print("wrote %s (%d constants)" % (const, len(used)))


# ---- self-test -----------------------------------------------------------------

# (what, file, old, new, text the failure must contain)
MUTATIONS = [
    ("a system call's plain call removed", "desc",
     "sframe_unregister(setup ptr[in, sframe_setup_unregister]",
     "sframe_deregister(setup ptr[in, sframe_setup_unregister]",
     "system call sframe_unregister has no plain sframe_unregister call"),
    ("a call the kernel's table lacks", "desc",
     "sframe_register$sizes(setup", "sframe_register_elf$sizes(setup",
     "call sframe_register_elf is not a system call of the kernel's table"),
    ("a registry flag dropped from its set", "desc",
     ", SFRAME_JIT_REPLACE, SFRAME_JIT_COPY\n", ", SFRAME_JIT_REPLACE\n",
     "flag set sframe_jit_args_flags lacks SFRAME_JIT_COPY"),
    ("a registry flag the header lacks", "desc",
     ", SFRAME_JIT_REPLACE, SFRAME_JIT_COPY\n",
     ", SFRAME_JIT_REPLACE, SFRAME_JIT_COPY, SFRAME_JIT_FORK\n",
     "flag set sframe_jit_args_flags has SFRAME_JIT_FORK"),
    ("a new registry flag in the header", "jit_header",
     "#define SFRAME_JIT_COPY\t\t0x8\n",
     "#define SFRAME_JIT_COPY\t\t0x8\n/*\n * struct sframe_jit_args.flags: "
     "pinned.\n */\n#define SFRAME_JIT_PIN\t\t0x10\n",
     "flag set sframe_jit_args_flags lacks SFRAME_JIT_PIN"),
    ("a frame-row flag dropped", "desc",
     "sframe_jit_fre_flags = SFRAME_JIT_FRE_FP_SAVED, "
     "SFRAME_JIT_FRE_RA_UNDEFINED",
     "sframe_jit_fre_flags = SFRAME_JIT_FRE_FP_SAVED",
     "flag set sframe_jit_fre_flags lacks SFRAME_JIT_FRE_RA_UNDEFINED"),
    ("a new descriptor flag in the header", "jit_header",
     "#define SFRAME_JIT_FDE_TOMBSTONE\t0x0001\t/* function reclaimed */\n",
     "#define SFRAME_JIT_FDE_TOMBSTONE\t0x0001\t/* function reclaimed */\n"
     "#define SFRAME_JIT_FDE_COLD\t0x0002\n",
     "flag set sframe_jit_fde_flags lacks SFRAME_JIT_FDE_COLD"),
    ("a constant's value changed in the .const file", "const",
     "SFRAME_JIT_MAX_FDES = 4194304", "SFRAME_JIT_MAX_FDES = 4194303",
     "SFRAME_JIT_MAX_FDES = 4194303, the header says 4194304"),
    ("a system call's number changed in the .const file", "const",
     "__NR_sframe_jit_open = 472", "__NR_sframe_jit_open = 473",
     "__NR_sframe_jit_open = 473, the header says 472"),
    ("a constant's value changed in the header", "jit_header",
     "#define SFRAME_JIT_MAGIC\t0x54494a53",
     "#define SFRAME_JIT_MAGIC\t0x54494a54",
     "SFRAME_JIT_MAGIC = 1414089299, the header says 1414089300"),
    ("a constant missing from the .const file", "const",
     "SFRAME_MAX_SIZE = 67108864\n", "",
     "sframe.txt.const: SFRAME_MAX_SIZE is missing"),
    ("a header constant the description never names", "jit_header",
     "#define SFRAME_JIT_VERSION\t1\n",
     "#define SFRAME_JIT_VERSION\t1\n#define SFRAME_JIT_MIN_FDES\t1\n",
     "constant SFRAME_JIT_MIN_FDES of the header is not in the description"),
    ("a loader's constant the description never names", "header",
     "#define SFRAME_SETUP_SIZE_VER0\t32\n",
     "#define SFRAME_SETUP_SIZE_VER0\t32\n#define SFRAME_SETUP_MIN\t16\n",
     "constant SFRAME_SETUP_MIN of the header is not in the description"),
    ("a versioned structure's size constant wrong", "header",
     "#define SFRAME_SETUP_SIZE_VER0\t32\n",
     "#define SFRAME_SETUP_SIZE_VER0\t24\n",
     "struct sframe_setup: 32 bytes, SFRAME_SETUP_SIZE_VER0 is 24"),
    ("a struct field missing", "desc",
     "\tfre_count\tint32[0:17]\n", "",
     "struct sframe_jit_fde: field fre_count is missing"),
    ("the registry arguments' source descriptor missing", "desc",
     "\tsrc_fd\t\tfd_sframe_jit\n", "",
     "struct sframe_jit_args: field src_fd is missing"),
    ("a struct field the header lacks", "desc",
     "\tsframe_size\tflags[sframe_sizes, int64]\n\ttext_start",
     "\tsframe_size\tflags[sframe_sizes, int64]\n\tpad\tint64\n"
     "\ttext_start",
     "struct sframe_setup: field pad is not in the header"),
    ("two fields swapped", "desc",
     "\tstart_off\tint32[0:4096]\n\tcfa_off\t\tint32\n",
     "\tcfa_off\t\tint32\n\tstart_off\tint32[0:4096]\n",
     "struct sframe_jit_fre: fields in another order"),
    ("a field of another size", "desc",
     "\tfde_count\tint32[0:17]\n", "\tfde_count\tint64[0:17]\n",
     "struct sframe_jit_header: field fde_count has size 8, the header's 4"),
    ("a field at another offset", "desc",
     "\ttype\t\tflags[sframe_jit_fde_type, int8]\n\trep_size\tint8\n",
     "\ttype\t\tflags[sframe_jit_fde_type, int8]\n\tgap\tint8\n"
     "\trep_size\tint8\n",
     "struct sframe_jit_fde: field rep_size at offset 24, the header's at 23"),
    ("a field grown in the header", "jit_header",
     "\t__u32 map_size;", "\t__u64 map_size;",
     "struct sframe_jit_header: field map_size has size 4, the header's 8"),
    ("a loader's field grown in the header", "header",
     "\t__u64 text_size;\n};\n\n#define SFRAME_SETUP_SIZE_VER0",
     "\t__u64 text_size;\n\t__u64 flags;\n};\n\n"
     "#define SFRAME_SETUP_SIZE_VER0",
     "struct sframe_setup: field flags is missing"),
    ("an agent's field grown in the header", "header",
     "\t__u64 flags;\n};\n\n#define SFRAME_PROCESS_SETUP_SIZE_VER0",
     "\t__u64 flags;\n\t__u64 pidfd_flags;\n};\n\n"
     "#define SFRAME_PROCESS_SETUP_SIZE_VER0",
     "struct sframe_process_setup: field pidfd_flags is missing"),
    ("the registry image's padding wrong", "desc",
     "\theader_pad\tarray[const[0, int8], 3864]\n\tfde\t\tsframe_jit_fde\n",
     "\theader_pad\tarray[const[0, int8], 3856]\n\tfde\t\tsframe_jit_fde\n",
     "struct sframe_jit_image1: fde at offset 4088, the registry's at 4096"),
    ("the compact registry image's row padding wrong", "desc",
     "\tfde_pad\t\tarray[const[0, int8], 48]",
     "\tfde_pad\t\tarray[const[0, int8], 40]",
     "struct sframe_jit_cimage1: fres at offset 4152, the registry's at 4160"),
    ("the SFrame section header one byte short", "desc",
     "\tauxhdr_len\tconst[0, int8]\n", "",
     "SFRAME_HDR_SIZE is 28"),
]


def self_test(args):
    passed = failed = 0

    def report(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
            print("ok - %s" % what)
        else:
            failed += 1
            print("not ok - %s" % what)

    fail = Failures()
    check([args.header, args.jit_header], args.desc, args.const,
          args.sframe_h, fail)
    for f in fail.items:
        print("  " + f)
    report(not fail.items, "the description matches the headers")

    tmp = tempfile.mkdtemp(prefix="syz-check-self.")
    try:
        for what, which, old, new, expect in MUTATIONS:
            paths = {"header": os.path.join(tmp, "sframe.h"),
                     "jit_header": os.path.join(tmp, "sframe_jit.h"),
                     "desc": os.path.join(tmp, "sframe.txt"),
                     "const": os.path.join(tmp, "sframe.txt.const")}
            shutil.copy(args.header, paths["header"])
            shutil.copy(args.jit_header, paths["jit_header"])
            shutil.copy(args.desc, paths["desc"])
            shutil.copy(args.const, paths["const"])
            text = open(paths[which]).read()
            if text.count(old) != 1:
                print("  the mutation's text is not in %s once: %r"
                      % (which, old))
                report(False, "detects " + what)
                continue
            with open(paths[which], "w") as fp:
                fp.write(text.replace(old, new))
            fail = Failures()
            check([paths["header"], paths["jit_header"]], paths["desc"],
                  paths["const"], args.sframe_h, fail)
            hit = [f for f in fail.items if expect in f]
            if not hit:
                print("  expected a failure with %r; got %r"
                      % (expect, fail.items))
            report(bool(hit), "detects " + what)
    finally:
        shutil.rmtree(tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", default=HEADER)
    ap.add_argument("--jit-header", default=JIT_HEADER)
    ap.add_argument("--desc", default=DESC)
    ap.add_argument("--const", default=CONST)
    ap.add_argument("--sframe-h", default=SFRAME_H)
    ap.add_argument("--write-const", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    headers = [args.header, args.jit_header]
    if args.write_const:
        write_const(headers, args.desc, args.const, args.sframe_h)
        return 0
    if args.self_test:
        return self_test(args)
    fail = Failures()
    check(headers, args.desc, args.const, args.sframe_h, fail)
    for f in fail.items:
        print("syz-check: " + f)
    print("syz-check: %s" % ("%d failures" % len(fail.items)
                             if fail.items else "the description matches"))
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main())
