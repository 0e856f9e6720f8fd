/* SPDX-License-Identifier: GPL-2.0 */
/* What sframe_internal.h takes from the kernel's SHA-2 header: a size. */
#ifndef _SFRAME_SHIM_CRYPTO_SHA2_H
#define _SFRAME_SHIM_CRYPTO_SHA2_H

#define SHA256_DIGEST_SIZE	32

#endif
