// SPDX-License-Identifier: GPL-2.0
/*
 * The program tag of an arena program, as the stock kernel computes it.
 *
 * The stock verifier tags the program it is given, which for an arena
 * program is the lowered one: its tag (bpftool's "tag", the kallsyms name
 * bpf_prog_<tag>_<name>) would differ from 6.12's and change with the
 * arena's address (arena globals are lowered to constants).  The module
 * tags the user's instructions instead, with bpf_prog_calc_tag()'s
 * algorithm (kernel/bpf/core.c, the same in 6.1 and 6.12): SHA-1 over the
 * instructions with the imm of every map ld_imm64 (MAP_FD, MAP_VALUE)
 * zeroed, since fds are not stable; the hooks put it into the program
 * before it gets an id or a symbol (prog_hooks.c).
 */
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/vmalloc.h>
#include <crypto/sha1.h>

#include "insn.h"
#include "prog_tag.h"

int arena_prog_tag(const struct bpf_insn *insns, u32 len, u8 tag[BPF_TAG_SIZE])
{
	const u32 bits_offset = SHA1_BLOCK_SIZE - sizeof(__be64);
	u32 psize = len * sizeof(struct bpf_insn);
	u32 raw_size = round_up(psize + sizeof(__be64) + 1, SHA1_BLOCK_SIZE);
	u32 digest[SHA1_DIGEST_WORDS], ws[SHA1_WORKSPACE_WORDS];
	u32 i, bsize, blocks;
	struct bpf_insn *dst;
	bool was_ld_map;
	__be32 result[SHA1_DIGEST_WORDS];
	__be64 *bits;
	u8 *raw, *todo;

	raw = vmalloc(raw_size);
	if (!raw)
		return -ENOMEM;
	sha1_init(digest);
	memset(ws, 0, sizeof(ws));
	dst = (void *)raw;
	for (i = 0, was_ld_map = false; i < len; i++) {
		dst[i] = insns[i];
		if (!was_ld_map && bpfa_is_ldimm64(&dst[i]) &&
		    (dst[i].src_reg == BPF_PSEUDO_MAP_FD ||
		     dst[i].src_reg == BPF_PSEUDO_MAP_VALUE)) {
			was_ld_map = true;
			dst[i].imm = 0;
		} else if (was_ld_map && dst[i].code == 0 && dst[i].dst_reg == 0 &&
			   dst[i].src_reg == 0 && dst[i].off == 0) {
			was_ld_map = false;
			dst[i].imm = 0;
		} else {
			was_ld_map = false;
		}
	}
	memset(&raw[psize], 0, raw_size - psize);
	raw[psize++] = 0x80;
	bsize = round_up(psize, SHA1_BLOCK_SIZE);
	blocks = bsize / SHA1_BLOCK_SIZE;
	todo = raw;
	if (bsize - psize >= sizeof(__be64)) {
		bits = (__be64 *)(todo + bsize - sizeof(__be64));
	} else {
		bits = (__be64 *)(todo + bsize + bits_offset);
		blocks++;
	}
	*bits = cpu_to_be64((u64)(psize - 1) << 3);
	while (blocks--) {
		sha1_transform(digest, todo, ws);
		todo += SHA1_BLOCK_SIZE;
	}
	for (i = 0; i < SHA1_DIGEST_WORDS; i++)
		result[i] = cpu_to_be32(digest[i]);
	memcpy(tag, result, BPF_TAG_SIZE);
	vfree(raw);
	return 0;
}
